/** Every admin write is logged with the admin's id (issue #12, Security), never with values. */
import type { Logger } from 'pino';
import type { Jwt } from '../define/types.js';

export interface AdminAction {
  readonly action: string;
  readonly table?: string;
  readonly id?: string;
  readonly detail?: string;
}

export function auditAdmin(log: Logger, admin: Jwt, what: AdminAction): void {
  log.info({ adminId: admin.userId, adminTable: admin.table, ...what }, 'admin write');
}
