/**
 * The world the live-query tests share (docs/reference/live.md): a conformance server with a short heartbeat,
 * two users (alice, bob), optionally an admin (for `/dashboard/metrics`), and streams that are
 * all closed after each test so none outlives it.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { useServer } from './lifecycle.js';
import { write } from './rows.js';
import type { Row, TestServer } from './server.js';
import { openStream, type Frame, type OpenOptions, type StreamClient } from './stream-client.js';
import { signIn, signUp, startServerWithAdmin, type Session } from './users.js';

export interface LiveWorld {
  readonly s: TestServer;
  readonly alice: Session;
  readonly bob: Session;
  /** Bearer headers of the admin (only with `withAdmin`). */
  readonly admin: Record<string, string>;
  /** Opens a stream that is closed after the test. */
  stream(route: string, body: unknown, options?: OpenOptions, server?: TestServer): Promise<StreamClient>;
  /** One write that must succeed; its `data`. */
  write<T = Row>(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<T>;
  createTask(object: Record<string, unknown>): Promise<Row>;
  /** Open subscriptions by the server's own count (needs `withAdmin`). */
  openStreams(): Promise<number>;
}

/** The payload of a frame. */
export const data = (f: Frame) => f.json.data;

/** Server env for stream tests: heartbeats every 500 ms, room for the many-streams tests. */
export const LIVE_ENV = { TABLEBASE_STREAM_HEARTBEAT_MS: '500', TABLEBASE_MAX_STREAMS_PER_IP: '1000' };

const ADMIN = { email: 'streams-admin@example.com', password: 'admin-pass-1234' };

/** Call at the top of a test file. */
export function useLiveWorld(options: { withAdmin?: boolean } = {}): LiveWorld {
  let withAdmin: { server: TestServer; dataDir: string } | undefined;
  const plain = options.withAdmin ? undefined : useServer({ env: LIVE_ENV });
  const opened: StreamClient[] = [];
  const world = {} as { -readonly [K in keyof LiveWorld]: LiveWorld[K] };

  beforeAll(async () => {
    if (options.withAdmin) {
      withAdmin = await startServerWithAdmin(ADMIN, { env: LIVE_ENV });
      world.admin = (await signIn(withAdmin.server, 'admins', ADMIN.email, ADMIN.password)).auth;
    }
    world.s = withAdmin?.server ?? plain!;
    [world.alice, world.bob] = await Promise.all([signUp(world.s, 'alice.streams@example.com'), signUp(world.s, 'bob.streams@example.com')]);
  }, 120_000);
  afterAll(async () => {
    await withAdmin?.server.dispose();
    if (withAdmin) rmSync(withAdmin.dataDir, { recursive: true, force: true });
  });
  afterEach(() => {
    for (const c of opened.splice(0)) c.close();
  });

  world.stream = async (route, body, opts, server) => {
    const c = await openStream((server ?? world.s).base, route, body, opts);
    opened.push(c);
    return c;
  };
  world.write = <T = Row>(method: string, path: string, body: unknown, headers?: Record<string, string>) => write<T>(world.s, method, path, body, headers);
  world.createTask = (object) => world.write('POST', '/db', { table: 'tasks', object });
  world.openStreams = async () => {
    const r = await world.s.get<{ data: { streams: { open: number } } }>('/dashboard/metrics', {}, world.admin);
    expect(r.status, r.text).toBe(200);
    return r.json.data.streams.open;
  };
  return world;
}
