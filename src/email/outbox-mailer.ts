/**
 * The no-SMTP transport (docs/reference/configuration.md, docs/reference/dashboard.md): one JSON file per message in `<data>/outbox/`, carrying
 * `id`, `createdAt`, `to`, `from`, `subject`, `text`, `html`. Files appear atomically (temp file in
 * the same folder, fsync, rename), so a reader polling the folder never sees half a message.
 * Names start with a UTC timestamp and end with a time-ordered id: `ls` order is send order.
 * Messages can hold live verification and reset tokens, so the folder is 0700 and files are 0600.
 */
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createIdGenerator } from '../storage/ids.js';
import { EmailDeliveryError, type Mailer, type OutgoingEmail } from './mailer.js';

export interface OutboxRecord {
  id: string;
  createdAt: string;
  to: string[];
  from: string;
  subject: string;
  /** `null` when the message has no part of that kind, so every file has the same keys. */
  text: string | null;
  html: string | null;
}

export interface OutboxMailerOptions {
  /** For tests: the clock behind ids, timestamps and file names. */
  clock?: () => number;
}

export class OutboxMailer implements Mailer {
  readonly #dir: string;
  readonly #clock: () => number;
  readonly #newId: (prefix: string) => string;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(dir: string, options: OutboxMailerOptions = {}) {
    this.#dir = dir;
    this.#clock = options.clock ?? Date.now;
    this.#newId = createIdGenerator(this.#clock);
  }

  get dir(): string {
    return this.#dir;
  }

  async send(msg: OutgoingEmail): Promise<{ id: string }> {
    if (this.#closed) throw new EmailDeliveryError('The outbox mailer is closed');
    const writing = this.#write(msg);
    this.#inFlight.add(writing);
    try {
      return await writing;
    } finally {
      this.#inFlight.delete(writing);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
  }

  async #write(msg: OutgoingEmail): Promise<{ id: string }> {
    const now = this.#clock();
    const id = this.#newId('em');
    const record: OutboxRecord = {
      id,
      createdAt: new Date(now).toISOString(),
      to: [...msg.to],
      from: msg.from,
      subject: msg.subject,
      text: msg.text ?? null,
      html: msg.html ?? null,
    };
    // `2024-05-01T10:20:30.123Z` → `20240501T102030123Z`: fixed width, sorts as time, no colons
    // (which some filesystems refuse).
    const stamp = record.createdAt.replace(/[-:.]/g, '');
    const name = `${stamp}-${id}.json`;
    // Re-created on every send (cheap when present) in case the folder was cleared while running.
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    // Dot-prefixed and not `.json`, so readers globbing `*.json` skip files being written.
    const tmp = join(this.#dir, `.${name}.tmp`);
    const file = await open(tmp, 'wx', 0o600);
    try {
      try {
        await file.writeFile(`${JSON.stringify(record, null, 2)}\n`, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, join(this.#dir, name));
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await syncDir(this.#dir);
    return { id };
  }
}

/** Makes the rename itself durable. Best effort: some platforms cannot open a directory. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Durability of the directory entry is a bonus, not a reason to fail the send.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
