import { createServer, request, type IncomingMessage, type Server, type ServerResponse, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from './fake-db.js';
import { responseSink } from '../http/sink.js';
import { negotiateFormat, openStream, type StreamOptions, type StreamSink } from './transport.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  vi.restoreAllMocks();
});

/** A server whose only route opens a stream and hands the sink to the test. */
async function streamServer(options: (req: IncomingMessage) => StreamOptions = () => ({})) {
  const sinks: StreamSink[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('X-Request-Id', 'r1');
    sinks.push(openStream(responseSink(req, res), options(req)));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { port, sinks };
}

interface Received {
  req: ClientRequest;
  res?: IncomingMessage;
  body: string;
  ended: boolean;
}

function get(port: number, headers: Record<string, string> = {}): Received {
  const got: Received = { req: undefined as unknown as ClientRequest, body: '', ended: false };
  got.req = request({ host: '127.0.0.1', port, path: '/db/stream', headers }, (res) => {
    got.res = res;
    res.setEncoding('utf8');
    res.on('data', (c: string) => (got.body += c));
    res.on('end', () => (got.ended = true));
    res.on('error', () => {});
  });
  got.req.on('error', () => {});
  got.req.end();
  return got;
}

describe('negotiateFormat', () => {
  it.each([
    [undefined, 'sse'],
    ['', 'sse'],
    ['*/*', 'sse'],
    ['text/event-stream', 'sse'],
    ['application/x-ndjson', 'ndjson'],
    ['application/ndjson', 'ndjson'],
    ['Application/X-NDJSON; charset=utf-8', 'ndjson'],
    ['text/event-stream, application/x-ndjson', 'sse'],
    ['application/x-ndjson, text/event-stream', 'ndjson'],
    ['text/event-stream;q=0.5, application/x-ndjson', 'ndjson'],
    ['application/x-ndjson;q=0.2, text/event-stream', 'sse'],
    ['application/x-ndjson;q=0', 'sse'],
    ['application/json', 'sse'],
  ] as const)('%s → %s', (accept, expected) => {
    expect(negotiateFormat(accept)).toBe(expected);
  });
});

describe('openStream over HTTP', () => {
  it('frames SSE payloads with ids, ends with an error event, and calls onClose once', async () => {
    const { port, sinks } = await streamServer();
    const got = get(port);
    await waitFor(() => sinks.length === 1 && got.res !== undefined, 'headers');
    const res = got.res!;
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-accel-buffering']).toBe('no');
    expect(res.headers['connection']).toBe('keep-alive');
    expect(res.headers['x-request-id']).toBe('r1'); // headers set before openStream survive
    const sink = sinks[0]!;
    const closed = vi.fn();
    sink.onClose(closed);
    sink.send('{"data":1}');
    sink.send('{"data":{"items":[],"total":0}}');
    sink.send('{"data":"é \u{1F600}"}');
    sink.send('{"data":\n"odd"}');
    sink.error('{"error":{"code":"FORBIDDEN","message":"Forbidden"}}');
    sink.send('{"data":"after close"}');
    await waitFor(() => got.ended, 'end of response');
    expect(got.body).toBe(
      'id: 1\ndata: {"data":1}\n\n' +
        'id: 2\ndata: {"data":{"items":[],"total":0}}\n\n' +
        'id: 3\ndata: {"data":"é \u{1F600}"}\n\n' +
        'id: 4\ndata: {"data":\ndata: "odd"}\n\n' +
        'event: error\ndata: {"error":{"code":"FORBIDDEN","message":"Forbidden"}}\n\n',
    );
    expect(closed).toHaveBeenCalledTimes(1);
    expect(sink.closeReason).toBe('server');
    const late = vi.fn();
    sink.onClose(late);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('frames NDJSON as one document per line', async () => {
    const { port, sinks } = await streamServer((req) => ({ format: negotiateFormat(req.headers.accept) }));
    const got = get(port, { Accept: 'application/x-ndjson' });
    await waitFor(() => sinks.length === 1 && got.res !== undefined, 'headers');
    expect(got.res!.headers['content-type']).toBe('application/x-ndjson');
    const sink = sinks[0]!;
    sink.send('{"data":null}');
    sink.send('{"data":{"id":"tk_1"}}');
    sink.error('{"error":{"code":"INVALID_TOKEN","message":"x"}}');
    await waitFor(() => got.ended, 'end of response');
    expect(got.body).toBe('{"data":null}\n{"data":{"id":"tk_1"}}\n{"error":{"code":"INVALID_TOKEN","message":"x"}}\n');
    expect(
      got.body
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ).toHaveLength(3);
  });

  it('sends heartbeats: an SSE comment, an empty NDJSON line', async () => {
    const { port } = await streamServer((req) => ({ format: negotiateFormat(req.headers.accept), heartbeatMs: 10 }));
    const sse = get(port);
    const nd = get(port, { Accept: 'application/x-ndjson' });
    await waitFor(() => sse.body.includes(': ping\n\n: ping\n\n'), 'two SSE pings');
    await waitFor(() => nd.body.startsWith('\n\n'), 'two NDJSON heartbeats');
    expect(nd.body.trim()).toBe('');
  });

  it('a client disconnect clears the heartbeat timer and calls onClose exactly once', async () => {
    const start = vi.spyOn(globalThis, 'setInterval');
    const clear = vi.spyOn(globalThis, 'clearInterval');
    const { port, sinks } = await streamServer(() => ({ heartbeatMs: 10 }));
    const got = get(port);
    await waitFor(() => sinks.length === 1 && got.body.includes(': ping'), 'a heartbeat');
    const sink = sinks[0]!;
    const closed = vi.fn();
    sink.onClose(closed);
    got.req.destroy();
    await waitFor(() => closed.mock.calls.length > 0, 'onClose');
    expect(sink.closed).toBe(true);
    expect(sink.closeReason).toBe('client');
    const at = start.mock.calls.findIndex((args) => args[1] === 10);
    const timer = start.mock.results[at]?.value;
    expect(timer).toBeDefined();
    expect(clear).toHaveBeenCalledWith(timer);
    sink.send('{"data":1}'); // a no-op, not a throw
    sink.close();
    await new Promise((r) => setTimeout(r, 30));
    expect(closed).toHaveBeenCalledTimes(1);
  });

  it('drops a client that stops reading once its buffer passes maxBufferedBytes', async () => {
    const { port, sinks } = await streamServer(() => ({ maxBufferedBytes: 64 * 1024 }));
    const got = get(port);
    await waitFor(() => sinks.length === 1 && got.res !== undefined, 'headers');
    got.res!.pause(); // stop reading: kernel buffers fill, then the response buffer grows
    got.res!.removeAllListeners('data');
    const sink = sinks[0]!;
    const closed = vi.fn();
    sink.onClose(closed);
    const payload = `{"data":"${'x'.repeat(64 * 1024)}"}`;
    let sent = 0;
    while (!sink.closed && sent < 4000) {
      sink.send(payload);
      sent++;
      if (sent % 8 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(sink.closed).toBe(true);
    expect(sink.closeReason).toBe('slow');
    expect(closed).toHaveBeenCalledTimes(1);
  });
});
