/** The CLI's table of contents: one file per command. */
import { parseArgs } from './args.js';

const USAGE = `Usage: tablebase <command> [--project DIR] [--data DIR] [--host HOST] [--port PORT]

Commands:
  serve                     serve the project (applies pending migrations)
  dev                       serve + watch + auto-migrate + dev secrets
  migrate generate|apply|status [--allow-destructive]
  admin create --table T --email E --password P
  openapi [--format json|yaml]  print the OpenAPI document
  gen client [--out FILE]   write a typed TypeScript client`;

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const [command, sub] = args.words;
  switch (command) {
    case 'serve':
      return (await import('./serve.js')).serve(args, 'apply');
    case '__run-dev':
      return (await import('./serve.js')).serve(args, 'auto');
    case 'dev':
      return (await import('./dev.js')).dev(args, argv);
    case 'migrate':
      return (await import('./migrate.js')).migrate(args, sub);
    case 'admin':
      return (await import('./admin.js')).admin(args, sub);
    case 'openapi':
      return (await import('./openapi.js')).openapi(args);
    case 'gen':
      return (await import('./gen.js')).gen(args, sub);
    default:
      console.log(USAGE);
      if (command && command !== 'help' && command !== '--help') process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // One clear line, no stack: configuration and project errors are the user's to fix.
  console.error(`tablebase: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
