import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rejectedApiError } from '../testing/api-errors.js';
import type { EmailMessage, Logger } from '../define/types.js';
import { createEmailService, DEFAULT_FROM, type EmailService, type Mailer, type OutgoingEmail } from './index.js';
import type { OutboxRecord } from './outbox-mailer.js';

function memoryLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const put = (obj: object | string, msg?: string) => void lines.push(JSON.stringify([obj, msg]));
  return { lines, info: put, warn: put, error: put, debug: put };
}

let root: string;
let outbox: string;
let services: EmailService[] = [];

function service(extra: Partial<Parameters<typeof createEmailService>[0]> = {}): EmailService {
  const s = createEmailService({ outboxDir: outbox, log: memoryLog(), ...extra });
  services.push(s);
  return s;
}

async function outboxRecords(): Promise<OutboxRecord[]> {
  const files = (await readdir(outbox)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(files.map(async (f) => JSON.parse(await readFile(join(outbox, f), 'utf8')) as OutboxRecord));
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tb-email-svc-'));
  outbox = join(root, 'data', 'outbox');
});
afterEach(async () => {
  await Promise.all(services.map((s) => s.close()));
  services = [];
  await rm(root, { recursive: true, force: true });
});

describe('createEmailService with the outbox', () => {
  it('picks the outbox without SMTP_URL (also for an empty one)', () => {
    expect(service().transport).toBe('outbox');
    expect(service({ smtpUrl: '  ' }).transport).toBe('outbox');
  });

  it('sendVerification writes the built-in email with the default link', async () => {
    const { id } = await service().sendVerification('  Ann@Example.COM ', 'tok_123-abc');
    const [record] = await outboxRecords();
    expect(record).toMatchObject({ id, to: ['ann@example.com'], from: DEFAULT_FROM, subject: 'Verify your email address' });
    expect(record!.text).toContain('http://localhost/verify?token=tok_123-abc');
    expect(record!.text).toContain('ann@example.com');
    expect(record!.html).toContain('href="http://localhost/verify?token=tok_123-abc"');
  });

  it('sendPasswordReset URL-encodes the token into the configured link, escaped in html', async () => {
    await service({ links: { reset: 'https://app.example/reset?x=1&token={token}' }, from: 'App <hi@app.example>' }).sendPasswordReset('bo@example.com', 'a/b+c');
    const [record] = await outboxRecords();
    expect(record!.from).toBe('App <hi@app.example>');
    expect(record!.subject).toBe('Reset your password');
    expect(record!.text).toContain('https://app.example/reset?x=1&token=a%2Fb%2Bc');
    expect(record!.html).toContain('href="https://app.example/reset?x=1&amp;token=a%2Fb%2Bc"');
  });

  it('uses project overrides of the built-in templates, with link, email, token and extra variables', async () => {
    const templatesDir = join(root, 'templates');
    await mkdir(templatesDir);
    await writeFile(join(templatesDir, 'verifyEmail.subject'), 'Confirm {{email}}');
    await writeFile(join(templatesDir, 'verifyEmail.txt'), '{{user.displayName}}: {{link}} ({{token}})');
    await service({ templatesDir }).sendVerification('c@example.com', 'T1', { user: { displayName: 'Cy' }, link: 'overridden?' });
    const [record] = await outboxRecords();
    expect(record).toMatchObject({ subject: 'Confirm c@example.com', text: 'Cy: http://localhost/verify?token=T1 (T1)', html: null });
  });

  it('send writes a direct message, normalizing and de-duplicating recipients', async () => {
    const { id } = await service().send({ to: ['A@example.com', 'a@example.com ', 'b@example.com'], subject: ' Hello\n', text: 'Body' });
    expect(await outboxRecords()).toEqual([expect.objectContaining({ id, to: ['a@example.com', 'b@example.com'], subject: 'Hello', text: 'Body', html: null })]);
  });

  it('send renders a project template with escaped variables; a given subject replaces the template one', async () => {
    const templatesDir = join(root, 'tpl');
    await mkdir(templatesDir);
    await writeFile(join(templatesDir, 'welcome.subject'), 'Welcome {{name}}');
    await writeFile(join(templatesDir, 'welcome.html'), '<h1>{{name}}</h1>');
    const s = service({ templatesDir });
    await s.send({ to: 'd@example.com', template: 'welcome', variables: { name: '<b>Di</b>' } });
    await s.send({ to: 'd@example.com', template: 'welcome', subject: 'Custom', variables: {} });
    const [first, second] = await outboxRecords();
    expect(first).toMatchObject({ subject: 'Welcome <b>Di</b>', html: '<h1>&lt;b&gt;Di&lt;/b&gt;</h1>', text: null });
    expect(second!.subject).toBe('Custom');
  });

  it('send can use the built-in templates by name', async () => {
    await service().send({ to: 'e@example.com', template: 'resetPassword', variables: { link: 'http://x/r?token=1', email: 'e@example.com' } });
    const [record] = await outboxRecords();
    expect(record!.text).toContain('http://x/r?token=1');
  });

  it('unknown templates are 404, path-like names 400, and nothing is written', async () => {
    const s = service({ templatesDir: join(root, 'tpl') });
    expect((await rejectedApiError(s.send({ to: 'a@example.com', template: 'missing' }))).code).toBe('NOT_FOUND');
    const bad = await rejectedApiError(s.send({ to: 'a@example.com', template: '../../etc/passwd' }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.details).toEqual([{ path: '/template', message: expect.any(String) }]);
    await expect(readdir(outbox)).rejects.toThrow();
  });
});

describe('message validation', () => {
  const cases: [string, unknown, string[]][] = [
    ['not an object', 'hello', ['']],
    ['an array', [], ['']],
    ['no recipient', { subject: 's', text: 't' }, ['/to']],
    ['an empty recipient list', { to: [], subject: 's', text: 't' }, ['/to']],
    ['a bad address in a list', { to: ['a@example.com', 'nope'], subject: 's', text: 't' }, ['/to/1']],
    ['a header-injecting address', { to: 'a@example.com\r\nBcc: x@evil.example', subject: 's', text: 't' }, ['/to']],
    ['51 recipients', { to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`), subject: 's', text: 't' }, ['/to']],
    ['no subject', { to: 'a@example.com', text: 't' }, ['/subject']],
    ['a blank subject', { to: 'a@example.com', subject: ' \n ', text: 't' }, ['/subject']],
    ['a 999-character subject', { to: 'a@example.com', subject: 'x'.repeat(999), text: 't' }, ['/subject']],
    ['no body', { to: 'a@example.com', subject: 's' }, ['/text']],
    ['only empty bodies', { to: 'a@example.com', subject: 's', text: '', html: '' }, ['/text']],
    ['a non-string body', { to: 'a@example.com', subject: 's', html: 5 }, ['/html']],
    ['a caller-chosen sender', { to: 'a@example.com', subject: 's', text: 't', from: 'ceo@example.com' }, ['/from']],
    ['variables without a template', { to: 'a@example.com', subject: 's', text: 't', variables: {} }, ['/variables']],
    ['a template with a body', { to: 'a@example.com', template: 'verifyEmail', text: 't' }, ['/text']],
    ['template variables that are not an object', { to: 'a@example.com', template: 'verifyEmail', variables: [1] }, ['/variables']],
    ['several problems at once', { to: 'x', subject: 5, text: 't', cc: 'y' }, ['/cc', '/to', '/subject']],
  ];

  for (const [name, message, paths] of cases) {
    it(`rejects ${name} with 400 and details`, async () => {
      const err = await rejectedApiError(service().send(message as EmailMessage));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.status).toBe(400);
      expect(err.details?.map((d) => d.path)).toEqual(paths);
    });
  }

  it('accepts 50 recipients and a 998-character subject', async () => {
    await service().send({ to: Array.from({ length: 50 }, (_, i) => `u${i}@example.com`), subject: 'x'.repeat(998), html: '<p>ok</p>' });
    const [record] = await outboxRecords();
    expect(record!.to).toHaveLength(50);
  });

  it('rejects a template whose rendered subject is empty', async () => {
    const templatesDir = join(root, 'tpl');
    await mkdir(templatesDir);
    await writeFile(join(templatesDir, 'nosubject.txt'), 'body');
    const err = await rejectedApiError(service({ templatesDir }).send({ to: 'a@example.com', template: 'nosubject' }));
    expect(err.details?.[0]?.path).toBe('/subject');
  });
});

describe('delivery failures and lifecycle', () => {
  it('maps a mailer failure to 503 without leaking the cause to the client', async () => {
    const log = memoryLog();
    const failing: Mailer = {
      send: async () => {
        throw new Error('disk full at /secret/path');
      },
      close: async () => undefined,
    };
    const s = service({ mailer: failing, log });
    expect(s.transport).toBe('custom');
    const err = await rejectedApiError(s.sendVerification('a@example.com', 'tok'));
    expect(err.code).toBe('UNAVAILABLE');
    expect(JSON.stringify(err.toJSON())).not.toContain('/secret/path');
    expect(log.lines.some((l) => l.includes('email delivery failed'))).toBe(true);
    expect(log.lines.join('\n')).not.toContain('a@example.com');
  });

  it('hands the injected mailer exactly the rendered message', async () => {
    const sent: OutgoingEmail[] = [];
    const s = service({ mailer: { send: async (m) => (sent.push(m), { id: 'm1' }), close: async () => undefined } });
    expect(await s.send({ to: 'z@example.com', subject: 'S', text: 'T' })).toEqual({ id: 'm1' });
    expect(sent).toEqual([{ to: ['z@example.com'], from: DEFAULT_FROM, subject: 'S', text: 'T' }]);
  });

  it('refuses sends after close, and close is idempotent', async () => {
    const s = service();
    await s.close();
    await s.close();
    expect((await rejectedApiError(s.send({ to: 'a@example.com', subject: 's', text: 't' }))).code).toBe('UNAVAILABLE');
  });

  it('fails fast on bad configuration, never echoing the SMTP password', () => {
    const log = memoryLog();
    expect(() => createEmailService({ outboxDir: outbox, log, links: { verify: 'http://x/verify' } })).toThrow(/\{token\}/);
    expect(() => createEmailService({ outboxDir: outbox, log, from: 'nobody' })).toThrow(/email\.from/);
    let message = '';
    try {
      createEmailService({ outboxDir: outbox, log, smtpUrl: 'http://user:hunter2secret@mail.example:25' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/SMTP_URL/);
    expect(message).not.toContain('hunter2secret');
  });
});
