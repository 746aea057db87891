/**
 * The files `tablebase init` writes (issue #16 item 3). The config declares one auth table and
 * one table whose rules and row rules keep each user's rows private, so the first requests show
 * sign-up, a bearer token and an owner check at work.
 */

export interface TemplateOptions {
  /** npm package name of the new project. */
  readonly name: string;
  /** What the project's package.json depends on for `tablebase` (`file:/path` or `^0.1.0`). */
  readonly tablebaseSpec: string;
}

const CONFIG = `/**
 * Your Tablebase project. \`npm run dev\` serves it and restarts when this file changes;
 * \`npm run typecheck\` checks it against the installed tablebase package.
 */
import { authTable, column, defineProject, table, type Jwt } from 'tablebase';

const signedIn = (jwt: Jwt | null) => jwt !== null;

/** Accounts: sign up, sign in, refresh, reset passwords (routes under /auth). */
const users = authTable('users', {
  prefix: 'us',
  columns: { name: column.text().nullable() },
  signUpFields: ['name'],
  authRules: { canSignUp: () => true, canSignIn: () => true, canPasswordReset: () => true },
  rules: { canView: signedIn },
  rowRules: { canView: (jwt, row) => row.id === jwt?.userId },
});

/**
 * Who may sign in to the admin dashboard at /_ . Create the first admin with the command
 * \`npm run dev\` prints (\`npx tablebase admin create --project . --table admins ...\`).
 */
const admins = authTable('admins', {
  prefix: 'ad',
  columns: {},
  admin: true,
  authRules: { canSignIn: () => true, canSignUp: () => false, canPasswordReset: () => false },
});

/** Notes: each signed-in user sees and changes only their own. */
const notes = table('notes', {
  prefix: 'nt',
  columns: {
    text: column.text(),
    isDone: column.boolean().default(false),
    // Set by the beforeCreate hook below, so clients may leave it out of a create.
    ownerId: column.text().references('users').index().filledBy('hook'),
    createdAt: column.createdAt(),
    updatedAt: column.updatedAt(),
  },
  rules: { canCreate: signedIn, canList: signedIn, canView: signedIn, canCount: signedIn, canUpdate: signedIn, canDelete: signedIn },
  rowRules: {
    canView: (jwt, row) => row.ownerId === jwt?.userId,
    canUpdate: (jwt, before, after) => before.ownerId === jwt?.userId && after.ownerId === before.ownerId,
    canDelete: (jwt, row) => row.ownerId === jwt?.userId,
  },
  hooks: {
    // A user's note always belongs to that user, whatever the client sent. An admin creating a
    // note in the dashboard (a token of \`admins\`) picks its owner instead.
    beforeCreate: (ctx, object) => (ctx.jwt?.table === 'users' ? { ...object, ownerId: ctx.jwt.userId } : object),
  },
});

export default defineProject({ name: '__NAME__', tables: [users, admins, notes] });
`;

const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["**/*.ts"],
  "exclude": ["node_modules", ".tablebase"]
}
`;

const GITIGNORE = `# Tablebase data (SQLite database, photos, email outbox) and secrets
.tablebase/
.env
.env.*
node_modules/
`;

const README = `# __NAME__

A Tablebase project: tables, rules and hooks in \`tablebase.config.ts\`,
served as an HTTP API. Secrets for development are in \`.env\` (random, never commit it).

## Next three commands

\`\`\`sh
npm run dev                      # serve on http://localhost:8080; restarts when the config changes
curl -s -X POST localhost:8080/auth/sign-up -H 'content-type: application/json' \\
  -d '{"type":"signUp","table":"users","email":"ada@example.com","password":"correct horse"}'
npm install && npm run typecheck # TypeScript, then check every .ts file against the package
\`\`\`

\`npm run dev\` prints the admin dashboard's address (http://localhost:8080/_) and the command that
creates its first admin:

\`\`\`sh
npx tablebase admin create --project . --table admins --email you@example.com --password 'a long password'
\`\`\`

The sign-up answers \`{"data":{"accessToken":...}}\`. Send it as \`authorization: Bearer <token>\`:

\`\`\`sh
curl -s -X POST localhost:8080/db -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
  -d '{"table":"notes","object":{"text":"Hello"}}'
curl -s -G localhost:8080/db/list -H "authorization: Bearer $TOKEN" --data-urlencode 'body={"table":"notes"}'
\`\`\`

## Later

- \`npx tablebase migrate generate\` writes a migration for each schema change (\`dev\` does it for you);
  commit \`migrations/\`.
- \`npx tablebase gen client\` (\`npm run client\`) writes a typed TypeScript client to \`tablebase-client.ts\`
  (\`--out FILE\` to put it elsewhere); \`npx tablebase openapi\` prints the
  OpenAPI document (for openapi-typescript and friends).
- Production: \`npm start\` (\`tablebase serve\`) with \`JWT_SECRET\` and \`PASSWORD_SECRET\` set in the
  environment (32+ characters each, different). Back up \`.tablebase/\`.
`;

const PACKAGE = (o: TemplateOptions) =>
  `${JSON.stringify(
    {
      name: o.name,
      private: true,
      type: 'module',
      scripts: { dev: 'tablebase dev', start: 'tablebase serve', typecheck: 'tsc -p .', client: 'tablebase gen client' },
      dependencies: { tablebase: o.tablebaseSpec },
      // npm 11 lists dependencies whose install scripts nobody approved (npm 12 will block them):
      // these three fetch or build native binaries Tablebase needs (SQLite, its bundler, images).
      allowScripts: { 'better-sqlite3': true, esbuild: true, sharp: true },
      devDependencies: { typescript: '^5.9.0', '@types/node': '^20.0.0' },
    },
    null,
    2,
  )}\n`;

/** File name → contents, in the order they are written. */
export function projectFiles(o: TemplateOptions): [string, string][] {
  const named = (s: string) => s.replaceAll('__NAME__', o.name);
  return [
    ['tablebase.config.ts', named(CONFIG)],
    ['package.json', PACKAGE(o)],
    ['tsconfig.json', TSCONFIG],
    ['README.md', named(README)],
    ['.gitignore', GITIGNORE],
  ];
}
