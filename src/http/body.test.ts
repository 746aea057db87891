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

/**
 * A query that is exactly `body=…` is decoded without URLSearchParams (body.ts onlyBody): every
 * query must still answer what URLSearchParams' `get('body')` reads, malformed escapes, `+`,
 * repeated and encoded names included.
 */
describe("a GET's ?body= reads as URLSearchParams does", () => {
  const get = () => ({ method: 'GET', headers: {}, httpVersionMajor: 1 }) as unknown as IncomingMessage;
  const value = { table: 'items', where: { title: { eq: 'a+b & c/ü 😀 %' } } };
  const queries = [
    `body=${encodeURIComponent(JSON.stringify(value))}`,
    `body=${JSON.stringify({ a: 1 })}`,
    `body=${new URLSearchParams({ body: JSON.stringify(value) }).toString().slice(5)}`, // spaces as +
    'body={"a":"x+y"}',
    'body={"a":"%2B%20"}'.replace('{', '%7B'),
    'body=%7B%22a%22%3A%22%E0%A4%A%22%7D', // a malformed escape
    'body=%7B%22a%22%3A%22%FF%22%7D', // not UTF-8
    'body=%7B%22a%22%3A1%7D&body=%7B%22a%22%3A2%7D',
    'x=1&body=%7B%22a%22%3A3%7D',
    'bo%64y=%7B%22a%22%3A4%7D',
    'Body=%7B%22a%22%3A5%7D',
    'body=',
    'body',
  ];
  for (const q of queries) {
    it(q.slice(0, 60), () => {
      let expected: unknown;
      try {
        const raw = new URLSearchParams(q).get('body');
        expected = raw === null ? 'fallthrough' : { ok: JSON.parse(raw) };
      } catch {
        expected = 'BAD_REQUEST';
      }
      let got: unknown;
      try {
        const r = jsonBody(get(), q, MAX * 1000);
        if (r instanceof Promise) r.catch(() => undefined); // no body: the stream path's 400, not this test's
        got = r instanceof Promise ? 'fallthrough' : { ok: r };
      } catch (err) {
        got = (err as { code: string }).code === 'BAD_REQUEST' ? 'BAD_REQUEST' : String(err);
      }
      expect(got).toEqual(expected);
    });
  }
});
