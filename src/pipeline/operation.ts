/**
 * The Operation value: what HTTP hands the pipeline. Data flows one way: HTTP → Operation →
 * stages → storage (ARCHITECTURE.md).
 */
import type { CollectionModel } from '../core/model.js';
import type { Jwt } from '../define/types.js';

export type DataOp = 'get' | 'list' | 'count' | 'create' | 'createMany' | 'update' | 'updateMany' | 'delete' | 'deleteMany' | 'custom' | 'customMany' | 'streamOne' | 'streamList' | 'streamCount';

export interface Operation {
  readonly op: DataOp;
  readonly collection: CollectionModel;
  /** The parsed JSON body (an object; shape not yet checked). */
  readonly body: Record<string, unknown>;
  /** The Authorization header as sent; verified in step 2 (docs/reference/rules-and-hooks.md). */
  readonly authorization: string | undefined;
  /** Set by step 2: the decoded token, or null when none was sent. */
  jwt: Jwt | null;
  readonly ip: string;
  /** The custom operation's name for custom/customMany. */
  readonly custom?: string;
}

/** Rate-limit operation per docs/reference/rate-limits.md: many-forms and streams share their single/read form. */
export const POLICY_OP: Record<DataOp, string> = {
  get: 'get',
  streamOne: 'get',
  list: 'list',
  streamList: 'list',
  count: 'count',
  streamCount: 'count',
  create: 'create',
  createMany: 'create',
  update: 'update',
  updateMany: 'update',
  delete: 'delete',
  deleteMany: 'delete',
  custom: 'custom',
  customMany: 'custom',
};

/** The table rule deciding each operation (docs/reference/auth.md). */
export const RULE_OF: Record<DataOp, 'canView' | 'canList' | 'canCount' | 'canCreate' | 'canUpdate' | 'canDelete' | 'custom'> = {
  get: 'canView',
  streamOne: 'canView',
  list: 'canList',
  streamList: 'canList',
  count: 'canCount',
  streamCount: 'canCount',
  create: 'canCreate',
  createMany: 'canCreate',
  update: 'canUpdate',
  updateMany: 'canUpdate',
  delete: 'canDelete',
  deleteMany: 'canDelete',
  custom: 'custom',
  customMany: 'custom',
};

export const WRITE_OPS: ReadonlySet<DataOp> = new Set(['create', 'createMany', 'update', 'updateMany', 'delete', 'deleteMany', 'custom', 'customMany']);
