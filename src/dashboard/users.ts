/**
 * Admin actions on auth-table rows (docs/reference/dashboard.md Users): mark verified, send a password reset,
 * revoke every session. Each is logged with the admin's id.
 */
import type { AuthServices } from '../auth/index.js';
import { ApiError, badRequest } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';
import type { Jwt } from '../define/types.js';
import { collectionOrThrow } from '../pipeline/resolve.js';
import type { Row } from '../storage/plan.js';
import { selectRows, updateRowById } from '../storage/rows.js';
import { auditAdmin } from './audit.js';

function authTable(rt: Runtime, name: unknown): CollectionModel {
  const c = collectionOrThrow(rt.model, name, true);
  if (!c.auth) throw new ApiError('NOT_FOUND', 'Not an auth table');
  return c;
}

function plan(c: CollectionModel, id: unknown) {
  if (typeof id !== 'string' || id.length === 0 || id.length > 64) throw badRequest('/id', 'must be a row id');
  return { collection: c, where: { kind: 'cmp' as const, column: c.columns.get('id')!, op: 'eq' as const, value: id }, orderBy: [], limit: 1, offset: undefined };
}

async function findUser(rt: Runtime, c: CollectionModel, id: unknown): Promise<Row> {
  const [row] = await selectRows(rt.driver, rt.driver.dialect, plan(c, id));
  if (!row) throw new ApiError('NOT_FOUND', 'No such user');
  return row;
}

export function adminUsers(rt: Runtime, auth: AuthServices) {
  return {
    /** Auth tables, for the Users screen's table picker. */
    tables: (): string[] => rt.model.tables.filter((c) => c.auth).map((c) => c.name),

    async markVerified(admin: Jwt, table: unknown, id: unknown): Promise<Row> {
      const c = authTable(rt, table);
      const col = [...c.columnList].find((x) => x.spec.kind === 'isVerified');
      if (!col) throw new ApiError('NOT_FOUND', 'This table has no verification state');
      const row = await rt.writer.submit(async (tx, changes) => {
        const [before] = await selectRows(tx, rt.driver.dialect, plan(c, id));
        if (!before) throw new ApiError('NOT_FOUND', 'No such user');
        if (before[col.name] === true) return before;
        const after = await updateRowById(tx, rt.driver.dialect, c, before.id, new Map([[col, true]]));
        changes.push({ table: c.name, op: 'update', id: before.id, before, after });
        return after;
      });
      auditAdmin(rt.log, admin, { action: 'markVerified', table: c.name, id: row.id });
      return row;
    },

    /** Sends the built-in reset email with a fresh token; the project's canPasswordReset is not asked (an admin decided). */
    async sendReset(admin: Jwt, table: unknown, id: unknown): Promise<void> {
      const c = authTable(rt, table);
      const user = await findUser(rt, c, id);
      if (!rt.email) throw new ApiError('UNAVAILABLE', 'Email is not configured');
      await rt.email.sendPasswordReset({ id: user.id, email: String(user.email) }, c.name);
      auditAdmin(rt.log, admin, { action: 'sendReset', table: c.name, id: user.id });
    },

    /** Ends every session of the user; their access tokens stop working at once (docs/reference/auth.md). */
    async revokeSessions(admin: Jwt, table: unknown, id: unknown): Promise<number> {
      const c = authTable(rt, table);
      const user = await findUser(rt, c, id);
      const ids = await auth.sessions.revokeAllForUser({ table: c.name, userId: user.id }, 'user');
      auditAdmin(rt.log, admin, { action: 'revokeSessions', table: c.name, id: user.id, detail: String(ids.length) });
      return ids.length;
    },
  };
}

export type AdminUsers = ReturnType<typeof adminUsers>;
