/**
 * One-time sign-in codes (SPEC §8a): 6 digits, valid 10 minutes, single-use, one live code per
 * (auth table, email) — a new send replaces the previous one — and dead after 5 wrong tries even
 * if the right code follows.
 *
 * A 6-digit code has only a million values, so a plain hash in a leaked database would be
 * reversed at once: codes are stored as HMAC-SHA256 under a key derived from PASSWORD_SECRET,
 * bound to the table and address, and compared in constant time. Every try first spends one
 * attempt with a single check-and-set UPDATE (`attempts < 5`), so parallel guesses cannot
 * exceed the budget.
 */
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { toSnake } from '../core/naming.js';
import type { Dialect } from '../storage/dialect.js';
import type { SqlRunner } from '../storage/driver.js';
import { newId as defaultNewId } from '../storage/ids.js';
import { otpCodesTable } from './schema.js';
import type { WriteFn } from './sessions.js';

export const OTP_DIGITS = 6;
export const OTP_MAX_ATTEMPTS = 5;
export const OTP_TTL_SECONDS = 600;
const CODE_RE = /^\d{6}$/;

export interface OtpCodesOptions {
  dialect: Dialect;
  write: WriteFn;
  /** PASSWORD_SECRET (or any server secret); the HMAC key is derived from it. */
  secret: string | Buffer;
  ttlSeconds?: number;
  now?: () => number;
  newId?: (prefix: string) => string;
}

function statements(d: Dialect) {
  const q = (c: keyof typeof otpCodesTable.columns | 'id') => d.quote(toSnake(c));
  const T = d.quote(otpCodesTable.name);
  const p = (n: number) => d.param(n);
  return {
    // A new send replaces the previous code (and its spent attempts): SQLite and PostgreSQL both speak ON CONFLICT.
    upsert:
      `INSERT INTO ${T} (${q('id')}, ${q('authTable')}, ${q('email')}, ${q('codeHash')}, ${q('attempts')}, ${q('createdAt')}, ${q('expiresAt')}, ${q('usedAt')}) ` +
      `VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, 0, ${p(5)}, ${p(6)}, NULL) ON CONFLICT (${q('authTable')}, ${q('email')}) DO UPDATE SET ` +
      `${q('codeHash')} = excluded.${q('codeHash')}, ${q('attempts')} = 0, ${q('createdAt')} = excluded.${q('createdAt')}, ${q('expiresAt')} = excluded.${q('expiresAt')}, ${q('usedAt')} = NULL`,
    spend:
      `UPDATE ${T} SET ${q('attempts')} = ${q('attempts')} + 1 WHERE ${q('authTable')} = ${p(1)} AND ${q('email')} = ${p(2)} ` +
      `AND ${q('usedAt')} IS NULL AND ${q('expiresAt')} > ${p(3)} AND ${q('attempts')} < ${OTP_MAX_ATTEMPTS}`,
    read: `SELECT ${q('id')} AS id, ${q('codeHash')} AS hash FROM ${T} WHERE ${q('authTable')} = ${p(1)} AND ${q('email')} = ${p(2)}`,
    use: `UPDATE ${T} SET ${q('usedAt')} = ${p(1)} WHERE ${q('id')} = ${p(2)} AND ${q('usedAt')} IS NULL`,
    purge: `DELETE FROM ${T} WHERE ${q('expiresAt')} <= ${p(1)}`,
  };
}

export class OtpCodes {
  readonly #q: ReturnType<typeof statements>;
  readonly #write: WriteFn;
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #newId: (prefix: string) => string;

  constructor(o: OtpCodesOptions) {
    this.#q = statements(o.dialect);
    this.#write = o.write;
    this.#key = createHmac('sha256', o.secret).update('tablebase otp codes v1').digest();
    this.#ttlMs = (o.ttlSeconds ?? OTP_TTL_SECONDS) * 1000;
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  #hash(table: string, email: string, code: string): string {
    return createHmac('sha256', this.#key).update(`${table}\n${email}\n${code}`).digest('hex');
  }

  /** Stores a fresh code for (table, email), replacing any earlier one, and answers it for the email. */
  async issue(table: string, email: string): Promise<{ code: string; expiresAt: number }> {
    const code = String(randomInt(0, 10 ** OTP_DIGITS)).padStart(OTP_DIGITS, '0');
    const now = this.#now();
    const expiresAt = now + this.#ttlMs;
    await this.#write((tx) => tx.run(this.#q.upsert, [this.#newId(otpCodesTable.options.prefix), table, email, this.#hash(table, email, code), now, expiresAt]));
    return { code, expiresAt };
  }

  /**
   * True when `code` is the live code of (table, email), which is then used up. Each call spends
   * one of the code's 5 attempts first. Pass the job's transaction to make it atomic with what
   * follows (creating the row): if that fails, the code is not used up.
   */
  async verify(table: string, email: string, code: unknown, tx?: SqlRunner): Promise<boolean> {
    if (typeof code !== 'string' || !CODE_RE.test(code)) {
      // A malformed guess still spends an attempt: otherwise it is a free probe.
      await this.#run(tx, (r) => r.run(this.#q.spend, [table, email, this.#now()]));
      return false;
    }
    return this.#run(tx, async (r) => {
      const spent = await r.run(this.#q.spend, [table, email, this.#now()]);
      if (spent.changes !== 1) return false;
      const row = await r.get(this.#q.read, [table, email]);
      if (row === undefined) return false;
      const want = Buffer.from(String(row.hash), 'hex');
      const got = Buffer.from(this.#hash(table, email, code), 'hex');
      if (want.length !== got.length || !timingSafeEqual(want, got)) return false;
      return (await r.run(this.#q.use, [this.#now(), row.id])).changes === 1;
    });
  }

  /** Deletes expired codes; answers how many. */
  async purgeExpired(): Promise<number> {
    return this.#write(async (tx) => (await tx.run(this.#q.purge, [this.#now()])).changes);
  }

  #run<T>(tx: SqlRunner | undefined, fn: (r: SqlRunner) => Promise<T>): Promise<T> {
    return tx === undefined ? this.#write(fn) : fn(tx);
  }
}
