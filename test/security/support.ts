/**
 * Shared set-up of the security suite: a conformance server with an admin (memory is read from
 * /dashboard/metrics), two signed-up users, and small clients for the raw requests an attacker
 * sends (GET with a JSON body, sockets that never read).
 */
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';
import type { Reply, TestServer } from '../helpers/server.js';
import { signIn, startServerWithAdmin } from '../helpers/users.js';

export interface Fixture {
  s: TestServer;
  admin: Record<string, string>;
  dispose(): Promise<void>;
}

/** A conformance server whose admin row exists before it starts (memory is read from /dashboard/metrics). */
export async function startFixture(env: Record<string, string> = {}): Promise<Fixture> {
  const credentials = { email: 'security-admin@example.com', password: 'admin-pass-1234' };
  const { server, dataDir } = await startServerWithAdmin(credentials, { env: { LOG_LEVEL: 'warn', ...env } });
  const admin = await signIn(server, 'admins', credentials.email, credentials.password);
  return {
    s: server,
    admin: admin.auth,
    dispose: async () => {
      await server.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function rssBytes(f: Fixture): Promise<number> {
  const r = await f.s.get<{ data: { memory: { rssBytes: number } } }>('/dashboard/metrics', {}, f.admin);
  expect(r.status, r.text).toBe(200);
  return r.json.data.memory.rssBytes;
}

/** A GET whose JSON travels in the request body (docs/reference/conventions.md): bodies past the 64 KiB request line. */
export function getWithBody(s: TestServer, path: string, body: unknown): Promise<Reply> {
  return s.call('GET', path, JSON.stringify(body));
}

export async function count(s: TestServer, table: string, where: unknown = {}, headers?: Record<string, string>): Promise<number> {
  const r = await s.get<{ data: number }>('/db/count', { table, where }, headers);
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

/** Nothing internal in an answer: SQL, file paths, stack frames (docs/reference/conventions.md). */
export function expectNoLeak(text: string): void {
  expect(text).not.toMatch(/SQLITE|sqlite|SELECT |INSERT |\bFROM "|\/work\/|\/tmp\/|node_modules|\.ts:\d+|\.js:\d+|\n\s+at /);
}
