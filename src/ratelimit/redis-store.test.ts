/**
 * The Redis store against the real server on 127.0.0.1:6379 when one answers (skipped otherwise,
 * except under CI: with `CI` set an unreachable Redis fails the run instead of skipping it silently),
 * through a tiny RESP client written here so the test needs no package. Keys carry a unique
 * prefix and are deleted afterwards.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { NormalizedPolicy } from './policy.js';
import { parseSlidingLogReply, RedisRateLimitStore, type RedisEvalClient } from './redis-store.js';
import { storeConformance } from './store-conformance.js';

class RespError extends Error {}

/** Minimal RESP2 client: commands are pipelined, replies matched in order. */
class RespClient implements RedisEvalClient {
  #buf = Buffer.alloc(0);
  readonly #pending: { resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  evalCalls = 0;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk) => {
      this.#buf = Buffer.concat([this.#buf, chunk]);
      for (;;) {
        const parsed = this.#parse(0);
        if (parsed === undefined) break;
        this.#buf = this.#buf.subarray(parsed.end);
        const p = this.#pending.shift()!;
        if (parsed.value instanceof RespError) p.reject(parsed.value);
        else p.resolve(parsed.value);
      }
    });
  }

  #parse(at: number): { value: unknown; end: number } | undefined {
    const eol = this.#buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const type = String.fromCharCode(this.#buf[at]!);
    const line = this.#buf.toString('utf8', at + 1, eol);
    if (type === '+') return { value: line, end: eol + 2 };
    if (type === '-') return { value: new RespError(line), end: eol + 2 };
    if (type === ':') return { value: Number(line), end: eol + 2 };
    if (type === '$') {
      const len = Number(line);
      if (len < 0) return { value: null, end: eol + 2 };
      if (this.#buf.length < eol + 2 + len + 2) return undefined;
      return { value: this.#buf.toString('utf8', eol + 2, eol + 2 + len), end: eol + 2 + len + 2 };
    }
    if (type === '*') {
      const n = Number(line);
      const items: unknown[] = [];
      let end = eol + 2;
      for (let i = 0; i < n; i++) {
        const item = this.#parse(end);
        if (item === undefined) return undefined;
        items.push(item.value);
        end = item.end;
      }
      return { value: n < 0 ? null : items, end };
    }
    throw new Error(`unexpected RESP type ${type}`);
  }

  command(...args: (string | number)[]): Promise<unknown> {
    const parts = args.map(String);
    let out = `*${parts.length}\r\n`;
    for (const p of parts) out += `$${Buffer.byteLength(p)}\r\n${p}\r\n`;
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject });
      this.socket.write(out);
    });
  }

  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
    this.evalCalls++;
    return this.command('EVAL', script, numKeys, ...args);
  }

  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
    return this.command('EVALSHA', sha, numKeys, ...args);
  }
}

/** The port is overridable so the CI rule below can be shown failing against a closed port. */
const REDIS_PORT = Number(process.env.TABLEBASE_TEST_REDIS_PORT ?? 6379);
/** Under CI the conformance must run: a missing Redis is a failure, never a skip. */
const REQUIRE_REDIS = (process.env.CI ?? '') !== '' && !/^(0|false)$/i.test(process.env.CI ?? '');

async function tryConnect(): Promise<RespClient | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: REDIS_PORT });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(undefined);
    }, 1000);
    socket.once('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    socket.once('connect', async () => {
      clearTimeout(timer);
      const client = new RespClient(socket);
      try {
        resolve((await client.command('PING')) === 'PONG' ? client : undefined);
      } catch {
        socket.destroy();
        resolve(undefined);
      }
    });
  });
}

const client = await tryConnect();
const prefix = `tb:rl:test:${process.pid}:${Date.now()}:`;

afterAll(async () => {
  if (!client) return;
  let cursor = '0';
  do {
    const [next, keys] = (await client.command('SCAN', cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)) as [string, string[]];
    if (keys.length > 0) await client.command('DEL', ...keys);
    cursor = next;
  } while (cursor !== '0');
  client.socket.destroy();
});

