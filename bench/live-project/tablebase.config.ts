/**
 * The live-query benchmark's project (bench/live.ts). One open table of chat-like messages,
 * streamed per `room` — the shape of a real live app — with an index on `room`, as such an app
 * would declare, so re-running one room's query reads that room's rows and not the whole table.
 * An admin table lets the benchmark read /dashboard/metrics (open streams, memory).
 */
import { authTable, column, defineProject, table } from 'tablebase';

const anyone = () => true;

const messages = table('messages', {
  prefix: 'ms',
  columns: {
    room: column.text(),
    body: column.text(),
    n: column.integer().default(0),
    createdAt: column.createdAt(),
  },
  indexes: [{ columns: ['room'] }],
  rules: { canCreate: anyone, canList: anyone, canView: anyone, canCount: anyone, canUpdate: anyone, canDelete: anyone, requiresPerRowCheck: false },
  policies: { get: null, list: null, count: null, create: null, update: null, delete: null },
});

const admins = authTable('admins', {
  prefix: 'ad',
  columns: {},
  admin: true,
  authRules: { canSignIn: anyone },
  policies: { signIn: null },
});

export default defineProject({ name: 'live-bench', tables: [messages, admins] });
