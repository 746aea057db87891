/**
 * What a newcomer does next, said the same way by `dev`/`serve` at start-up and by the dashboard's
 * sign-in page (issue #27 items 4 and 5): where the dashboard is, and the exact command that
 * creates an admin — with `--project`, relative to the folder the server was started from, so it
 * can be pasted into the same terminal. docs/reference/dashboard.md.
 */
import { relative } from 'node:path';

/** A shell word: left bare when safe, single-quoted otherwise. */
const shellWord = (s: string) => (/^[\w./@:=+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** `--project` as typed from `cwd`: `.` when the server runs in the project folder. */
export function projectArg(projectDir: string, cwd = process.cwd()): string {
  return shellWord(relative(cwd, projectDir) || '.');
}

/** The `admin create` command line for the project's first admin table, or undefined when it has none. */
export function adminCommand(adminTables: readonly string[], projectDir: string, cwd = process.cwd()): string | undefined {
  const table = adminTables[0];
  if (!table) return undefined;
  return `npx tablebase admin create --project ${projectArg(projectDir, cwd)} --table ${shellWord(table)} --email you@example.com --password 'a long password'`;
}

/** What to add to tablebase.config.ts when no auth table has `admin: true`. */
export const ADMIN_TABLE_SNIPPET = `const admins = authTable('admins', { prefix: 'ad', columns: {}, admin: true, authRules: { canSignIn: () => true } });`;
