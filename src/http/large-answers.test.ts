import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { admitAnswer, largeAnswersInFlight, setLargeAnswerLimits } from './large-answers.js';

const BODY = 'x'.repeat(8 * 1024 * 1024);
let server: Server;
let port: number;
const refused: ApiError[] = [];

beforeAll(async () => {
  setLargeAnswerLimits({ largeBytes: 1024, stallMs: 300, inFlightBytes: 2 * BODY.length });
  server = createServer((_req, res) => {
    try {
      admitAnswer(res, BODY.length);
      res.end(BODY);
    } catch (err) {
      refused.push(err as ApiError);
      res.writeHead(503).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(() => {
  server.close();
  setLargeAnswerLimits({ largeBytes: 256 * 1024, stallMs: 10_000, inFlightBytes: 64 * 1024 * 1024 });
});

describe('large answers and clients that never read them', () => {
  it('are bounded server-wide (503 past the budget) and released when the stalled socket is cut', async () => {
    const socks = [1, 2, 3].map(() => {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      s.pause();
      return s;
    });
    const deadline = Date.now() + 10_000;
    while (refused.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(refused[0]?.code).toBe('UNAVAILABLE');
    expect(largeAnswersInFlight()).toBe(2 * BODY.length);
    // Nobody reads: the stall timeout cuts both answers and returns their bytes.
    while (largeAnswersInFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(largeAnswersInFlight()).toBe(0);
    for (const s of socks) s.destroy();
  });
});
