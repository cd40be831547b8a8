/**
 * The DBT-3 load as one schedule instead of phases: "load table X" and "build Y" tasks
 * with their dependencies, the locks they take, and a priority, run by a list scheduler
 * that keeps a budget of worker slots busy. Pure: no server, unit-tested, and the same
 * `nextToStart` drives both the real runner and the simulation the tests check.
 */

export const TASK_KINDS = ['load', 'primary key', 'index', 'foreign key', 'analyze'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/**
 * The lock a task holds on a table, as PostgreSQL takes it: COPY `row exclusive`,
 * CREATE INDEX `share`, ADD FOREIGN KEY `share row exclusive` (on both tables), ANALYZE
 * `share update exclusive`, ADD PRIMARY KEY `access exclusive`.
 */
export type LockMode = 'row exclusive' | 'share update exclusive' | 'share' | 'share row exclusive' | 'access exclusive';

/** PostgreSQL's table-level lock conflict matrix, for the five modes above. */
const CONFLICTS: Readonly<Record<LockMode, readonly LockMode[]>> = {
  'row exclusive': ['share', 'share row exclusive', 'access exclusive'],
  'share update exclusive': ['share update exclusive', 'share', 'share row exclusive', 'access exclusive'],
  share: ['row exclusive', 'share update exclusive', 'share row exclusive', 'access exclusive'],
  'share row exclusive': ['row exclusive', 'share update exclusive', 'share', 'share row exclusive', 'access exclusive'],
  'access exclusive': ['row exclusive', 'share update exclusive', 'share', 'share row exclusive', 'access exclusive'],
};

export function locksConflict(a: LockMode, b: LockMode): boolean {
  return CONFLICTS[a].includes(b);
}

export interface TaskSpec {
  /** Unique: `load lineitem`, `primary key lineitem`, `index i_l_shipdate`, `foreign key lineitem → orders` … */
  readonly id: string;
  readonly kind: TaskKind;
  /** The table the task works on (for a foreign key: the referencing table; for a load of several tables, the first). */
  readonly table: string;
  /** A load of several tables at once (one worker pool over all their files). */
  readonly tables?: readonly string[];
  /** The SQL a build runs; a load has none (it is a `load()` of the table's files). */
  readonly statement?: string;
  /** Ids of tasks that must have finished first. */
  readonly after: readonly string[];
  readonly locks: readonly { readonly table: string; readonly mode: LockMode }[];
  /** Worker slots the task can use at most (a load's workers; a build is one session). */
  readonly maxSlots: number;
  /** Estimated work, in slot-seconds of some unit: only compared with other tasks' costs. */
  readonly cost: number;
}

export interface PlannedTask extends TaskSpec {
  /** Critical path from this task's start to the end of the schedule (its cost plus the longest chain after it). */
  readonly priority: number;
}

/**
 * Orders the tasks longest critical path first (the classic list-scheduling heuristic):
 * lineitem's load, then the loads the foreign keys wait on, lineitem's builds before the
 * small tables'. A build that runs alone on its table (see `serialTail`) counts the
 * table's builds that can run side by side as still to come after it. Ties: bigger task first, then by id, so the plan is deterministic.
 * `loadsFirst`: every load before any build (a build then only fills a slot no load can
 * use), so the rows are in as soon as the kit's load phase would have them.
 */
export function orderTasks(tasks: readonly TaskSpec[], budget: number, options: { loadsFirst?: boolean } = {}): PlannedTask[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  for (const t of tasks) {
    for (const dep of t.after) if (!byId.has(dep)) throw new Error(`task ${t.id} waits for ${dep}, which is not in the schedule`);
  }
  const rank = (t: TaskSpec): number => (options.loadsFirst === true && t.kind !== 'load' ? 1 : 0);
  const successors = new Map<string, string[]>(tasks.map((t) => [t.id, []]));
  for (const t of tasks) for (const dep of t.after) successors.get(dep)!.push(t.id);
  const tail = serialTail(tasks, budget);
  const priority = new Map<string, number>();
  const visiting = new Set<string>();
  const level = (id: string): number => {
    const known = priority.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) throw new Error(`the schedule has a cycle through ${id}`);
    visiting.add(id);
    const t = byId.get(id)!;
    const own = t.cost / Math.min(t.maxSlots, budget) + (tail.get(id) ?? 0);
    const p = own + Math.max(0, ...successors.get(id)!.map(level));
    visiting.delete(id);
    priority.set(id, p);
    return p;
  };
  return tasks
    .map((t) => ({ ...t, priority: level(t.id) }))
    .sort((a, b) => rank(a) - rank(b) || b.priority - a.priority || b.cost - a.cost || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A lock two tasks cannot both hold on one table: the tasks taking it on a table run one after another. */
function selfConflicting(mode: LockMode): boolean {
  return locksConflict(mode, mode);
}

/**
 * Builds on one table take locks that serialise some of them (ADD PRIMARY KEY, ADD FOREIGN
 * KEY, ANALYZE: one at a time, and none beside a CREATE INDEX) and let others run side by
 * side (CREATE INDEX beside CREATE INDEX). The table's builds take at least the serial ones
 * one after another plus the side-by-side ones `budget` at a time, and the schedule ends
 * best with the side-by-side ones, which fill every slot; the serial ones want a partner
 * from another table, which only exists early. So each serial build gets, on top of its
 * critical path, the side-by-side builds' span on its table (their cost / budget): lineitem's
 * primary key, ANALYZE and foreign keys go before its indexes, with the small tables'
 * builds beside them.
 */
function serialTail(tasks: readonly TaskSpec[], budget: number): Map<string, number> {
  const ownLock = (t: TaskSpec): LockMode | undefined => t.locks.find((l) => l.table === t.table)?.mode;
  const sideBySide = new Map<string, number>();
  for (const t of tasks) {
    const mode = ownLock(t);
    if (t.kind === 'load' || mode === undefined || selfConflicting(mode)) continue;
    sideBySide.set(t.table, (sideBySide.get(t.table) ?? 0) + t.cost / Math.min(t.maxSlots, budget) / budget);
  }
  const tail = new Map<string, number>();
  for (const t of tasks) {
    const mode = ownLock(t);
    if (t.kind !== 'load' && mode !== undefined && selfConflicting(mode)) tail.set(t.id, sideBySide.get(t.table) ?? 0);
  }
  return tail;
}

export interface RunningTask {
  readonly task: PlannedTask;
  readonly slots: number;
}

/**
 * The next task to start, given what is done and what runs: the first in plan order whose
 * dependencies are done and whose locks would not wait on a running task's (a session
 * blocked on a lock holds a slot and does nothing), nor hold back an earlier task that
 * waits only for a running task's lock: lineitem's foreign key to partsupp, waiting for
 * an index on partsupp to end, is not overtaken by lineitem's indexes, which would keep
 * it waiting for all of them (partsupp's own builds may run meanwhile). It gets as many slots as are free, up to what it can use.
 * Undefined: nothing can start now.
 */
export function nextToStart(plan: readonly PlannedTask[], done: ReadonlySet<string>, running: readonly RunningTask[], budget: number): RunningTask | undefined {
  const used = running.reduce((n, r) => n + r.slots, 0);
  const free = budget - used;
  if (free <= 0) return undefined;
  const busy = new Set(running.map((r) => r.task.id));
  const clash = (a: TaskSpec, b: TaskSpec): boolean => a.locks.some((x) => b.locks.some((y) => x.table === y.table && locksConflict(x.mode, y.mode)));
  // Ready tasks a running one's lock holds back: a later task must not hold them back longer on their table.
  const waiting: PlannedTask[] = [];
  for (const task of plan) {
    if (done.has(task.id) || busy.has(task.id)) continue;
    if (!task.after.every((d) => done.has(d))) continue;
    if (running.some((r) => clash(task, r.task))) {
      waiting.push(task);
      continue;
    }
    // Held back only on the waiting task's own table: another table's builds keep the free slots busy meanwhile.
    if (waiting.some((w) => clash(task, { ...w, locks: w.locks.filter((l) => l.table === w.table) }))) continue;
    return { task, slots: Math.min(task.maxSlots, free) };
  }
  return undefined;
}

export interface SimulatedRun {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly slots: number;
}

/**
 * Runs the plan on a clock, with each task taking `seconds(task, slots)`: what the real
 * runner would do if the estimates were right. For tests, and for `--dry-run`-style looks.
 */
export function simulate(plan: readonly PlannedTask[], budget: number, seconds: (task: PlannedTask, slots: number) => number): SimulatedRun[] {
  const done = new Set<string>();
  let running: (RunningTask & { end: number; start: number })[] = [];
  const out: SimulatedRun[] = [];
  let now = 0;
  while (done.size < plan.length) {
    for (let next = nextToStart(plan, done, running, budget); next; next = nextToStart(plan, done, running, budget)) {
      running.push({ ...next, start: now, end: now + seconds(next.task, next.slots) });
    }
    if (running.length === 0) throw new Error(`the schedule is stuck: ${plan.filter((t) => !done.has(t.id)).map((t) => t.id).join(', ')} can never start`);
    now = Math.min(...running.map((r) => r.end));
    for (const r of running.filter((x) => x.end === now)) {
      done.add(r.task.id);
      out.push({ id: r.task.id, start: r.start, end: r.end, slots: r.slots });
    }
    running = running.filter((x) => x.end !== now);
  }
  return out;
}
