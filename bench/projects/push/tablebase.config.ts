/**
 * The project `bench/push.ts` serves: the conformance `messages` table and its push hook, an open
 * `pings` table for unrelated creates, and device routes without rate limits (the bench registers
 * 10,000 devices for one user). Providers come from the PUSH_* variables like the conformance project.
 */
import { authTable, column, defineProject, pushFromEnv, table } from 'tablebase';

const anyone = () => true;
const unlimited = { get: null, list: null, count: null, create: null, update: null, delete: null };

const users = authTable('users', {
  prefix: 'us',
  columns: {},
  authRules: { canSignUp: anyone, canSignIn: anyone },
  policies: { ...unlimited, signUp: null, signIn: null, refresh: null },
});

const messages = table('messages', {
  prefix: 'ms',
  columns: { toUserId: column.text(), text: column.text(), createdAt: column.createdAt() },
  rules: { canCreate: anyone, canList: anyone, canView: anyone, canCount: anyone },
  hooks: {
    afterCreateSuccess: async (ctx, row) => {
      await ctx.push.send({ userId: row.toUserId, title: 'New message', body: row.text, data: { messageId: row.id } });
    },
  },
  policies: unlimited,
});

const pings = table('pings', {
  prefix: 'pg',
  columns: { n: column.integer(), createdAt: column.createdAt() },
  rules: { canCreate: anyone, canList: anyone, canView: anyone, canCount: anyone },
  policies: unlimited,
});

export default defineProject({
  name: 'push-bench',
  tables: [users, messages, pings],
  push: { ...pushFromEnv(process.env), maxDevicesPerUser: 20_000, policies: { register: null, list: null, unregister: null } },
});
