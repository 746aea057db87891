/**
 * The auth benchmark's project (bench/auth.ts): an auth table anyone may sign up to and sign in
 * with, and one table anyone may read, so a get with and without a bearer token runs the same
 * rules and SQL and differs only by the token check. No rate limits, no hooks, no row rules.
 */
import { authTable, column, defineProject, table } from 'tablebase';

const anyone = () => true;

const users = authTable('users', {
  prefix: 'us',
  columns: {},
  authRules: { canSignUp: anyone, canSignIn: anyone, canPasswordReset: anyone },
  // bench/auth.ts compares one-time codes and magic links with password sign-in.
  otp: { signUp: true },
  magicLink: true,
  policies: { signUp: null, signIn: null, refresh: null, verifyEmail: null, confirm: null, passwordReset: null, otp: null, magicLink: null },
});

const items = table('items', {
  prefix: 'it',
  columns: { title: column.text(), n: column.integer().default(0), createdAt: column.createdAt(), updatedAt: column.updatedAt() },
  rules: { canCreate: anyone, canView: anyone, canList: anyone, canCount: anyone, requiresPerRowCheck: false },
  policies: { get: null, list: null, count: null, create: null, update: null, delete: null },
});

export default defineProject({ name: 'bench-auth', tables: [users, items], auth: { policies: { confirm: null, refresh: null } } });
