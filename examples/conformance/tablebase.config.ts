/**
 * The conformance project of docs/reference/conformance.md. Acceptance tests outside the repository serve it exactly
 * as written there: keep it as specified.
 */
import { authTable, column, defineProject, NotFoundError, pushFromEnv, table, UserError, view, type Jwt, type TablePolicies } from 'tablebase';

const anyone = () => true;
const tokenPresent = (jwt: Jwt | null) => jwt !== null;
const isAdmin = (jwt: Jwt | null) => jwt?.admin.isAdmin === true;
const unlimited: TablePolicies = { get: null, list: null, count: null, create: null, update: null, delete: null };
const openTable = { canCreate: anyone, canList: anyone, canView: anyone, canUpdate: anyone, canDelete: anyone, canCount: anyone };

const users = authTable('users', {
  prefix: 'us',
  columns: {
    displayName: column.text().nullable(),
    plan: column.text().default('free'),
  },
  signUpFields: ['displayName'],
  claims: (user) => ({ plan: user.plan }),
  authRules: { canSignUp: anyone, canSignIn: anyone, canPasswordReset: anyone },
  authHooks: {
    onSignUp: async (ctx, user) => {
      await ctx.email.sendVerification(user, 'users');
    },
  },
  rules: { canView: tokenPresent, canCount: anyone, canList: isAdmin, canUpdate: tokenPresent },
  rowRules: {
    canView: (jwt, row) => isAdmin(jwt) || jwt?.userId === row.id,
    canUpdate: (jwt, before) => jwt?.userId === before.id,
  },
  // docs/reference/auth.md, docs/reference/conformance.md: OTP (with sign-up), magic links, and the OpenID Connect provider `test` when OIDC_ISSUER is set.
  otp: { signUp: true },
  magicLink: true,
  oauth: process.env.OIDC_ISSUER
    ? { test: { type: 'oidc', issuer: process.env.OIDC_ISSUER, clientId: process.env.OIDC_CLIENT_ID ?? '', clientSecret: process.env.OIDC_CLIENT_SECRET || undefined } }
    : undefined,
  policies: { signUp: null, signIn: null, refresh: null, verifyEmail: null, confirm: null, passwordReset: null, otp: null, magicLink: null, oauth: null },
});

const admins = authTable('admins', {
  prefix: 'ad',
  columns: {},
  admin: true,
  authRules: { canSignIn: anyone, canSignUp: () => false, canPasswordReset: () => false },
});

const tasks = table('tasks', {
  prefix: 'tk',
  columns: {
    title: column.text(),
    isComplete: column.boolean().default(false),
    priority: column.integer().default(0),
    score: column.real().default(0),
    ownerId: column.text().nullable(),
    tags: column.list('text').default([]),
    completedAt: column.updatedWhen('isComplete'),
    createdAt: column.createdAt(),
    updatedAt: column.updatedAt(),
  },
  rules: {
    canCreate: anyone,
    canList: anyone,
    canCount: anyone,
    canView: anyone,
    canUpdate: tokenPresent,
    canDelete: tokenPresent,
    custom: { complete: tokenPresent, archive: anyone },
    requiresPerRowCheck: false,
  },
  operations: {
    // docs/reference/data.md: 404 when no row matches.
    complete: async (ctx, { where, many, limit }) => {
      const rows = await ctx.db.update('tasks', where, [{ column: 'isComplete', value: true }], { many, limit });
      if (rows.length === 0) throw new NotFoundError('No task matches');
      return many ? rows : rows[0];
    },
  },
  policies: { ...unlimited, custom: { complete: null, archive: null } },
});

const notes = table('notes', {
  prefix: 'nt',
  columns: { body: column.text(), ownerId: column.text(), createdAt: column.createdAt(), updatedAt: column.updatedAt() },
  rules: { canCreate: tokenPresent, canList: tokenPresent, canView: tokenPresent, canUpdate: tokenPresent, canDelete: tokenPresent, canCount: tokenPresent },
  rowRules: { canView: (jwt, row) => row.ownerId === jwt?.userId },
  hooks: {
    beforeCreate: (ctx, object) => ({ ...object, ownerId: ctx.jwt!.userId }),
  },
  policies: unlimited,
});

const secrets = table('secrets', { prefix: 'sc', columns: { value: column.text() } });

