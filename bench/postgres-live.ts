/** A count stream read as NDJSON, for the cross-node delivery measurement of bench/postgres.ts. */
import { request } from 'node:http';

export interface LiveClient {
  /** Resolves once the stream has reported a count of at least `n`. */
  waitFor(n: number): Promise<void>;
  close(): void;
}

export function openLiveClient(base: string, body: unknown): Promise<LiveClient> {
  return new Promise((resolve, reject) => {
    let count = -1;
    const waiters: { n: number; done: () => void }[] = [];
    const req = request(`${base}/db/stream/count?body=${encodeURIComponent(JSON.stringify(body))}`, { headers: { accept: 'application/x-ndjson' } }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          count = (JSON.parse(line) as { data: number }).data;
          for (let i = waiters.length - 1; i >= 0; i--) if (count >= waiters[i]!.n) waiters.splice(i, 1)[0]!.done();
        }
      });
      resolve({
        waitFor: (n) => (count >= n ? Promise.resolve() : new Promise((done) => waiters.push({ n, done }))),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
