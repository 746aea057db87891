/**
 * `tablebase admin create --table T --email E --password P`: creates an admin row, or resets the
 * password of an existing one (and ends its sessions). The table must be an admin auth table.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hashPassword, SqlAuthStore, validatePasswordLength } from '../auth/index.js';
import { prepareSchema } from '../server/schema.js';
import { newId } from '../storage/ids.js';
import { insertRow, selectRows } from '../storage/rows.js';
import { openSqlite } from '../storage/sqlite/driver.js';
import { normalizeEmail } from '../storage/values.js';
import { WriteQueue } from '../storage/writer.js';
import { flag, type Args } from './args.js';
import { projectContext } from './project-context.js';
import { setUserColumns } from '../auth/users.js';
import type { Runtime } from '../core/runtime.js';

export async function admin(args: Args, sub: string | undefined): Promise<void> {
  if (sub !== 'create') throw new Error('usage: tablebase admin create --table T --email E --password P');
  const { model, config } = await projectContext(args);
  const tableName = flag(args, 'table') ?? model.tables.find((t) => t.auth?.admin)?.name;
  const c = tableName ? model.collections.get(tableName) : undefined;
  if (!c?.auth?.admin) throw new Error(`${tableName ?? '(none)'} is not an admin auth table (declare it with authTable(..., { admin: true }))`);
  const email = normalizeEmail(flag(args, 'email'), '--email');
  const password = validatePasswordLength(flag(args, 'password'), 8, 1024, '--password');
  mkdirSync(config.dataDir, { recursive: true });
  const driver = openSqlite(join(config.dataDir, 'db.sqlite'), { synchronous: config.synchronous });
  try {
    await prepareSchema(driver, model, config, 'apply');
    const hash = await hashPassword(password, config.passwordSecret);
    const writer = new WriteQueue(driver);
    const rt = { driver, now: () => new Date().toISOString() } as unknown as Runtime;
    const emailCol = c.columns.get('email')!;
    const existing = (await selectRows(driver, driver.dialect, { collection: c, where: { kind: 'cmp', column: emailCol, op: 'eq', value: email }, orderBy: [], limit: 1, offset: undefined }))[0];
    await writer.submit(async (tx, changes) => {
      if (existing) {
        await setUserColumns(rt, tx, c, existing.id, { password: hash }, changes);
        await new SqlAuthStore(driver.dialect).revokeAllForUser(tx, { table: c.name, userId: existing.id }, Date.now(), 'reset');
        return;
      }
      const now = rt.now();
      const values = new Map(
        c.columnList.map((col) => {
          const k = col.spec.kind;
          const v =
            k === 'id'
              ? newId(c.prefix!)
              : k === 'email' && col.name === 'email'
                ? email
                : k === 'password'
                  ? hash
                  : k === 'isVerified'
                    ? true
                    : k === 'createdAt' || k === 'updatedAt'
                      ? now
                      : col.spec.hasDefault
                        ? col.spec.default
                        : null;
          return [col, v] as const;
        }),
      );
      await insertRow(tx, driver.dialect, c, values);
    });
    console.log(existing ? `Reset the password of ${email} in ${c.name}.` : `Created admin ${email} in ${c.name}.`);
  } finally {
    await driver.close();
  }
}
