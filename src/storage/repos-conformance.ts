/**
 * The driver conformance suite's part for what moved into storage with issue #20: the SQL
 * builder's placeholders and the repositories' key behaviours (upsert, RETURNING, the
 * skip-locked claim, the blob round trip), the same assertions on every driver, on the real
 * internal tables. sqlite/driver.test.ts and postgres/driver.test.ts both run it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import { defineProject } from '../define/index.js';
import type { AnyTable } from '../define/table.js';
import type { Driver } from './driver.js';
import { migrationStatements } from './migrations/ddl.js';
import { diffSchemas } from './migrations/diff.js';
import { schemaOf } from './migrations/snapshot.js';
import { blobsRepo, prepareBlobTable } from './repos/blobs.js';
import { otpRepo } from './repos/otp.js';
import { pushRepo, type PushTables } from './repos/push.js';
import { as, join, returning, sql, sqlExec, tableRef } from './sql.js';
import type { DriverHarness } from './test-drivers.js';

/** The real internal tables, passed in by the driver test files (storage never imports the features that declare them). */
export interface ConformanceTables {
  readonly otp: Parameters<typeof otpRepo>[1];
  readonly devices: PushTables['devices'];
  readonly queue: PushTables['queue'];
  /** The same tables as migrations take them. */
  readonly declared: readonly AnyTable[];
}

