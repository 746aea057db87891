/**
 * Real SMTP delivery (docs/reference/dashboard.md): a local smtp-server on a free port receives what the email
 * service sends through nodemailer, and the raw message is decoded here to check it.
 */
import { describe, it, expect, afterEach } from 'vitest';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { ApiError } from '../core/errors.js';
import type { Logger } from '../define/types.js';
import { createEmailService, type EmailService } from './index.js';
import { decodeWords, parseMessage } from '../../test/helpers/smtp.js';
import { describeSmtp, parseSmtpUrl } from './smtp-mailer.js';

interface Received {
  mailFrom: string;
  rcptTo: string[];
  user: string | undefined;
  raw: string;
}

const log: Logger & { lines: string[] } = {
  lines: [],
  info(obj, msg) {
    this.lines.push(JSON.stringify([obj, msg]));
  },
  warn(obj, msg) {
    this.lines.push(JSON.stringify([obj, msg]));
  },
  error(obj, msg) {
    this.lines.push(JSON.stringify([obj, msg]));
  },
  debug(obj, msg) {
    this.lines.push(JSON.stringify([obj, msg]));
  },
};

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  log.lines.length = 0;
});

async function startServer(options: Partial<SMTPServerOptions> = {}): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    ...options,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          user: session.user as string | undefined,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, received };
}

function emailService(smtpUrl: string): EmailService {
  const service = createEmailService({ smtpUrl, outboxDir: '/nonexistent/outbox-must-not-be-used', log });
  cleanups.push(() => service.close());
  return service;
}

// --- a small MIME reader: enough for what nodemailer produces (RFC 2045/2046) ---

describe('parseSmtpUrl', () => {
  it('reads smtp and smtps URLs with default ports and decoded credentials', () => {
    expect(parseSmtpUrl('smtp://mail.example')).toEqual({ secure: false, host: 'mail.example', port: 587 });
    expect(parseSmtpUrl('smtps://mail.example')).toEqual({ secure: true, host: 'mail.example', port: 465 });
    expect(parseSmtpUrl('smtp://u%40x.example:p%40ss%3Aw%2Frd@127.0.0.1:2525')).toEqual({
      secure: false,
      host: '127.0.0.1',
      port: 2525,
      auth: { user: 'u@x.example', pass: 'p@ss:w/rd' },
    });
    expect(parseSmtpUrl('smtps://[::1]:1465').host).toBe('::1');
  });

  it('rejects other schemes and garbage without echoing the URL', () => {
    for (const url of ['http://u:s3cretpw@h:25', 'not a url s3cretpw', 'smtp://u:%E0%A4%A@h:25']) {
      let message = '';
      try {
        parseSmtpUrl(url);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^SMTP_URL must look like/);
      expect(message).not.toContain('s3cretpw');
    }
  });

  it('describes a connection without the credentials', () => {
    const d = describeSmtp(parseSmtpUrl('smtps://user:topsecret@mail.example:465'));
    expect(d).toBe('smtps://***@mail.example:465');
  });
});

describe('SMTP delivery', () => {
  it('delivers a verification email whose body carries the link with the token', async () => {
    const { port, received } = await startServer();
    const service = emailService(`smtp://127.0.0.1:${port}`);
    expect(service.transport).toBe('smtp');
    const token = 'vT0k_' + 'x'.repeat(60); // long enough that a naive encoder would wrap it
    const { id } = await service.sendVerification('Ann@Example.com', token);
    expect(id).toMatch(/@/);
    expect(id).not.toMatch(/[<>]/);

    expect(received).toHaveLength(1);
    const mail = received[0]!;
    expect(mail.rcptTo).toEqual(['ann@example.com']);
    expect(mail.mailFrom).toBe('no-reply@localhost');
    const parsed = parseMessage(mail.raw);
    expect(parsed.headers.get('to')).toBe('ann@example.com');
    expect(parsed.headers.get('subject')).toBe('Verify your email address');
    expect(parsed.headers.get('message-id')).toBe(`<${id}>`);
    expect(parsed.text).toContain(`http://localhost/verify?token=${token}`);
    expect(parsed.html).toContain(`href="http://localhost/verify?token=${token}"`);
  });

  it('delivers a direct message to several recipients', async () => {
    const { port, received } = await startServer();
    const service = emailService(`smtp://127.0.0.1:${port}`);
    await service.send({ to: ['a@example.com', 'b@example.com'], subject: 'Greetings ✓', text: 'Héllo' });
    const mail = received[0]!;
    expect(mail.rcptTo).toEqual(['a@example.com', 'b@example.com']);
    const parsed = parseMessage(mail.raw);
    expect(decodeWords(parsed.headers.get('subject')!)).toBe('Greetings ✓');
    expect(parsed.text).toBe('Héllo');
    expect(parsed.html).toBeUndefined();
  });

  it('authenticates with URL-encoded credentials from smtp://user:pass@host', async () => {
    const attempts: { username: unknown; password: unknown }[] = [];
    const { port, received } = await startServer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        attempts.push({ username: auth.username, password: auth.password });
        if (auth.username === 'mailer@app.example' && auth.password === 'p@ss:w/rd%') return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
    });
    const service = emailService(`smtp://mailer%40app.example:p%40ss%3Aw%2Frd%25@127.0.0.1:${port}`);
    await service.sendPasswordReset('bo@example.com', 'rst');
    expect(attempts).toEqual([{ username: 'mailer@app.example', password: 'p@ss:w/rd%' }]);
    expect(received).toHaveLength(1);
    expect(received[0]!.user).toBe('mailer@app.example');
    expect(parseMessage(received[0]!.raw).text).toContain('http://localhost/reset?token=rst');
    // The password never reaches the log, not even at start-up.
    expect(log.lines.join('\n')).not.toContain('p@ss');
    expect(log.lines.join('\n')).not.toContain('p%40ss');
  });

  it('a refused login is a 503 whose error and log hold no password', async () => {
    const { port, received } = await startServer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(_auth, _session, callback) {
        callback(new Error('Invalid username or password'));
      },
    });
    const service = emailService(`smtp://user:wr0ngpass@127.0.0.1:${port}`);
    const err = await service.sendVerification('a@example.com', 'tok').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('UNAVAILABLE');
    const cause = (err as ApiError).cause as Error & { code?: string };
    expect(cause.code).toBe('EAUTH');
    expect(JSON.stringify({ m: cause.message, c: cause, e: (err as Error).message })).not.toContain('wr0ngpass');
    expect(log.lines.join('\n')).not.toContain('wr0ngpass');
    expect(received).toHaveLength(0);
  });

  it('a server that is not there is a 503, not a hang', async () => {
    const { port } = await startServer();
    // Close it again so the port is known-free, then send to it.
    await cleanups.pop()!();
    const service = emailService(`smtp://127.0.0.1:${port}`);
    const err = await service.send({ to: 'a@example.com', subject: 's', text: 't' }).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe('UNAVAILABLE');
  });
});
