/**
 * Cron jobs declared in the project (docs/reference/dashboard.md): 5- or 6-field schedules, runs of one job never
 * overlap, and each run's start, end and error are kept for metrics and the dashboard. Jobs get
 * the trusted server context (no rules, no rate limits; writes through the serialized writer).
 */
import { Cron } from 'croner';
import type { Runtime } from '../core/runtime.js';
import type { CronJob } from '../define/project.js';
import { Scope } from '../pipeline/scope.js';
import { infrastructureOf } from '../core/errors.js';

interface JobState {
  readonly job: CronJob;
  readonly timer: Cron;
  lastRunAt: string | null;
  lastStatus: 'running' | 'ok' | 'error' | null;
  lastError: string | null;
  running: Promise<CronRun> | null;
  /** The most recent runs, newest last (bounded: RECENT_RUNS). */
  readonly runs: CronRun[];
}

/** One run of a job, kept for the dashboard (docs/reference/dashboard.md Cron: recent runs per job). */
export interface CronRun {
  readonly job: string;
  readonly trigger: 'schedule' | 'manual';
  readonly startedAt: string;
  finishedAt: string | null;
  status: 'running' | 'ok' | 'error';
  error: string | null;
  durationMs: number | null;
}

const RECENT_RUNS = 20;

/** What metrics and the dashboard read: each job's last and next run. */
export interface CronStatus {
  status(): { name: string; schedule: string; lastRunAt: string | null; lastStatus: string | null; lastError: string | null; nextRunAt: string | null }[];
}

export interface Scheduler extends CronStatus {
  /** Runs a job now (dashboard "run now"); a run already going is awaited, not doubled. Answers that run. */
  runNow(name: string): Promise<CronRun>;
  /** A job's recent runs, newest first; undefined for an unknown job. */
  recentRuns(name: string): CronRun[] | undefined;
  /** Stops the timers and waits for runs in progress. */
  stop(): Promise<void>;
}

/**
 * `claim(job, tick)`: whether this node runs this tick of the job. With several nodes only one
 * claim per tick succeeds (cluster/, issue #15); alone, every claim does.
 */
export function startScheduler(rt: Runtime, jobs: readonly CronJob[], claim: (job: string, tickMs: number) => Promise<boolean> = async () => true): Scheduler {
  const states = new Map<string, JobState>();
  const run = (s: JobState, trigger: CronRun['trigger']): Promise<CronRun> => {
    if (s.running) return s.running; // never overlap
    const started = Date.now();
    const record: CronRun = { job: s.job.name, trigger, startedAt: new Date(started).toISOString(), finishedAt: null, status: 'running', error: null, durationMs: null };
    s.runs.push(record);
    if (s.runs.length > RECENT_RUNS) s.runs.shift();
    s.lastRunAt = record.startedAt;
    s.lastStatus = 'running';
    s.running = (async () => {
      const scope = new Scope(rt, null);
      try {
        await s.job.run(scope.context);
        scope.committed();
        s.lastStatus = record.status = 'ok';
        s.lastError = null;
      } catch (err) {
        scope.failed();
        s.lastStatus = record.status = 'error';
        s.lastError = record.error = err instanceof Error ? err.message : String(err);
        // A full disk or an unreachable database is a known outage, reported once by /health and
        // the requests it refuses (docs/reference/errors.md, UNAVAILABLE), not a fault of the job.
        const down = infrastructureOf(err);
        if (down) rt.log.warn({ err, job: s.job.name, infrastructure: down }, 'cron job failed: infrastructure unavailable');
        else rt.log.error({ err, job: s.job.name }, 'cron job failed');
      } finally {
        record.finishedAt = new Date().toISOString();
        record.durationMs = Date.now() - started;
        s.running = null;
      }
      return record;
    })();
    return s.running;
  };
  for (const job of jobs) {
    if (states.has(job.name)) throw new Error(`cron job "${job.name}" is declared twice`);
    let timer: Cron;
    try {
      // UTC as a zero offset, not timezone 'UTC': croner's time-zone path builds Intl formatters,
      // about 120 ms of the first start (issue #25); the times computed are the same.
      timer = new Cron(job.schedule, { paused: true, protect: true, utcOffset: 0 });
    } catch (err) {
      throw new Error(`cron job "${job.name}": invalid schedule "${job.schedule}" (${(err as Error).message})`);
    }
    const state: JobState = { job, timer, lastRunAt: null, lastStatus: null, lastError: null, running: null, runs: [] };
    states.set(job.name, state);
  }
  for (const s of states.values()) {
    // Ticks fall on whole seconds; every node's timer names the same one.
    s.timer.schedule(() =>
      claim(s.job.name, Math.floor(Date.now() / 1000) * 1000).then(
        async (mine) => void (mine ? await run(s, 'schedule') : undefined),
        (err) => rt.log.error({ err, job: s.job.name }, 'cron claim failed'),
      ),
    );
    s.timer.resume();
  }
  return {
    status: () =>
      [...states.values()].map((s) => ({
        name: s.job.name,
        schedule: s.job.schedule,
        lastRunAt: s.lastRunAt,
        lastStatus: s.lastStatus,
        lastError: s.lastError,
        nextRunAt: s.timer.nextRun()?.toISOString() ?? null,
      })),
    runNow: async (name) => {
      const s = states.get(name);
      if (!s) throw new Error(`no cron job named ${name}`);
      return run(s, 'manual');
    },
    recentRuns: (name) => {
      const s = states.get(name);
      return s ? [...s.runs].reverse().map((r) => ({ ...r })) : undefined;
    },
    stop: async () => {
      for (const s of states.values()) s.timer.stop();
      await Promise.all([...states.values()].map((s) => s.running));
    },
  };
}
