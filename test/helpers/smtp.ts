/**
 * A real SMTP server for end-to-end tests (docs/reference/dashboard.md: `SMTP_URL`): `smtp-server` on a free loopback
 * port in the test process, keeping every message it accepts, plus a small MIME reader for what
 * nodemailer sends (RFC 2045 transfer encodings, RFC 2046 multipart) so tests can read the
 * decoded text and HTML parts.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  /** Header names lower-cased, folded lines joined. */
  headers: Map<string, string>;
  text?: string;
  html?: string;
  raw: string;
}

export interface TestSmtp {
  port: number;
  /** `smtp://127.0.0.1:<port>`, for the server's `SMTP_URL`. */
  url: string;
  received: ReceivedMail[];
  /** Polls until a message matching `match` arrives; throws after `timeoutMs`. */
  waitFor(match: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** Bigger messages are refused: a runaway sender cannot fill the test process's memory. */
const MAX_MESSAGE_BYTES = 1 << 20;

export async function startSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate to trust, and nodemailer will not try STARTTLS.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: MAX_MESSAGE_BYTES,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_MESSAGE_BYTES) chunks.push(c);
      });
      stream.on('end', () => {
        if (size > MAX_MESSAGE_BYTES) return callback(new Error('message too large'));
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw,
          ...parseMessage(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    async waitFor(match, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching email within ${timeoutMs} ms; received ${received.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function splitHead(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  const headEnd = at < 0 ? raw.length : at;
  const head = raw.slice(0, headEnd).replace(/\r\n[ \t]+/g, ' '); // unfold (RFC 5322 §2.2.3)
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: at < 0 ? '' : raw.slice(at + 4) };
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    // Soft line breaks go first, then =XX escapes; bytes are reassembled before UTF-8 decoding.
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/** The message's headers and its decoded text/plain and text/html parts. */
export function parseMessage(raw: string): { headers: Map<string, string>; text?: string; html?: string } {
  const { headers, body } = splitHead(raw);
  const out: { headers: Map<string, string>; text?: string; html?: string } = { headers };
  const visit = (h: Map<string, string>, b: string, depth: number): void => {
    const type = (h.get('content-type') ?? 'text/plain').toLowerCase();
    const boundary = /boundary="?([^";]+)"?/i.exec(h.get('content-type') ?? '')?.[1];
    if (type.startsWith('multipart/') && boundary && depth < 5) {
      for (const part of b.split(`--${boundary}`).slice(1, -1)) {
        const p = splitHead(part.replace(/^\r\n/, ''));
        visit(p.headers, p.body.replace(/\r\n$/, ''), depth + 1);
      }
    } else if (type.startsWith('text/plain')) out.text = decodeBody(h, b);
    else if (type.startsWith('text/html')) out.html = decodeBody(h, b);
  };
  visit(headers, body.replace(/\r\n$/, ''), 0);
  return out;
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=` / `=?UTF-8?B?…?=`), as nodemailer writes non-ASCII headers. */
export function decodeWords(value: string): string {
  return value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_m, kind: string, data: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(
          data.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8'),
  );
}
