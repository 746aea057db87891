/**
 * Shared set-up of the security suite: a conformance server with an admin (memory is read from
 * /dashboard/metrics), two signed-up users, and small clients for the raw requests an attacker
 * sends (GET with a JSON body, sockets that never read).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { bearer, ROOT, secret, startServer, type Reply, type TestServer } from '../helpers/server.js';

export interface User {
  id: string;
  auth: Record<string, string>;
}

export interface Fixture {
  s: TestServer;
  admin: Record<string, string>;
  dispose(): Promise<void>;
}

export async function signUp(s: TestServer, email: string): Promise<User> {
  const r = await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password: 'a long password' });
  expect(r.status, r.text).toBe(200);
  return { id: r.json.data.user.id, auth: bearer(r.json.data.accessToken) };
}

/** A conformance server whose admin row exists before it starts. */
export async function startFixture(env: Record<string, string> = {}): Promise<Fixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-security-'));
  const all = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), LOG_LEVEL: 'warn', ...env };
  const admin = { email: 'security-admin@example.com', password: 'admin-pass-1234' };
  const args = ['bin/tablebase.mjs', 'admin', 'create', '--project', 'examples/conformance', '--data', dataDir, '--table', 'admins', '--email', admin.email, '--password', admin.password];
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...all }, timeout: 60_000 });
  const s = await startServer({ dataDir, env: all });
  const a = await s.call('POST', '/auth/sign-in', { type: 'signIn', table: 'admins', ...admin });
  expect(a.status, a.text).toBe(200);
  return {
    s,
    admin: bearer(a.json.data.accessToken),
    dispose: async () => {
      await s.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function rssBytes(f: Fixture): Promise<number> {
  const r = await f.s.get('/dashboard/metrics', {}, f.admin);
  expect(r.status, r.text).toBe(200);
  return r.json.data.memory.rssBytes;
}

/** A GET whose JSON travels in the request body (SPEC §2): bodies past the 64 KiB request line. */
export function getWithBody(s: TestServer, path: string, body: unknown): Promise<Reply> {
  return s.call('GET', path, JSON.stringify(body));
}

export async function count(s: TestServer, table: string, where: unknown = {}, headers?: Record<string, string>): Promise<number> {
  const r = await s.get('/db/count', { table, where }, headers);
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}

/** A client that sends a GET and never reads: the server's answer piles up on its side. */
export function nonReadingGet(s: TestServer, path: string): Socket {
  const sock = connect(s.port, '127.0.0.1');
  sock.on('error', () => undefined);
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  sock.pause();
  return sock;
}

/** POSTs a chunked body of `bytes` bytes; answers the status, or the client-side error code. */
export function postChunked(s: TestServer, path: string, bytes: number, contentType = 'application/json'): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(`${s.base}${path}`, { method: 'POST', headers: { 'content-type': contentType, 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? 'error'));
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    req.write('{"table":"tasks","object":{"title":"');
    pump();
  });
}

/** Nothing internal in an answer: SQL, file paths, stack frames (SPEC §2). */
export function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/SQLITE|sqlite|SELECT |INSERT |\bFROM "|\/work\/|\/tmp\/|node_modules|\.ts:\d+|\.js:\d+|\n\s+at /);
}
