/**
 * One small HTTPS POST for the Web Push and FCM providers, over `node:https` with a keep-alive
 * agent per provider: far less CPU and garbage per request than fetch's web streams, which matters
 * at thousands of sends a second. TLS is verified (Node's CAs plus NODE_EXTRA_CA_CERTS); answers
 * are read up to 64 KiB; a request that takes longer than `timeoutMs` fails.
 */
import { Agent, request } from 'node:https';

const MAX_ANSWER = 64 * 1024;

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export const keepAliveAgent = (maxSockets: number): Agent => new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });

export function httpsPost(agent: Agent, url: string, headers: Record<string, string | number>, body: string | Buffer | null, timeoutMs: number): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': body ? Buffer.byteLength(body) : 0 }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_ANSWER) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/** A header value as one string (the first, when repeated). */
export const header = (h: HttpsAnswer['headers'], name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};
