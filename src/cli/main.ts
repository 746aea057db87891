/** Running one command line: find the command (commands.ts), parse its flags strictly, run it. */
import { COMMANDS, type Command } from './commands.js';
import { formatHelp, parseArgs, UsageError, wantsHelp } from './args.js';

function overview(): string {
  const shown = COMMANDS.filter((c) => !c.hidden);
  const left = shown.map((c) => `${c.name}${c.operands ? ` ${c.operands}` : ''}`);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return `Usage: tablebase <command> [flags]\n\nCommands:\n${shown.map((c, i) => `  ${left[i]!.padEnd(width)}${c.summary}`).join('\n')}\n\nRun \`tablebase <command> --help\` for its flags.`;
}

/** An argument as it may be echoed: a URL shows only its scheme (it may carry a password). */
function masked(word: string): string {
  const m = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(word);
  return m ? `${m[1]}//…` : word;
}

/** The command named by the first one or two words of argv, and how many words it used. */
function findCommand(argv: readonly string[]): { command: Command; used: number } {
  const [first, second] = argv;
  const two = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (two) return { command: two, used: 2 };
  const one = COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, used: 1 };
  const subs = COMMANDS.filter((c) => !c.hidden && c.name.startsWith(`${first} `)).map((c) => c.name.split(' ')[1]);
  if (subs.length) {
    const what = second === undefined || second.startsWith('-') ? 'needs a sub-command' : `has no sub-command "${second}"`;
    throw new UsageError(`\`${first}\` ${what}: ${subs.join(', ')} (see \`tablebase ${first} ${subs[0]} --help\`)`);
  }
  throw new UsageError(`unknown command "${first}" (see \`tablebase --help\`)`);
}

/** Runs the CLI; resolves with the exit code for commands that finish (servers keep running). */
export async function runCli(argv: readonly string[]): Promise<number> {
  const first = argv[0];
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    console.log(overview());
    return 0;
  }
  try {
    const { command, used } = findCommand(argv);
    const rest = argv.slice(used);
    const usage = `${command.name}${command.operands ? ` ${command.operands}` : ''} [flags]`;
    if (wantsHelp(rest)) {
      console.log(formatHelp(usage, command.summary, command.flags));
      return 0;
    }
    const args = parseArgs(rest, command.flags, command.name);
    const want = command.positionals ?? 0;
    if (args.words.length !== want) {
      const extra = args.words[want];
      throw new UsageError(extra !== undefined ? `unexpected argument "${masked(extra)}" for \`${command.name}\`` : `\`${command.name}\` needs ${command.operands} (usage: tablebase ${usage})`);
    }
    await command.run(args, argv);
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`tablebase: ${err.message}`);
    return 2;
  }
}
