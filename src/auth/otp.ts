/**
 * One-time sign-in codes (docs/reference/auth.md): 6 digits, valid 10 minutes, single-use, one live code per
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
import type { Dialect } from '../storage/dialect.js';
import type { SqlRunner } from '../storage/driver.js';
import { newId as defaultNewId } from '../storage/ids.js';
import { otpRepo, type OtpRepo } from '../storage/repos/otp.js';
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

export class OtpCodes {
  readonly #q: OtpRepo;
  readonly #write: WriteFn;
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #newId: (prefix: string) => string;

  constructor(o: OtpCodesOptions) {
    this.#q = otpRepo(o.dialect, otpCodesTable);
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
    await this.#write((tx) => this.#q.upsert(tx, { id: this.#newId(otpCodesTable.options.prefix), table, email, hash: this.#hash(table, email, code), now, expiresAt }));
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
      await this.#run(tx, (r) => this.#q.spend(r, table, email, this.#now(), OTP_MAX_ATTEMPTS));
      return false;
    }
    return this.#run(tx, async (r) => {
      const spent = await this.#q.spend(r, table, email, this.#now(), OTP_MAX_ATTEMPTS);
      if (spent.changes !== 1) return false;
      const row = await this.#q.read(r, table, email);
      if (row === undefined) return false;
      const want = Buffer.from(String(row.hash), 'hex');
      const got = Buffer.from(this.#hash(table, email, code), 'hex');
      if (want.length !== got.length || !timingSafeEqual(want, got)) return false;
      return (await this.#q.use(r, String(row.id), this.#now())).changes === 1;
    });
  }

  /** Deletes expired codes; answers how many. */
  async purgeExpired(): Promise<number> {
    return this.#write(async (tx) => (await this.#q.purge(tx, this.#now())).changes);
  }

  #run<T>(tx: SqlRunner | undefined, fn: (r: SqlRunner) => Promise<T>): Promise<T> {
    return tx === undefined ? this.#write(fn) : fn(tx);
  }
}
