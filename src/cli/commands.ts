/**
 * The CLI's table of contents: every command, the flags it accepts, and the file that runs it
 * (docs/reference/configuration.md). A flag not listed for a command is refused (see args.ts).
 */
import { checkDatabaseUrl, checkRedisUrl, checkStorageUrl } from '../core/config.js';
import { checkBackupUrl } from '../core/backup-settings.js';
import { checkWorkers } from '../server/workers.js';
import type { Args, FlagSpec } from './args.js';

const oneOf =
  (name: string, values: readonly string[]) =>
  (v: string): string | undefined =>
    values.includes(v) ? undefined : `--${name} must be ${values.join(' or ')}, not "${v}"`;

const PROJECT: FlagSpec = { name: 'project', value: 'DIR', help: 'folder holding tablebase.config.ts (default: .)' };
const DATA: FlagSpec = { name: 'data', value: 'DIR', help: 'data folder (default: <project>/.tablebase)' };
const HOST: FlagSpec = { name: 'host', value: 'HOST', help: 'address to listen on (HOST; default: localhost)' };
const PORT: FlagSpec = {
  name: 'port',
  value: 'PORT',
  help: 'port to listen on (PORT; default: 8080; 0 picks a free one)',
  check: (v) => (/^\d{1,5}$/.test(v) && Number(v) <= 65535 ? undefined : `--port must be a whole number from 0 to 65535, not "${v}"`),
};
const DATABASE: FlagSpec = { name: 'database', value: 'URL', help: 'postgres:// URL (DATABASE_URL; default: SQLite in the data folder)', check: checkDatabaseUrl };
const REDIS: FlagSpec = { name: 'redis', value: 'URL', help: 'redis:// or rediss:// URL shared by the nodes (REDIS_URL; default: none)', check: checkRedisUrl };
const TLS_CERT: FlagSpec = { name: 'tls-cert', value: 'FILE', help: 'PEM certificate chain: serve HTTPS with HTTP/2 and HTTP/1.1 (TLS_CERT; needs --tls-key)' };
const TLS_KEY: FlagSpec = { name: 'tls-key', value: 'FILE', help: 'PEM private key of --tls-cert (TLS_KEY)' };
const WORKERS: FlagSpec = {
  name: 'workers',
  value: 'N',
  help: 'worker processes on one port: a number or auto, one per CPU (WORKERS; default: auto for serve, 1 for dev)',
  check: (v) => checkWorkers(v),
};
const STORAGE: FlagSpec = {
  name: 'storage',
  value: 'URL',
  help: 'where photos live: file:///path or s3://bucket/prefix, credentials from S3_* (STORAGE_URL; default: <data>/photos)',
  check: checkStorageUrl,
};
const BACKUP: FlagSpec = { name: 'backup', value: 'URL', help: 'continuous backup to file:///abs/path or s3://bucket/prefix (BACKUP_URL; default: none)', check: (v) => checkBackupUrl(v) };
const SERVER = [PROJECT, DATA, HOST, PORT, DATABASE, REDIS, WORKERS, STORAGE, BACKUP, TLS_CERT, TLS_KEY];
const FROM: FlagSpec = { name: 'from', value: 'URL', help: 'the backup destination (file:///abs/path or s3://bucket/prefix)', check: (v) => checkBackupUrl(v, '--from') };
const AT: FlagSpec = { name: 'at', value: 'T', help: 'ISO-8601 time or epoch milliseconds (default: the latest)' };

