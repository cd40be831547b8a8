import { LoadError } from '../db/load-error.js';
import { nextToStart, type PlannedTask, type RunningTask } from './build-schedule.js';

/** One task as it ran: seconds since the schedule started. */
export interface TaskRun {
  readonly id: string;
  readonly kind: PlannedTask['kind'];
  readonly table: string;
  readonly statement: string;
  readonly slots: number;
  readonly start: number;
  readonly end: number;
  /** The task failed (or was stopped because another one failed). */
  readonly failed?: boolean;
}

export interface ScheduleOutcome {
  readonly runs: readonly TaskRun[];
  /** The first task's error; the tasks running then were stopped, the rest never started. */
  readonly error?: unknown;
}

export interface ScheduleRunner {
  /** Runs one task on `slots` slots; `signal` aborts when another task failed or the user stopped the load. */
  run(task: PlannedTask, slots: number, signal: AbortSignal): Promise<{ statement: string }>;
  /** Seconds since the load started (the timeline's clock). */
  now(): number;
  /** Tasks that count as done before anything runs (their loads ran in an earlier schedule). */
  readonly done?: ReadonlySet<string>;
  readonly signal?: AbortSignal;
}

/**
 * Runs a plan with `budget` slots: starts every task `nextToStart` allows, waits for any
 * to end, again, until all are done. The first failure stops the schedule: the running
 * tasks are told to stop (their signal), nothing more starts, and the outcome names it.
 */
export async function runSchedule(plan: readonly PlannedTask[], budget: number, runner: ScheduleRunner): Promise<ScheduleOutcome> {
  const done = new Set(runner.done ?? []);
  const todo = plan.filter((t) => !done.has(t.id));
  const stop = new AbortController();
  const onOuterAbort = (): void => stop.abort();
  runner.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const runs: TaskRun[] = [];
  const running = new Map<string, { running: RunningTask; ended: Promise<string> }>();
  let error: unknown;
  try {
    while (true) {
      if (error === undefined && !stop.signal.aborted) {
        for (let next = nextToStart(todo, done, [...running.values()].map((r) => r.running), budget); next; next = nextToStart(todo, done, [...running.values()].map((r) => r.running), budget)) {
          const { task, slots } = next;
          const start = runner.now();
          const ended = runner.run(task, slots, stop.signal).then(
            ({ statement }) => {
              runs.push({ id: task.id, kind: task.kind, table: task.table, statement, slots, start, end: runner.now() });
              done.add(task.id);
              return task.id;
            },
            (e: unknown) => {
              runs.push({ id: task.id, kind: task.kind, table: task.table, statement: task.statement ?? '', slots, start, end: runner.now(), failed: true });
              // The first failure wins: the tasks it stops fail after it, with less to say.
              error ??= e;
              stop.abort();
              return task.id;
            },
          );
          running.set(task.id, { running: next, ended });
        }
      }
      if (running.size === 0) break;
      const id = await Promise.race([...running.values()].map((r) => r.ended));
      running.delete(id);
    }
  } finally {
    runner.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (error === undefined && done.size < plan.length) {
    error = stop.signal.aborted
      ? new LoadError('interrupted', 'interrupted before every table was loaded and built')
      : new Error(`the schedule is stuck: ${todo.filter((t) => !done.has(t.id)).map((t) => t.id).join(', ')} can never start`);
  }
  return error === undefined ? { runs } : { runs, error };
}
