/**
 * Users and admins for end-to-end tests (docs/reference/auth.md): the one `signUp` / `signIn` every test file
 * uses, unique emails, and an admin row made with the CLI before a server opens its data folder.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { bearer, databaseArgs, ROOT, secret, startServer, type ApiError, type Reply, type SessionData, type StartOptions, type TestServer } from './server.js';

/** The password `signUp` uses unless told otherwise (within docs/reference/auth.md's 8..1024 characters). */
export const PASSWORD = 'a long password';

/** What sign-up, sign-in and refresh answer, plus the two things every test wants from it. */
export interface Session extends SessionData {
  /** `user.id`. */
  id: string;
  /** `{ authorization: 'Bearer <accessToken>' }`. */
  auth: Record<string, string>;
}

/** What sign-up and sign-in answer: `data` on success, `error` otherwise (see `Envelope`). */
export interface SessionAnswer {
  data: SessionData;
  error: ApiError;
}

let seq = 0;
/** An address no other test (or earlier run on the same data) has used. */
export const uniqueEmail = (tag: string) => `${tag}.${Date.now().toString(36)}.${++seq}@example.com`;

export interface SignUpOptions {
  table?: string;
  password?: string;
  /** The sign-up `object` (signUpFields) and any other body field, merged into the body as is. */
  extra?: Record<string, unknown>;
}

/** POST /auth/sign-up, answered as it came: for tests of the route itself. */
export function signUpReply(s: TestServer, email: string, options: SignUpOptions = {}): Promise<Reply<SessionAnswer>> {
  return s.call<SessionAnswer>('POST', '/auth/sign-up', { type: 'signUp', table: options.table ?? 'users', email, password: options.password ?? PASSWORD, ...options.extra });
}

/** POST /auth/sign-in, answered as it came. */
export function signInReply(s: TestServer, table: string, email: string, password = PASSWORD): Promise<Reply<SessionAnswer>> {
  return s.call<SessionAnswer>('POST', '/auth/sign-in', { type: 'signIn', table, email, password });
}

/** A session from a 200 answer; anything else fails the test with the answer's text. */
export function session(r: Reply<SessionAnswer>): Session {
  expect(r.status, r.text).toBe(200);
  const d = r.json.data;
  return { ...d, id: d.user.id, auth: bearer(d.accessToken) };
}

/** A new user, signed up and signed in. */
export const signUp = async (s: TestServer, email: string, options?: SignUpOptions) => session(await signUpReply(s, email, options));

/** A fresh session of an existing user or admin. */
export const signIn = async (s: TestServer, table: string, email: string, password?: string) => session(await signInReply(s, table, email, password));

export interface Credentials {
  email: string;
  password: string;
}

/**
 * `tablebase admin create` into `dataDir` for the conformance project's `admins` table. The row
 * must exist before the server opens the database, hashed with the server's pepper, so `env`
 * must carry the PASSWORD_SECRET the server will get. Answers the CLI's output.
 */
export async function createAdmin(dataDir: string, env: Record<string, string>, admin: Credentials, project = 'examples/conformance'): Promise<string> {
  const args = [
    'bin/tablebase.mjs',
    'admin',
    'create',
    '--project',
    project,
    '--data',
    dataDir,
    ...(await databaseArgs(dataDir)),
    '--table',
    'admins',
    '--email',
    admin.email,
    '--password',
    admin.password,
  ];
  const out = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  return out.stdout + out.stderr;
}

export interface ServerWithAdmin {
  server: TestServer;
  /** The data folder; the caller removes it (a restart may reuse it). */
  dataDir: string;
  /** The admin CLI's output (a test may check that it never echoes a password). */
  cliOutput: string;
}

/** A conformance server whose data folder holds `admin` before it starts. */
export async function startServerWithAdmin(admin: Credentials, options: Omit<StartOptions, 'dataDir'> = {}): Promise<ServerWithAdmin> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-admin-'));
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), ...options.env };
  const cliOutput = await createAdmin(dataDir, env, admin);
  const server = await startServer({ ...options, dataDir, env });
  return { server, dataDir, cliOutput };
}