export interface Command {
  /** Command words, e.g. `migrate generate`. */
  readonly name: string;
  /** What follows the name in the usage line (positional arguments). */
  readonly operands?: string;
  /** How many positional words the command takes (default 0). */
  readonly positionals?: number;
  readonly summary: string;
  readonly flags: readonly FlagSpec[];
  /** Internal commands are accepted but not listed. */
  readonly hidden?: boolean;
  run(args: Args, argv: readonly string[]): Promise<void>;
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'init',
    operands: 'DIR',
    positionals: 1,
    summary: 'Write a new project into DIR: config, .env with random secrets, tsconfig, README, .gitignore.',
    flags: [{ name: 'force', help: 'write into DIR even when it is not empty (existing files are kept)' }],
    run: async (a) => (await import('./init.js')).init(a),
  },
  {
    name: 'serve',
    summary: 'Serve the project (applies pending migrations, refuses schema drift).',
    flags: SERVER,
    run: async (a) => (await import('./serve.js')).serve(a, 'apply'),
  },
  {
    name: 'dev',
    summary:
      'Serve, watch and restart (a failing server is restarted by the next saved change; each start is type-checked with the project tsconfig), generate and apply migrations, create development secrets.',
    flags: SERVER,
    run: async (a, argv) => (await import('./dev.js')).dev(a, argv),
  },
  {
    name: '__run-dev',
    summary: 'The worker process of `dev`.',
    flags: SERVER,
    hidden: true,
    run: async (a) => (await import('./serve.js')).serve(a, 'auto'),
  },
  {
    name: 'migrate generate',
    summary: 'Write a migration for the difference between the declared schema and migrations/.',
    flags: [PROJECT, { name: 'name', value: 'NAME', help: 'a word for the migration file name' }, { name: 'allow-destructive', help: 'allow dropping tables and columns' }],
    run: async (a) => (await import('./migrate.js')).migrate(a, 'generate'),
  },
  { name: 'migrate apply', summary: 'Apply pending migrations.', flags: [PROJECT, DATA, DATABASE], run: async (a) => (await import('./migrate.js')).migrate(a, 'apply') },
  { name: 'migrate status', summary: 'List applied and pending migrations and schema drift.', flags: [PROJECT, DATA, DATABASE], run: async (a) => (await import('./migrate.js')).migrate(a, 'status') },
  {
    name: 'admin create',
    summary: 'Create an admin row, or reset the password of an existing one (and end its sessions).',
    flags: [
      PROJECT,
      DATA,
      DATABASE,
      REDIS,
      { name: 'table', value: 'TABLE', help: 'the admin auth table (default: the first one)' },
      { name: 'email', value: 'EMAIL', help: "the admin's email" },
      { name: 'password', value: 'PASSWORD', help: 'at least 8 characters' },
    ],
    run: async (a) => (await import('./admin.js')).admin(a),
  },
  {
    name: 'storage migrate',
    summary: 'Copy every photo and thumbnail to another store (file:// or s3://), verified by checksum; safe to re-run.',
    flags: [
      PROJECT,
      DATA,
      DATABASE,
      STORAGE,
      { name: 'to', value: 'URL', help: 'the new store: file:///absolute/path or s3://bucket/prefix (credentials from S3_*)', check: (v) => checkStorageUrl(v, '--to') },
    ],
    run: async (a) => (await import('./storage.js')).storage(a),
  },
  {
    name: 'backup create',
    summary: 'Take a snapshot of the database and photos now; prints its id.',
    flags: [PROJECT, DATA, DATABASE, STORAGE, { name: 'to', value: 'URL', help: 'destination (default: BACKUP_URL or config backup.to)', check: (v) => checkBackupUrl(v, '--to') }],
    run: async (a) => (await import('./backup.js')).backupCreate(a),
  },
  {
    name: 'backup list',
    summary: 'List snapshots and the restorable window.',
    flags: [FROM, { name: 'json', help: 'print one JSON object' }],
    run: async (a) => (await import('./backup.js')).backupList(a),
  },
  {
    name: 'backup verify',
    summary: 'Restore into a temporary folder, check integrity and photo checksums, print row counts.',
    flags: [FROM, AT],
    run: async (a) => (await import('./backup.js')).backupVerify(a),
  },
  {
    name: 'restore',
    summary: 'Write a data folder (or an empty PostgreSQL database) as it was at T.',
    flags: [
      FROM,
      { name: 'data', value: 'DIR', help: 'the new data folder (must be absent or empty unless --force)' },
      AT,
      { name: 'force', help: 'replace a non-empty --data folder' },
      { name: 'database', value: 'URL', help: 'restore a PostgreSQL backup into this empty database instead', check: checkDatabaseUrl },
    ],
    run: async (a) => (await import('./restore.js')).restore(a),
  },
  {
    name: 'openapi',
    summary: 'Print the OpenAPI 3.0.3 document (no database is opened).',
    flags: [PROJECT, { name: 'format', value: 'json|yaml', help: 'output format (default: json)', check: oneOf('format', ['json', 'yaml']) }, HOST, PORT],
    run: async (a) => (await import('./openapi.js')).openapi(a),
  },
  {
    name: 'gen client',
    summary: "Write the project's typed TypeScript client.",
    flags: [PROJECT, { name: 'out', value: 'FILE', help: 'where to write it (default: <project>/tablebase-client.ts)' }],
    run: async (a) => (await import('./gen.js')).gen(a),
  },
];
