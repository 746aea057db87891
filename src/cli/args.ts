/** A small argv parser: positional words, then `--flag value` / `--flag=value` / `--switch`. */
export interface Args {
  readonly words: string[];
  readonly flags: Record<string, string | true>;
}

export function parseArgs(argv: readonly string[]): Args {
  const words: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) flags[a.slice(2)] = argv[++i]!;
      else flags[a.slice(2)] = true;
    } else words.push(a);
  }
  return { words, flags };
}

export function flag(args: Args, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}
