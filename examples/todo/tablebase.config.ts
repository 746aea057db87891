/**
 * The example `npm start` serves: a to-do app with accounts. Signed-in users manage their own
 * tasks; anyone may read the public board view. See README.md beside this file for curl calls.
 */
import { authTable, column, defineProject, table, view, type Jwt } from 'tablebase';

const signedIn = (jwt: Jwt | null) => jwt !== null;

const users = authTable('users', {
  prefix: 'us',
  columns: { name: column.text().nullable() },
  signUpFields: ['name'],
  authRules: { canSignUp: () => true, canSignIn: () => true, canPasswordReset: () => true },
  rules: { canView: signedIn },
  rowRules: { canView: (jwt, row) => row.id === jwt?.userId },
});

/** Who may sign in to the admin dashboard at /_ (create one with `npx tablebase admin create`). */
const admins = authTable('admins', {
  prefix: 'ad',
  columns: {},
  admin: true,
  authRules: { canSignIn: () => true, canSignUp: () => false, canPasswordReset: () => false },
});

const tasks = table('tasks', {
  prefix: 'tk',
  columns: {
    title: column.text(),
    isComplete: column.boolean().default(false),
    priority: column.integer().default(0),
    tags: column.list('text').default([]),
    // Set by the beforeCreate hook below, so clients may leave it out of a create.
    ownerId: column.text().references('users').index().filledBy('hook'),
    completedAt: column.updatedWhen('isComplete'),
    createdAt: column.createdAt(),
    updatedAt: column.updatedAt(),
  },
  rules: {
    canCreate: signedIn,
    canList: signedIn,
    canView: signedIn,
    canCount: signedIn,
    canUpdate: signedIn,
    canDelete: signedIn,
    custom: { complete: signedIn },
  },
  rowRules: {
    canView: (jwt, row) => row.ownerId === jwt?.userId,
    canUpdate: (jwt, before, after) => before.ownerId === jwt?.userId && after.ownerId === before.ownerId,
    canDelete: (jwt, row) => row.ownerId === jwt?.userId,
  },
  hooks: {
    // A user's task always belongs to that user, whatever the client sent. An admin creating a
    // task in the dashboard (a token of `admins`) picks its owner among the users instead.
    beforeCreate: (ctx, object) => (ctx.jwt?.table === 'users' ? { ...object, ownerId: ctx.jwt.userId } : object),
  },
  operations: {
    complete: async (ctx, { where, many }) => {
      const mine = { and: [where, { ownerId: { eq: ctx.jwt!.userId } }] };
      const rows = await ctx.db.update('tasks', mine, [{ column: 'isComplete', value: true }], { many });
      return many ? rows : (rows[0] ?? null);
    },
  },
});

const board = view('board', {
  from: tasks,
  select: { id: tasks.col('id'), title: tasks.col('title'), isComplete: tasks.col('isComplete'), createdAt: tasks.col('createdAt') },
  defaultOrder: [{ column: 'createdAt', direction: 'desc' }],
  rules: { canList: () => true, canCount: () => true, canView: () => true },
});

export default defineProject({ name: 'todo', tables: [users, admins, tasks], views: [board] });
