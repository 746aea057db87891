/**
 * The primary's forwarded requests carry their body whole (WHOLE_BODY, ./forward-exchange.ts) and
 * skip the stream: the answer must be the one a socket's streamed body gets, for every outcome
 * of a JSON body (parsed, 400 empty, 400 not JSON, 400 not an object, 413 by declared or by actual
 * size, 415 by Content-Type).
 */
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { jsonBody, WHOLE_BODY } from './body.js';

const MAX = 16;

function streamed(body: Buffer, headers: Record<string, string>): IncomingMessage {
  return Object.assign(Readable.from(body.length > 0 ? [body] : []), { method: 'POST', headers, httpVersionMajor: 1, complete: false }) as unknown as IncomingMessage;
}
function whole(body: Buffer, headers: Record<string, string>): IncomingMessage {
  return { method: 'POST', headers, httpVersionMajor: 1, complete: true, [WHOLE_BODY]: body } as unknown as IncomingMessage;
}

async function outcome(req: IncomingMessage): Promise<unknown> {
  try {
    return { ok: await jsonBody(req, '', MAX) };
  } catch (err) {
    const e = err as { code: string; status: number; message: string };
    return { code: e.code, status: e.status, message: e.message };
  }
}

const json = { 'content-type': 'application/json' };
const cases: [string, string, Record<string, string>][] = [
  ['an object', '{"a":1}', json],
  ['empty, no length', '', json],
  ['empty, length 0', '', { ...json, 'content-length': '0' }],
  ['not JSON', '{a', json],
  ['an array', '[1]', json],
  ['past the limit, declared', '{"a":"0123456789abcdef"}', { ...json, 'content-length': '25' }],
  ['past the limit, undeclared', '{"a":"0123456789abcdef"}', { ...json, 'transfer-encoding': 'chunked' }],
  ['text/plain', '{"a":1}', { 'content-type': 'text/plain' }],
];

describe('a forwarded whole body answers as a streamed one', () => {
  for (const [name, text, headers] of cases) {
    it(name, async () => {
      const body = Buffer.from(text);
      const h = text && !('content-length' in headers) && !('transfer-encoding' in headers) ? { ...headers, 'content-length': String(body.length) } : headers;
      const a = await outcome(streamed(body, h));
      expect(await outcome(whole(body, h))).toEqual(a);
    });
  }

  it('parses without a promise (no stream events on the primary)', () => {
    expect(jsonBody(whole(Buffer.from('{"a":1}'), json), '', MAX)).toEqual({ a: 1 });
  });
});
