import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboxMailer, type OutboxRecord } from './outbox-mailer.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tb-outbox-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const msg = { to: ['ann@example.com', 'bo@example.com'], from: 'App <no-reply@example.com>', subject: 'Hello', text: 'Hi there', html: '<p>Hi there</p>' };

describe('OutboxMailer', () => {
  it('writes one JSON file holding the whole message, creating the folder', async () => {
    const dir = join(root, 'data', 'outbox');
    const mailer = new OutboxMailer(dir, { clock: () => Date.parse('2024-05-01T10:20:30.123Z') });
    const { id } = await mailer.send(msg);
    expect(id).toMatch(/^em_[0-9a-z]{20}$/);
    const files = await readdir(dir);
    expect(files).toEqual([`20240501T102030123Z-${id}.json`]);
    const record = JSON.parse(await readFile(join(dir, files[0]!), 'utf8')) as OutboxRecord;
    expect(record).toEqual({ id, createdAt: '2024-05-01T10:20:30.123Z', ...msg });
    await mailer.close();
  });

  it('keeps every key, with null for a missing part', async () => {
    const mailer = new OutboxMailer(root);
    await mailer.send({ to: ['a@example.com'], from: 'x@example.com', subject: 'S', html: '<b>only html</b>' });
    const [file] = await readdir(root);
    const record = JSON.parse(await readFile(join(root, file!), 'utf8')) as OutboxRecord;
    expect(record.text).toBeNull();
    expect(record.html).toBe('<b>only html</b>');
    expect(Object.keys(record).sort()).toEqual(['createdAt', 'from', 'html', 'id', 'subject', 'text', 'to']);
  });

  it('names files so that directory order is send order, and leaves no temp files', async () => {
    const mailer = new OutboxMailer(root);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await mailer.send({ ...msg, subject: `n${i}` })).id);
    const files = (await readdir(root)).sort();
    expect(files).toHaveLength(5);
    expect(files.every((f) => f.endsWith('.json') && !f.startsWith('.'))).toBe(true);
    const subjects = await Promise.all(files.map(async (f) => (JSON.parse(await readFile(join(root, f), 'utf8')) as OutboxRecord).subject));
    expect(subjects).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(files.map((f) => f.slice(f.indexOf('-') + 1, -'.json'.length))).toEqual(ids);
  });

  it('gives concurrent sends distinct files', async () => {
    const mailer = new OutboxMailer(root);
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => mailer.send({ ...msg, subject: `c${i}` })));
    expect(new Set(results.map((r) => r.id)).size).toBe(25);
    expect(await readdir(root)).toHaveLength(25);
  });

  it('restricts the folder and files to the owner (they hold live tokens)', async () => {
    if (process.platform === 'win32') return;
    const dir = join(root, 'outbox');
    const mailer = new OutboxMailer(dir);
    await mailer.send(msg);
    const [file] = await readdir(dir);
    expect((await stat(join(dir, file!))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o077).toBe(0);
  });

  it('refuses to send after close', async () => {
    const mailer = new OutboxMailer(root);
    await mailer.close();
    await expect(mailer.send(msg)).rejects.toThrow(/closed/);
    expect(await readdir(root)).toEqual([]);
  });

  it('fails cleanly when the folder cannot be created', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(root, 'blocker'), 'x');
    const mailer = new OutboxMailer(join(root, 'blocker', 'outbox'));
    await expect(mailer.send(msg)).rejects.toThrow();
  });
});