export function repositoryConformance(harness: DriverHarness, tables: ConformanceTables): void {
  const { otp, devices, queue } = tables;
  const model = compileProject(defineProject({ tables: [] }), tables.declared);
  describe(`storage repositories and the sql builder: ${harness.name}`, () => {
    let driver: Driver;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      ({ driver, dispose } = await harness.open());
      const next = schemaOf(model, driver.dialect);
      await driver.execScript(migrationStatements(diffSchemas(null, next), { dialect: driver.dialect, prev: null, next, now: '2026-01-01T00:00:00.000Z' }).join(';\n'));
    });
    afterAll(async () => dispose?.());

    it('binds values through nested fragments and lists, in order, on this dialect', async () => {
      const x = sqlExec(driver.dialect);
      const D = tableRef(devices);
      await driver.transaction(async (tx) => {
        for (const [i, user] of ['u1', 'u2', 'u3', "u'4"].entries()) {
          await x.run(
            tx,
            sql`INSERT INTO ${D.table} (${join([D.c.id, D.c.platform, D.c.token, D.c.subscription, D.c.userId, D.c.createdAt, D.c.updatedAt])}) VALUES (${join([`pd_${i}`, 'fcm', `t${i}`, null, user, 'c', 'u'])})`,
          );
        }
      });
      const inner = sql`${D.c.userId} IN (${join(['u3', "u'4", 'u1'])})`;
      const rows = await x.all(driver, sql`SELECT ${as(D.c.id, 'id')} FROM ${D.table} WHERE ${D.c.platform} = ${'fcm'} AND ${inner} AND ${D.c.token} <> ${'t0'} ORDER BY ${D.c.id}`);
      expect(rows.map((r) => r.id)).toEqual(['pd_2', 'pd_3']);
    });

    it('upserts: a second insert of the same key replaces the row in place', async () => {
      const repo = otpRepo(driver.dialect, otp);
      await driver.transaction((tx) => repo.upsert(tx, { id: 'oc_1', table: 'users', email: 'a@x', hash: 'h1', now: 1, expiresAt: 1000 }));
      expect((await driver.transaction((tx) => repo.spend(tx, 'users', 'a@x', 10, 5))).changes).toBe(1);
      await driver.transaction((tx) => repo.upsert(tx, { id: 'oc_2', table: 'users', email: 'a@x', hash: 'h2', now: 20, expiresAt: 2000 }));
      const C = tableRef(otp);
      const all = await sqlExec(driver.dialect).all(driver, sql`SELECT ${as(C.c.id, 'id')}, ${as(C.c.codeHash, 'hash')}, ${as(C.c.attempts, 'attempts')} FROM ${C.table}`);
      expect(all.map((r) => ({ ...r, attempts: Number(r.attempts) }))).toEqual([{ id: 'oc_1', hash: 'h2', attempts: 0 }]);
    });

    it('answers the rows a write changed with RETURNING', async () => {
      const x = sqlExec(driver.dialect);
      const C = tableRef(otp);
      const inserted = await driver.transaction((tx) =>
        x.all(
          tx,
          sql`INSERT INTO ${C.table} (${join([C.c.id, C.c.authTable, C.c.email, C.c.codeHash, C.c.attempts, C.c.createdAt, C.c.expiresAt])}) VALUES (${join(['oc_r', 'users', 'r@x', 'h', 0, 1, 2])})${returning(driver.dialect, [as(C.c.id, 'id'), as(C.c.email, 'email')])}`,
        ),
      );
      expect(inserted).toEqual([{ id: 'oc_r', email: 'r@x' }]);
      const updated = await driver.transaction((tx) =>
        x.all(tx, sql`UPDATE ${C.table} SET ${C.c.attempts} = ${C.c.attempts} + 1 WHERE ${C.c.email} = ${'r@x'}${returning(driver.dialect, [as(C.c.id, 'id')])}`),
      );
      expect(updated).toEqual([{ id: 'oc_r' }]);
    });

    it('claims due queue rows once: a second claimer gets the others (skipping locked rows where claims run at once)', async () => {
      const repo = pushRepo(driver.dialect, { devices, queue });
      await driver.transaction(async (tx) => {
        await repo.insertDevice(tx, { id: 'pd_c', platform: 'apns', token: 'tc', subscription: null, userId: 'uc', now: 'n' });
        await repo.insertQueue(
          tx,
          ['pq_1', 'pq_2', 'pq_3', 'pq_4'].map((id, i) => ({ id, deviceId: 'pd_c', platform: 'apns', payload: '{}', now: 100 + i, expiresAt: 10_000 })),
        );
      });
      const claim = (tx: Parameters<Parameters<Driver['transaction']>[0]>[0]) =>
        repo.claimable(tx, 'apns', 1000, 2, ['']).then(async (rows) => {
          const ids = rows.map((r) => String(r.id));
          if (ids.length > 0) await repo.claim(tx, ids, 5000);
          return ids;
        });
      let first: string[] = [];
      let second: string[] = [];
      if (driver.dialect.supportsSkipLocked) {
        // The first claim holds its rows locked while the second runs: the second must skip, not wait.
        await driver.transaction(async (a) => {
          first = await claim(a);
          second = await driver.transaction((b) => claim(b));
        });
      } else {
        first = await driver.transaction((a) => claim(a));
        second = await driver.transaction((b) => claim(b));
      }
      expect(first).toEqual(['pq_1', 'pq_2']);
      expect(second).toEqual(['pq_3', 'pq_4']);
      expect(await driver.transaction((c) => claim(c))).toEqual([]);
      expect(Number((await repo.pending(driver))?.n)).toBe(4);
    });

    it('stores bytes and reads them back unchanged (the blob round trip)', async () => {
      await prepareBlobTable(driver);
      await prepareBlobTable(driver); // idempotent: every node runs it at start
      const repo = blobsRepo(driver.dialect);
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
      await driver.transaction(async (tx) => {
        await repo.insertPart(tx, 'ph_1', 0, bytes);
        await repo.insertPart(tx, 'ph_1', 1, Buffer.alloc(0));
        await repo.insertPart(tx, 'ph_1/10x10', 0, Buffer.from('thumb'));
        await repo.insertPart(tx, 'ph_10', 0, Buffer.from('other'));
      });
      expect(Buffer.compare((await repo.part(driver, 'ph_1', 0))!.bytes as Buffer, bytes)).toBe(0);
      expect(((await repo.part(driver, 'ph_1', 1))!.bytes as Buffer).length).toBe(0);
      expect(await repo.exists(driver, 'ph_1')).toBe(true);
      await driver.transaction((tx) => repo.remove(tx, 'ph_1'));
      expect(await repo.exists(driver, 'ph_1')).toBe(false);
      expect(await repo.part(driver, 'ph_1/10x10', 0)).toBeUndefined();
      expect(String((await repo.part(driver, 'ph_10', 0))!.bytes)).toBe('other');
    });
  });
}
