/**
 * One real server per test file (or per `describe`), started before its tests and disposed
 * after, without the `let s; beforeAll; afterAll` block in every file.
 */
import { afterAll, beforeAll } from 'vitest';
import { startServer, type StartOptions, type TestServer } from './server.js';

/**
 * Registers `beforeAll`/`afterAll` in the calling scope and answers a stand-in that forwards to
 * the started server, so tests write `s.call(...)` as with `startServer`'s answer. Using it
 * outside a test (before `beforeAll` ran) throws.
 */
export function useServer(options: StartOptions | (() => Promise<StartOptions>) = {}): TestServer {
  let real: TestServer | undefined;
  beforeAll(async () => {
    real = await startServer(typeof options === 'function' ? await options() : options);
  }, 120_000);
  afterAll(async () => {
    await real?.dispose();
  });
  return new Proxy({} as TestServer, {
    get(_, key) {
      if (!real) throw new Error('useServer: the server is not started yet (use it inside a test or hook)');
      const value = Reflect.get(real, key);
      return typeof value === 'function' ? value.bind(real) : value;
    },
  });
}