const events = table('events', {
  prefix: 'ev',
  columns: { title: column.text(), kind: column.text().nullable(), createdAt: column.createdAt(), updatedAt: column.updatedAt() },
  rules: openTable,
  hooks: {
    beforeCreate: (_ctx, object) => {
      if (object.title === 'forbidden') throw new UserError('title is forbidden');
    },
    beforeUpdate: (_ctx, { updates }) => {
      if (updates.some((u) => u.column === 'title' && u.value === 'forbidden')) throw new UserError('title is forbidden');
    },
    beforeDelete: (_ctx, row) => {
      if (row.kind === 'locked') throw new UserError('event is locked');
    },
    afterCreateSuccess: (ctx, row) => ctx.mutate.create('audit', { action: 'create', ref: row.id }),
    afterUpdateSuccess: (ctx, { after }) => ctx.mutate.create('audit', { action: 'update', ref: after.id }),
    afterDeleteSuccess: (ctx, row) => ctx.mutate.create('audit', { action: 'delete', ref: row.id }),
  },
  policies: unlimited,
});

const audit = table('audit', {
  prefix: 'au',
  columns: { action: column.text(), ref: column.text(), createdAt: column.createdAt() },
  rules: { canList: anyone, canCount: anyone, canView: anyone },
  policies: unlimited,
});

const chain = table('chain', {
  prefix: 'ch',
  columns: { depth: column.integer() },
  rules: openTable,
  // Each row queues the next; the 10-mutation cap stops the chain at 11 rows (docs/reference/rules-and-hooks.md).
  hooks: { afterCreateSuccess: (ctx, row) => ctx.mutate.create('chain', { depth: row.depth + 1 }) },
  policies: unlimited,
});

const limited = table('limited', {
  prefix: 'lm',
  columns: { title: column.text(), n: column.integer().default(0) },
  rules: { ...openTable, custom: { bump: anyone } },
  operations: {
    bump: async (ctx, { where, many, limit }) => {
      const rows = await ctx.db.update('limited', where, [{ column: 'n', value: { increment: 1 } }], { many, limit });
      if (rows.length === 0) throw new NotFoundError();
      return many ? rows : rows[0];
    },
  },
  policies: {
    get: { maxRequests: 3, window: '10s' },
    list: { maxRequests: 3, window: '10s' },
    count: { maxRequests: 3, window: '10s' },
    create: { maxRequests: 3, window: '10s' },
    delete: null,
    custom: { bump: { maxRequests: 2, window: '10s' } },
  },
});

const big = table('big', { prefix: 'bg', columns: { payload: column.text() }, rules: openTable, policies: unlimited });

const cronLog = table('cron_log', {
  prefix: 'cl',
  columns: { job: column.text(), createdAt: column.createdAt() },
  rules: { canList: anyone, canCount: anyone },
});

const messages = table('messages', {
  prefix: 'ms',
  columns: { toUserId: column.text(), text: column.text(), createdAt: column.createdAt() },
  rules: { canCreate: tokenPresent, canList: tokenPresent, canView: tokenPresent, canCount: tokenPresent },
  hooks: {
    // docs/reference/push.md: returns once the deliveries are durably queued; delivery runs in the background.
    afterCreateSuccess: async (ctx, row) => {
      await ctx.push.send({ userId: row.toUserId, title: 'New message', body: row.text, data: { messageId: row.id } });
    },
  },
  policies: unlimited,
});

const taskBoard = view('task_board', {
  from: tasks,
  joins: [{ table: users, type: 'left', on: [tasks.col('ownerId'), users.col('id')] }],
  select: {
    id: tasks.col('id'),
    title: tasks.col('title'),
    isComplete: tasks.col('isComplete'),
    ownerEmail: users.col('email').nullable(),
  },
  rules: { canList: anyone, canView: anyone, canCount: anyone },
  policies: { get: null, list: null, count: null },
});

export default defineProject({
  name: 'conformance',
  tables: [users, admins, tasks, notes, secrets, events, audit, chain, limited, big, cronLog, messages],
  views: [taskBoard],
  photos: {
    maxBytes: 262144,
    allowedMimeTypes: ['image/png', 'image/jpeg'],
    rules: {
      canUpload: tokenPresent,
      canDelete: (jwt, photo) => isAdmin(jwt) || (jwt !== null && photo.ownerId === jwt.userId),
    },
  },
  cron: [
    {
      name: 'heartbeat',
      schedule: '*/2 * * * * *',
      run: async (ctx) => {
        await ctx.db.create('cron_log', { job: 'heartbeat' });
      },
    },
  ],
  // Each provider only when its PUSH_* variables are set (docs/reference/conformance.md).
  push: pushFromEnv(process.env),
  email: {
    links: {
      verify: 'http://localhost/verify?token={token}',
      reset: 'http://localhost/reset?token={token}',
      magicLink: 'http://localhost/magic?token={token}',
      changeEmail: 'http://localhost/change-email?token={token}',
    },
  },
  auth: { redirectAllowList: ['http://localhost/app'] },
  openapi: { license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' } },
});
