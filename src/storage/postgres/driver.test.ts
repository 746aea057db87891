import { describe, expect, it } from 'vitest';
import { otpCodesTable } from '../../auth/schema.js';
import { devicesTable, queueTable } from '../../push/schema.js';
import { driverConformance } from '../driver-conformance.js';
import { repositoryConformance } from '../repos-conformance.js';
import { postgresHarness } from '../test-drivers.js';
import { openPostgres } from './driver.js';
import { parseTimestamp } from './types.js';

driverConformance(postgresHarness);
repositoryConformance(postgresHarness, { otp: otpCodesTable, devices: devicesTable, queue: queueTable, declared: [otpCodesTable, devicesTable, queueTable] });

describe('postgres driver specifics', () => {
  it('reads timestamps as ISO strings with milliseconds in UTC', () => {
    expect(parseTimestamp('2026-01-02 03:04:05+00')).toBe('2026-01-02T03:04:05.000Z');
    expect(parseTimestamp('2026-01-02 03:04:05.12+00')).toBe('2026-01-02T03:04:05.120Z');
    expect(parseTimestamp('2026-01-02 03:04:05.123456+00')).toBe('2026-01-02T03:04:05.123Z');
  });

  it('refuses an unreachable server with one line naming the host, not the password', async () => {
    const err = await openPostgres('postgres://u:secret@127.0.0.1:1/db').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^cannot connect to PostgreSQL at 127\.0\.0\.1:1\/db: /);
    expect((err as Error).message).not.toContain('secret');
  });
});
