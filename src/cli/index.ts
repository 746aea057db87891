/** The CLI entry (bin/tablebase.mjs imports this): runs the command line and sets the exit code. */
import { runCli } from './main.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    // One clear line, no stack: configuration and project errors are the user's to fix.
    console.error(`tablebase: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
