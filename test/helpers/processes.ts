/**
 * Every process a test starts, found and stopped even when the test timed out or its worker died
 * (issue #27 item 9). Test servers run in their own process group (`detached`), so a server and
 * any worker processes it forks stop together with `kill(-pid)`. Each carries the run's marker in
 * its environment (`TABLEBASE_TEST_PROCS`, set by global-setup.ts), so the run's teardown finds
 * the stragglers in /proc without a registry file and without touching anyone else's processes
 * (the machine is shared: other runs have other markers).
 */
import { readdirSync, readFileSync } from 'node:fs';

export const MARKER = 'TABLEBASE_TEST_PROCS';

/** The environment entries that mark a process as this run's. */
export const marker = (): Record<string, string> => (process.env[MARKER] ? { [MARKER]: process.env[MARKER] } : {});

const groups = new Set<number>();

/** Remembers a detached child's process group and kills it if this worker exits first. */
export function track(pid: number | undefined): void {
  if (pid) groups.add(pid);
}

export function untrack(pid: number | undefined): void {
  if (pid) groups.delete(pid);
}

/** SIGKILL a whole process group; a group already gone is fine. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // gone already
  }
}

process.on('exit', () => {
  for (const g of groups) killGroup(g);
});

/**
 * Linux: every live process whose environment holds `TABLEBASE_TEST_PROCS=<run>`, with its process
 * group. Elsewhere an empty list (the per-worker `exit` handler above still runs).
 */
export function markedProcesses(run: string, variable = MARKER): { pid: number; pgid: number }[] {
  const want = `${variable}=${run}`;
  const found: { pid: number; pgid: number }[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return found;
  }
  for (const e of entries) {
    const pid = Number(e);
    if (pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(want)) continue;
      // stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so read after the last ')'.
      const stat = readFileSync(`/proc/${e}/stat`, 'latin1');
      const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      found.push({ pid, pgid });
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

/**
 * Kills every process of the run: whole groups for detached ones; in vitest's own group (its
 * workers carry the marker too) only a Tablebase command or a Chromium a test started there.
 */
export function killMarked(run: string): number {
  const own = ownGroup();
  let killed = 0;
  for (const p of markedProcesses(run)) {
    if (p.pgid > 1 && p.pgid !== own) {
      killGroup(p.pgid);
      killed++;
    } else if (isOurs(p.pid)) {
      try {
        process.kill(p.pid, 'SIGKILL');
        killed++;
      } catch {
        // gone already
      }
    }
  }
  return killed;
}

function isOurs(pid: number): boolean {
  try {
    // A Tablebase command, or the Chromium a browser test launched (its children die with it).
    return /bin\/tablebase(\.mjs)?\0|\/chromium\0|\/chrome\0/.test(readFileSync(`/proc/${pid}/cmdline`, 'latin1'));
  } catch {
    return false;
  }
}

function ownGroup(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}
