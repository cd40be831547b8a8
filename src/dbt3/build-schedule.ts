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
  /**
   * Points a running task reaches before it ends, in the order it reaches them: a load of
   * several tables reaches `load <table>` once that table is in (what waits on it may start,
   * and the task's lock on that table is gone). `cost`: the task's work up to there from the
   * milestone before (the simulation's clock, and what is left of the task).
   */
  readonly milestones?: readonly Milestone[];
  /** The SQL a build runs; a load has none (it is a `load()` of the table's files). */
  readonly statement?: string;
  /** Ids of tasks that must have finished first. */
  readonly after: readonly string[];
  readonly locks: readonly { readonly table: string; readonly mode: LockMode }[];
  /** Worker slots the task can use at most (a load's workers; a build is one session). */
  readonly maxSlots: number;
  /** Estimated work, in slot-seconds of some unit: only compared with other tasks' costs. */
  readonly cost: number;
  /**
   * A catalog change that holds its lock for a moment (a primary key's constraint added on
   * its built index): it runs alone on its table but wants no partner beside it, so it is
   * not ranked as a build that runs alone (see `serialTail`).
   */
  readonly instant?: boolean;
}

export interface Milestone {
  readonly id: string;
  readonly table: string;
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
  // A milestone stands for its task: what waits on it follows the task in the critical path.
  const taskOf = new Map<string, string>(tasks.flatMap((t) => (t.milestones ?? []).map((m) => [m.id, t.id] as const)));
  for (const t of tasks) {
    for (const dep of t.after) if (!byId.has(dep) && !taskOf.has(dep)) throw new Error(`task ${t.id} waits for ${dep}, which is not in the schedule`);
  }
  const rank = (t: TaskSpec): number => (options.loadsFirst === true && t.kind !== 'load' ? 1 : 0);
  const successors = new Map<string, string[]>(tasks.map((t) => [t.id, []]));
  for (const t of tasks) for (const dep of t.after) successors.get(taskOf.get(dep) ?? dep)!.push(t.id);
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
    if (t.kind !== 'load' && t.instant !== true && mode !== undefined && selfConflicting(mode)) tail.set(t.id, sideBySide.get(t.table) ?? 0);
  }
  return tail;
}

export interface RunningTask {
  readonly task: PlannedTask;
  readonly slots: number;
}

/** The locks a running task still holds: a load of several tables lets go of each table once it is in (its milestone is done). */
function heldLocks(task: PlannedTask, done: ReadonlySet<string>): PlannedTask {
  const reached = (task.milestones ?? []).filter((m) => done.has(m.id)).map((m) => m.table);
  return reached.length === 0 ? task : { ...task, locks: task.locks.filter((l) => !reached.includes(l.table)) };
}

/**
 * The next task to start, given what is done and what runs: the first in plan order whose
 * dependencies are done and whose locks would not wait on a running task's (a session
 * blocked on a lock holds a slot and does nothing), nor hold back an earlier task that
 * waits only for a running task's lock: lineitem's foreign key to partsupp, waiting for
 * an index on partsupp to end, is not overtaken by lineitem's indexes, which would keep
 * it waiting for all of them, nor by partsupp's other indexes; waiting for lineitem's
 * primary key, it may be overtaken by partsupp's builds (short ones, which end before the key). It gets as many slots as are free, up to what it can use.
 * `done` holds the milestones reached as well as the tasks ended.
 * Undefined: nothing can start now.
 */
export function nextToStart(plan: readonly PlannedTask[], done: ReadonlySet<string>, running: readonly RunningTask[], budget: number): RunningTask | undefined {
  const used = running.reduce((n, r) => n + r.slots, 0);
  const free = budget - used;
  if (free <= 0) return undefined;
  const busy = new Set(running.map((r) => r.task.id));
  const holding = running.map((r) => heldLocks(r.task, done));
  const clash = (a: TaskSpec, b: TaskSpec): boolean => a.locks.some((x) => b.locks.some((y) => x.table === y.table && locksConflict(x.mode, y.mode)));
  const ownLocks = (t: PlannedTask): PlannedTask => ({ ...t, locks: t.locks.filter((l) => l.table === t.table) });
  // A waiting task's locks on its own table and on every table a running task's lock keeps it from: orders' second
  // index must not start while lineitem's foreign key to orders waits for orders' first (it would wait for both).
  const heldBack = (w: PlannedTask): PlannedTask => ({ ...w, locks: w.locks.filter((l) => l.table === w.table || holding.some((h) => h.locks.some((y) => y.table === l.table && locksConflict(l.mode, y.mode)))) });
  // Builds still to come that run alone on their table (see `serialTail`), in plan order.
  const serialToCome = plan.filter((t) => t.kind !== 'load' && !done.has(t.id) && !busy.has(t.id) && t.locks.some((l) => l.table === t.table && selfConflicting(l.mode)));
  const pick = (deferring: boolean): RunningTask | undefined => {
    // Ready tasks a running one's lock holds back: a later task must not hold them back longer on their table.
    const waiting: PlannedTask[] = [];
    for (const [at, task] of plan.entries()) {
      if (done.has(task.id) || busy.has(task.id)) continue;
      if (!task.after.every((d) => done.has(d))) continue;
      if (holding.some((h) => clash(task, h))) {
        waiting.push(task);
        continue;
      }
      // Held back on the waiting task's own table and on the tables it waits on; on its other tables, that table's builds keep the free slots busy meanwhile.
      if (waiting.some((w) => clash(task, heldBack(w)))) continue;
      // Nor, while other work can take the slot, ahead of an earlier build on its table that runs alone and is not ready yet:
      // lineitem's index started while its foreign key to partsupp waits for partsupp's key would keep that key waiting.
      if (deferring && serialToCome.some((s) => s !== task && s.table === task.table && plan.indexOf(s) < at && clash(task, ownLocks(s)))) continue;
      return { task, slots: Math.min(task.maxSlots, free) };
    }
    return undefined;
  };
  return pick(true) ?? pick(false);
}

