/**
 * Stopping with the process that started us (issue #27 item 1). npm and npx run a command through
 * `sh -c`; when npm is killed (`kill <pid of npm start>`, `kill $!` after `npx tablebase serve &`),
 * the shell dies without passing the signal on and the server is re-parented, still listening.
 * So a process npm started (npm sets `npm_lifecycle_event`, `npx` included), and every child of
 * `dev` (it has an IPC channel to its supervisor), stops gracefully when its parent goes away.
 * A server started straight from a shell (`tablebase serve &`, systemd) is left alone: outliving
 * the shell is what `nohup` and service managers ask of it. docs/reference/cli.md.
 */

/** Polling interval: a `ppid` read is a field access, so checking twice a second costs nothing. */
const POLL_MS = 500;

export function onParentGone(stop: (reason: string) => void): void {
  if (process.send) {
    // The supervisor's IPC pipe closes when it exits, however it exits (even SIGKILL).
    process.once('disconnect', () => stop('dev supervisor exited'));
    return;
  }
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      stop(`parent process ${parent} (npm) exited`);
    }
  }, POLL_MS);
  timer.unref();
}
