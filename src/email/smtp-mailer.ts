/**
 * SMTP delivery through a pooled nodemailer transport (docs/reference/dashboard.md: `SMTP_URL` as
 * `smtp://user:pass@host:port` or `smtps://…`). The URL holds a password, so nothing here ever
 * echoes it: parse errors name the expected shape, logs carry host/port only, and transport
 * errors are copied into an EmailDeliveryError with just the safe facts.
 */
import { createRequire } from 'node:module';
import type Nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { Logger } from '../define/types.js';
import { EmailDeliveryError, type Mailer, type OutgoingEmail } from './mailer.js';

export interface SmtpSettings {
  /** `smtps:` connects with TLS from the first byte; `smtp:` upgrades with STARTTLS when offered. */
  secure: boolean;
  host: string;
  port: number;
  auth?: { user: string; pass: string };
}

/** Messages waiting in the pool before sends are refused: keeps memory bounded if SMTP stalls. */
const MAX_IN_FLIGHT = 1000;

const SHAPE = 'SMTP_URL must look like smtp://user:pass@host:port or smtps://user:pass@host:port';

/** Parses `SMTP_URL`; throws a message that never contains the URL itself. */
export function parseSmtpUrl(smtpUrl: string): SmtpSettings {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    throw new Error(SHAPE);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error(SHAPE);
  // WHATWG URL keeps brackets around IPv6 literals; sockets want the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new Error(SHAPE);
  const secure = url.protocol === 'smtps:';
  // Defaults follow nodemailer and RFC 8314: 465 for implicit TLS, 587 for submission.
  const port = url.port === '' ? (secure ? 465 : 587) : Number(url.port);
  const settings: SmtpSettings = { secure, host, port };
  if (url.username !== '' || url.password !== '') {
    try {
      // Credentials are percent-encoded in the URL (a `@` or `:` in a password must be).
      settings.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
    } catch {
      throw new Error(`${SHAPE} (credentials must be valid percent-encoding)`);
    }
  }
  return settings;
}

/** One line safe to log: host, port and whether credentials are set, never what they are. */
export function describeSmtp(settings: SmtpSettings): string {
  return `${settings.secure ? 'smtps' : 'smtp'}://${settings.auth ? '***@' : ''}${settings.host}:${settings.port}`;
}

export class SmtpMailer implements Mailer {
  readonly #transport: Transporter;
  readonly #log: Logger | undefined;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(settings: SmtpSettings, log?: Logger) {
    this.#log = log;
    // Loaded when an SMTP server is configured, not at every start (issue #25).
    const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof Nodemailer;
    this.#transport = nodemailer.createTransport({
      pool: true,
      maxConnections: 3,
      maxMessages: 100,
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      ...(settings.auth ? { auth: { user: settings.auth.user, pass: settings.auth.pass } } : {}),
      // A stalled mail server must not hold requests (or hooks awaiting a send) forever.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      dnsTimeout: 10_000,
      // nodemailer's own logger would print the SMTP dialogue, AUTH included.
      logger: false,
      debug: false,
    });
  }

  async send(msg: OutgoingEmail): Promise<{ id: string }> {
    if (this.#closed) throw new EmailDeliveryError('The SMTP mailer is closed');
    if (this.#inFlight.size >= MAX_IN_FLIGHT) throw new EmailDeliveryError('Too many emails waiting for the SMTP server');
    const sending = this.#transport.sendMail({
      from: msg.from,
      to: msg.to,
      subject: msg.subject,
      ...(msg.text !== undefined ? { text: msg.text } : {}),
      ...(msg.html !== undefined ? { html: msg.html } : {}),
    });
    this.#inFlight.add(sending);
    try {
      const info = (await sending) as { messageId?: string; rejected?: unknown[] };
      const rejected = info.rejected?.length ?? 0;
      if (rejected > 0) this.#log?.warn({ rejected, recipients: msg.to.length }, 'SMTP server rejected some recipients');
      // Message-Id is `<unique@host>`; the brackets are header syntax, not part of the id.
      return { id: String(info.messageId ?? '').replace(/^<|>$/g, '') };
    } catch (err) {
      throw toDeliveryError(err);
    } finally {
      this.#inFlight.delete(sending);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    this.#transport.close();
  }
}

function toDeliveryError(err: unknown): EmailDeliveryError {
  const e = (err ?? {}) as { code?: unknown; responseCode?: unknown; response?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  // The server's reply line is useful to an operator and carries no credentials; cap its length.
  const response = typeof e.response === 'string' ? e.response.slice(0, 200) : undefined;
  const detail = [code, response].filter((s) => s !== undefined).join(': ');
  return new EmailDeliveryError(`SMTP delivery failed${detail ? ` (${detail})` : ''}`, {
    ...(code !== undefined ? { code } : {}),
    ...(responseCode !== undefined ? { responseCode } : {}),
  });
}