describe('parseSlidingLogReply', () => {
  const policy: NormalizedPolicy = { maxRequests: 3, windowMs: 10_000 };
  it('maps the script reply to a HitResult', () => {
    expect(parseSlidingLogReply([1, 1, 5000, 5000, 5000], policy)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 10, retryAfterSeconds: 0 });
    expect(parseSlidingLogReply([0, 3, 1000, 1000, 5000], policy)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 6, retryAfterSeconds: 6 });
  });
  it('refuses malformed replies', () => {
    expect(() => parseSlidingLogReply(null, policy)).toThrow(/unexpected reply/);
    expect(() => parseSlidingLogReply([1, 2, 3], policy)).toThrow(/unexpected reply/);
    expect(() => parseSlidingLogReply([1, 1, 'x', 1, 1], policy)).toThrow(/unexpected reply/);
  });
});

describe('RedisRateLimitStore with a scripted client', () => {
  const reply = [1, 1, 7, 7, 7];
  it('falls back to EVAL on NOSCRIPT and passes prefixed key, window, max and a unique member', async () => {
    const calls: (string | number)[][] = [];
    const fake: RedisEvalClient = {
      evalsha: async (...args) => {
        calls.push(['EVALSHA', ...args]);
        throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      },
      eval: async (...args) => {
        calls.push(['EVAL', ...args]);
        return reply;
      },
    };
    const store = new RedisRateLimitStore(fake, { prefix: 'p:' });
    expect((await store.hit('k', { maxRequests: 3, windowMs: 10_000 }, 7.9)).allowed).toBe(true);
    await store.hit('k', { maxRequests: 3, windowMs: 10_000 }, 7.9);
    expect(calls.map((c) => c[0])).toEqual(['EVALSHA', 'EVAL', 'EVALSHA', 'EVAL']);
    const [, , numKeys, key, now, windowMs, max, member] = calls[1]!;
    expect([numKeys, key, now, windowMs, max]).toEqual([1, 'p:k', '7', '10000', '3']);
    expect(calls[3]![7]).not.toBe(member);
  });
  it('passes other errors through', async () => {
    const fake: RedisEvalClient = {
      evalsha: async () => {
        throw new Error('connection lost');
      },
      eval: async () => reply,
    };
    await expect(new RedisRateLimitStore(fake).hit('k', { maxRequests: 1, windowMs: 1000 }, 0)).rejects.toThrow('connection lost');
  });
});

if (!client && REQUIRE_REDIS) {
  describe(`RedisRateLimitStore against Redis on 127.0.0.1:${REDIS_PORT}`, () => {
    it('runs under CI (CI is set)', () => {
      throw new Error(`CI is set but no Redis answers on 127.0.0.1:${REDIS_PORT}: the Redis store conformance must run, not be skipped`);
    });
  });
}

describe.skipIf(!client)(`RedisRateLimitStore against Redis on 127.0.0.1:${REDIS_PORT}`, () => {
  // Keys also expire in real time (PEXPIRE = window); windows of a minute or more outlast the test.
  storeConformance('redis', { makeStore: () => new RedisRateLimitStore(client!, { prefix }), minWindowMs: 60_000, rounds: 8 });

  it('stores a sorted set that expires with the window, and counts only admitted requests', async () => {
    const store = new RedisRateLimitStore(client!, { prefix });
    const policy: NormalizedPolicy = { maxRequests: 2, windowMs: 90_000 };
    const now = Date.now();
    for (let i = 0; i < 5; i++) await store.hit('zset', policy, now);
    expect(await client!.command('TYPE', `${prefix}zset`)).toBe('zset');
    expect(await client!.command('ZCARD', `${prefix}zset`)).toBe(2);
    const ttl = (await client!.command('PTTL', `${prefix}zset`)) as number;
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(90_000);
  });

  it('runs the script by SHA once Redis has it cached', async () => {
    const store = new RedisRateLimitStore(client!, { prefix });
    await store.hit('sha', { maxRequests: 5, windowMs: 60_000 }, 1000);
    const before = client!.evalCalls;
    for (let i = 1; i < 4; i++) await store.hit('sha', { maxRequests: 5, windowMs: 60_000 }, 1000 + i);
    expect(client!.evalCalls).toBe(before);
  });

  it('can stamp requests with the Redis clock', async () => {
    const store = new RedisRateLimitStore(client!, { prefix, clock: 'server' });
    const policy: NormalizedPolicy = { maxRequests: 1, windowMs: 60_000 };
    // The passed time is ignored: a far-future "now" does not let the second request through.
    expect((await store.hit('server-clock', policy, 0)).allowed).toBe(true);
    const second = await store.hit('server-clock', policy, 1e15);
    expect(second.allowed).toBe(false);
    expect(second.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(second.retryAfterSeconds).toBeLessThanOrEqual(60);
  });
});