/**
 * A running load of several tables to take one slot back from (one of its workers ends
 * after its chunk), so that a ready task may start now: when every slot is taken, the load
 * holds more than one, and the task that would get the slot has a critical path at least as
 * long as what still waits on the load (the load's rest at its slots, then the longest
 * chain after each table still to come). lineitem is in first; its chain of builds that run
 * alone on it (primary key, ANALYZE, foreign keys) is the schedule's longest, so it starts
 * while orders, partsupp … load on one worker fewer, instead of after the last of them.
 * Undefined: no slot to take back.
 */
export function slotToTakeBack(plan: readonly PlannedTask[], done: ReadonlySet<string>, running: readonly RunningTask[], budget: number): string | undefined {
  if (running.reduce((n, r) => n + r.slots, 0) < budget) return undefined;
  const longestAfter = (id: string): number => Math.max(0, ...plan.filter((t) => t.after.includes(id)).map((t) => t.priority));
  for (const r of running) {
    const left = (r.task.milestones ?? []).filter((m) => !done.has(m.id));
    if (r.slots <= 1 || left.length === 0 || left.length === r.task.milestones!.length) continue;
    const candidate = nextToStart(plan, done, running.map((x) => (x === r ? { ...x, slots: x.slots - 1 } : x)), budget);
    if (candidate === undefined) continue;
    let work = 0;
    let waiting = 0;
    for (const m of left) {
      work += m.cost;
      waiting = Math.max(waiting, work / r.slots + longestAfter(m.id));
    }
    if (candidate.task.priority >= waiting) return r.task.id;
  }
  return undefined;
}

export interface SimulatedRun {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  /** The slots it started with. */
  readonly slots: number;
  /** When it gave a slot back, and the slots it kept. */
  readonly resized?: readonly { readonly at: number; readonly slots: number }[];
  /** When it reached each of its milestones. */
  readonly reached?: readonly { readonly id: string; readonly at: number }[];
}

/**
 * Runs the plan on a clock, with each task taking `seconds(task, slots)`: what the real
 * runner would do if the estimates were right. A task with milestones reaches each after
 * its share of the time (by cost), and gives a slot back when `slotToTakeBack` says so (the
 * rest of its current share then runs on the slots it keeps). For tests, and for looks at a
 * schedule with measured durations.
 */
export function simulate(plan: readonly PlannedTask[], budget: number, seconds: (task: PlannedTask, slots: number) => number): SimulatedRun[] {
  interface Sim {
    readonly task: PlannedTask;
    slots: number;
    readonly start: number;
    /** The current part (milestone) and the fraction of it still to do at `since`. */
    part: number;
    left: number;
    since: number;
    end: number;
    resized: { at: number; slots: number }[];
    reached: { id: string; at: number }[];
  }
  const done = new Set<string>();
  let running: Sim[] = [];
  const out: SimulatedRun[] = [];
  const partSeconds = (s: Sim): number => {
    const ms = s.task.milestones;
    if (ms === undefined || ms.length === 0) return seconds(s.task, s.slots);
    const all = ms.reduce((a, m) => a + m.cost, 0);
    return (seconds(s.task, s.slots) * ms[s.part]!.cost) / (all || 1);
  };
  const launch = (r: RunningTask, now: number): Sim => {
    const s: Sim = { task: r.task, slots: r.slots, start: now, part: 0, left: 1, since: now, end: now, resized: [], reached: [] };
    s.end = now + partSeconds(s);
    return s;
  };
  let now = 0;
  while (done.size < plan.length + plan.reduce((n, t) => n + (t.milestones?.length ?? 0), 0)) {
    for (;;) {
      const next = nextToStart(plan, done, running, budget);
      if (next) {
        running.push(launch(next, now));
        continue;
      }
      const from = slotToTakeBack(plan, done, running, budget);
      const s = running.find((x) => x.task.id === from);
      if (s === undefined) break;
      const before = partSeconds(s);
      s.left -= (now - s.since) / before;
      s.slots--;
      s.since = now;
      s.end = now + s.left * partSeconds(s);
      s.resized.push({ at: now, slots: s.slots });
    }
    if (running.length === 0) throw new Error(`the schedule is stuck: ${plan.filter((t) => !done.has(t.id)).map((t) => t.id).join(', ')} can never start`);
    now = Math.min(...running.map((r) => r.end));
    for (const r of running.filter((x) => x.end === now)) {
      const ms = r.task.milestones ?? [];
      if (r.part < ms.length) {
        done.add(ms[r.part]!.id);
        r.reached.push({ id: ms[r.part]!.id, at: now });
      }
      if (r.part + 1 < ms.length) {
        r.part++;
        r.left = 1;
        r.since = now;
        r.end = now + partSeconds(r);
        continue;
      }
      done.add(r.task.id);
      out.push({ id: r.task.id, start: r.start, end: now, slots: r.slots + r.resized.length, ...(r.resized.length > 0 ? { resized: r.resized } : {}), ...(r.reached.length > 0 ? { reached: r.reached } : {}) });
    }
    running = running.filter((x) => !done.has(x.task.id));
  }
  return out;
}
