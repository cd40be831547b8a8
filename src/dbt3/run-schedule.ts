import { LoadError } from '../core/load-error.js';
import { nextToStart, slotToTakeBack, type PlannedTask, type RunningTask } from './build-schedule.js';

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
  /** When it gave a slot back to the schedule (a load of several tables, once one was in), and the slots it kept. */
  readonly resized?: readonly { readonly at: number; readonly slots: number }[];
  /** The parallel workers it ran with, when not the build sessions' own (the last sort: `BuildSizing.lastBuild`). */
  readonly parallelWorkers?: number;
}

/** What a running task with milestones tells the schedule, and asks it. */
export interface TaskProgress {
  /** The task reached one of its milestones (a load of several tables: a table is in). */
  reached(milestone: string): void;
  /** Asked by the task before each piece of work: true, the schedule wants one of its slots back (the request is taken). */
  takeBack(): boolean;
  /** The slot taken back is free (its worker has ended). */
  gaveBack(): void;
}

export interface ScheduleOutcome {
  readonly runs: readonly TaskRun[];
  /** The first task's error; the tasks running then were stopped, the rest never started. */
  readonly error?: unknown;
}

export interface ScheduleRunner {
  /**
   * Runs one task on `slots` slots; `signal` aborts when another task failed or the user
   * stopped the load. `last`: nothing is left to start after it (the slots freed while it
   * runs stay idle unless it uses them).
   */
  run(task: PlannedTask, slots: number, signal: AbortSignal, progress: TaskProgress, last: boolean): Promise<{ statement: string; parallelWorkers?: number }>;
  /** Seconds since the load started (the timeline's clock). */
  now(): number;
  /** Tasks that count as done before anything runs (their loads ran in an earlier schedule). */
  readonly done?: ReadonlySet<string>;
  readonly signal?: AbortSignal;
}

/**
 * Runs a plan with `budget` slots: starts every task `nextToStart` allows, waits for any
 * to end (or reach a milestone, or give a slot back), again, until all are done. When
 * every slot is taken and `slotToTakeBack` names a running load, that load is asked for a
 * slot (one of its workers ends after its chunk), and the slot goes to the next task. The
 * first failure stops the schedule: the running tasks are told to stop (their signal),
 * nothing more starts, and the outcome names it.
 */
export async function runSchedule(plan: readonly PlannedTask[], budget: number, runner: ScheduleRunner): Promise<ScheduleOutcome> {
  const done = new Set(runner.done ?? []);
  const todo = plan.filter((t) => !done.has(t.id));
  const stop = new AbortController();
  const onOuterAbort = (): void => stop.abort();
  runner.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const runs: TaskRun[] = [];
  const running = new Map<string, { running: RunningTask; asked: boolean; resized: { at: number; slots: number }[] }>();
  let error: unknown;
  // Something happened that may let a task start: a milestone, a slot given back.
  let wake: () => void = () => undefined;
  const woken = (): Promise<undefined> => new Promise((resolve) => (wake = () => resolve(undefined)));
  const ends = new Map<string, Promise<string>>();
  const nowRunning = (): RunningTask[] => [...running.values()].map((r) => r.running);
  try {
    while (true) {
      if (error === undefined && !stop.signal.aborted) {
        for (;;) {
          const next = nextToStart(todo, done, nowRunning(), budget);
          if (next === undefined) {
            const from = slotToTakeBack(todo, done, nowRunning(), budget);
            const entry = from === undefined ? undefined : running.get(from);
            if (entry !== undefined) entry.asked = true;
            break;
          }
          const { task, slots } = next;
          const start = runner.now();
          const entry = { running: next, asked: false, resized: [] as { at: number; slots: number }[] };
          const progress: TaskProgress = {
            reached: (milestone) => {
              done.add(milestone);
              wake();
            },
            takeBack: () => {
              if (!entry.asked) return false;
              entry.asked = false;
              return true;
            },
            gaveBack: () => {
              entry.running = { ...entry.running, slots: entry.running.slots - 1 };
              entry.resized.push({ at: runner.now(), slots: entry.running.slots });
              wake();
            },
          };
          const resized = (): { resized?: { at: number; slots: number }[] } => (entry.resized.length > 0 ? { resized: entry.resized } : {});
          const last = todo.every((t) => t.id === task.id || done.has(t.id) || running.has(t.id));
          const ended = runner.run(task, slots, stop.signal, progress, last).then(
            ({ statement, parallelWorkers }) => {
              runs.push({ id: task.id, kind: task.kind, table: task.table, statement, slots, start, end: runner.now(), ...resized(), ...(parallelWorkers === undefined ? {} : { parallelWorkers }) });
              // A task that ended has passed all its milestones (a load that ended has every table in), said or not.
              for (const m of task.milestones ?? []) done.add(m.id);
              done.add(task.id);
              return task.id;
            },
            (e: unknown) => {
              runs.push({ id: task.id, kind: task.kind, table: task.table, statement: task.statement ?? '', slots, start, end: runner.now(), failed: true, ...resized() });
              // The first failure wins: the tasks it stops fail after it, with less to say.
              error ??= e;
              stop.abort();
              return task.id;
            },
          );
          running.set(task.id, entry);
          ends.set(task.id, ended);
        }
      }
      if (running.size === 0) break;
      const id = await Promise.race([...ends.values(), woken()]);
      if (id !== undefined) {
        running.delete(id);
        ends.delete(id);
      }
    }
  } finally {
    runner.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (error === undefined && plan.some((t) => !done.has(t.id))) {
    error = stop.signal.aborted
      ? new LoadError('interrupted', 'interrupted before every table was loaded and built')
      : new Error(`the schedule is stuck: ${todo.filter((t) => !done.has(t.id)).map((t) => t.id).join(', ')} can never start`);
  }
  return error === undefined ? { runs } : { runs, error };
}
