/**
 * What the writer announces after each commit: one entry per row written, with before and after
 * images in client (JSON) form. Live queries hang off these, never off HTTP.
 */
import type { Row } from './plan.js';

export interface Change {
  readonly table: string;
  readonly op: 'insert' | 'update' | 'delete';
  readonly id: string;
  /** null for inserts. */
  readonly before: Row | null;
  /** null for deletes. */
  readonly after: Row | null;
}

export type CommitListener = (changes: readonly Change[]) => void;
