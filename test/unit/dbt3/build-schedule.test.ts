import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dbt3Builds } from '../../../src/dbt3/build-keys.js';
import { DBT3_TABLES } from '../../../src/datasets/dbt3-schema.js';
import { locksConflict, nextToStart, orderTasks, simulate, slotToTakeBack, type PlannedTask, type SimulatedRun, type TaskSpec } from '../../../src/dbt3/build-schedule.js';
import { runSchedule } from '../../../src/dbt3/run-schedule.js';
import { dbt3Tasks, LOAD_ALL, primaryKeyConstraintId, type TableInput } from '../../../src/dbt3/dbt3-tasks.js';
import { phasesOf } from '../../../src/dbt3/dbt3-load.js';

/** SF 1's input sizes, in bytes (dbgen). */
const SF1: TableInput[] = [
  { table: 'region', bytes: 389 },
  { table: 'nation', bytes: 2224 },
  { table: 'supplier', bytes: 1_409_184 },
  { table: 'customer', bytes: 24_346_144 },
  { table: 'part', bytes: 24_135_125 },
  { table: 'partsupp', bytes: 118_984_616 },
  { table: 'orders', bytes: 171_952_161 },
  { table: 'lineitem', bytes: 759_863_287 },
];
const MB = 1024 * 1024;

function plan(budget: number, options: { overlap?: boolean; buildAsLoaded?: boolean; analyze?: boolean; loadsFirst?: boolean; tables?: TableInput[] } = {}): PlannedTask[] {
  const tasks = dbt3Tasks(options.tables ?? SF1, dbt3Builds(), { budget, chunkBytes: 8 * MB, overlap: options.overlap ?? true, buildAsLoaded: options.buildAsLoaded ?? false, analyze: options.analyze ?? true });
  return orderTasks(tasks, budget, { loadsFirst: options.loadsFirst ?? true });
}

/** The kit's phases: one load of all tables, every build after all of it (no milestones). */
function phasedPlan(budget: number): PlannedTask[] {
  return orderTasks(dbt3Tasks(SF1, dbt3Builds(), { budget, chunkBytes: 8 * MB, overlap: false, analyze: true }), budget, { loadsFirst: true });
}

/** Durations as the estimates say: a load's cost spread over its slots, a build's cost on one. */
const estimate = (t: PlannedTask, slots: number): number => t.cost / slots / 1e8;

function assertRespectsDependencies(p: readonly PlannedTask[], runs: readonly SimulatedRun[]): void {
  const byId = new Map(runs.map((r) => [r.id, r]));
  // A milestone is done when its task reached it.
  const doneAt = new Map([...runs.map((r) => [r.id, r.end] as const), ...runs.flatMap((r) => (r.reached ?? []).map((m) => [m.id, m.at] as const))]);
  for (const t of p) {
    const run = byId.get(t.id)!;
    for (const dep of t.after) assert.ok(doneAt.get(dep)! <= run.start, `${t.id} started at ${run.start} before ${dep} was done at ${doneAt.get(dep)}`);
  }
}

describe('the dbt3 schedule', () => {
  it('has one load per table, the kit\'s 8 primary keys, 15 indexes and 8 foreign keys, and an ANALYZE per table', () => {
    const p = plan(2);
    const count = (kind: string): number => p.filter((t) => t.kind === kind).length;
    assert.deepEqual([count('load'), count('primary key'), count('index'), count('foreign key'), count('analyze')], [8, 8, 15, 8, 8]);
    assert.equal(new Set(p.map((t) => t.id)).size, p.length, 'ids are unique');
  });

  it('puts lineitem\'s load first and, among builds, lineitem\'s before the small tables\'', () => {
    const p = plan(2);
    assert.equal(p[0]!.id, 'load lineitem');
    const builds = p.filter((t) => t.kind !== 'load');
    const firstSmall = builds.findIndex((t) => ['region', 'nation', 'supplier'].includes(t.table));
    const lastLineitemIndex = builds.map((t) => t.kind === 'index' && t.table === 'lineitem').lastIndexOf(true);
    assert.ok(lastLineitemIndex < firstSmall, 'every lineitem index is planned before any build on region, nation, supplier');
  });

  it('a foreign key waits for its table\'s load, the referenced primary key and both tables\' ANALYZE; ANALYZE only for its table\'s load', () => {
    const p = plan(2);
    const fk = p.find((t) => t.id === 'foreign key lineitem (l_orderkey) → orders')!;
    assert.deepEqual([...fk.after].sort(), ['analyze lineitem', 'analyze orders', 'load lineitem', 'load orders', 'primary key orders']);
    assert.deepEqual(p.find((t) => t.id === 'analyze nation')!.after, ['load nation']);
    const index = p.find((t) => t.id === 'index i_l_shipdate')!;
    assert.deepEqual(index.after, ['load lineitem']);
    const noAnalyze = plan(2, { analyze: false }).find((t) => t.id === 'foreign key lineitem (l_orderkey) → orders')!;
    assert.deepEqual([...noAnalyze.after].sort(), ['load lineitem', 'load orders', 'primary key orders']);
  });

  it('plans lineitem\'s builds that run alone on it (primary key, ANALYZE, foreign keys) before its indexes, which run side by side', () => {
    const p = plan(2, { overlap: false });
    const at = (id: string): number => p.findIndex((t) => t.id === id);
    const lineitemIndexes = p.filter((t) => t.kind === 'index' && t.table === 'lineitem').map((t) => at(t.id));
    for (const id of ['primary key lineitem', 'analyze lineitem', 'foreign key lineitem (l_orderkey) → orders', 'foreign key lineitem (l_partkey, l_suppkey) → partsupp']) {
      assert.ok(at(id) < Math.min(...lineitemIndexes), `${id} is planned before lineitem's indexes`);
    }
    // With the durations of a measured SF 0.3 timeline, lineitem's indexes run two at a time to the end: no slot idles
    // once they start, and what runs after the last of them (a small table's index that filled in) is shorter than one of them.
    const measured: Record<string, number> = { 'primary key lineitem': 5, 'analyze lineitem': 1.5, 'foreign key lineitem (l_orderkey) → orders': 2.3, 'foreign key lineitem (l_partkey, l_suppkey) → partsupp': 2.5, 'primary key orders': 1.1, 'primary key partsupp': 0.9 };
    const runs = simulate(p, 2, (t, slots) => (t.kind === 'load' ? 25 / slots : (measured[t.id] ?? t.cost / 3.8e7)));
    const end = Math.max(...runs.map((r) => r.end));
    const indexes = runs.filter((r) => r.id.startsWith('index i_l_'));
    const from = Math.min(...indexes.map((r) => r.start));
    const to = Math.max(...indexes.map((r) => r.end));
    for (const at of runs.flatMap((r) => [r.start, r.end]).filter((t) => t >= from && t < to)) {
      assert.equal(runs.filter((r) => r.start <= at && at < r.end).reduce((n, r) => n + r.slots, 0), 2, `a slot idles at ${at} while lineitem's indexes run`);
    }
    assert.ok(end - to < Math.min(...indexes.map((r) => r.end - r.start)), `the schedule ends ${end - to} s after lineitem's last index`);
  });

  it('--build-as-loaded: one load of all eight tables on every slot, each table a milestone of it (biggest first), each build after its tables\' milestones', () => {
    const p = plan(2, { overlap: false, buildAsLoaded: true });
    const loads = p.filter((x) => x.kind === 'load');
    assert.deepEqual(loads.map((l) => [l.id, l.maxSlots, [...(l.tables ?? [])].sort()]), [[LOAD_ALL, 2, [...DBT3_TABLES].sort()]]);
    assert.deepEqual(loads[0]!.milestones!.map((m) => m.id), ['load lineitem', 'load orders', 'load partsupp', 'load customer', 'load part', 'load supplier', 'load nation', 'load region']);
    for (const t of p.filter((x) => x.kind !== 'load')) assert.ok(t.after.includes(`load ${t.table}`) && !t.after.includes(LOAD_ALL), `${t.id} waits for its table's milestone`);
    assert.deepEqual([...p.find((t) => t.id === 'foreign key lineitem (l_orderkey) → orders')!.after].sort(), ['analyze lineitem', 'analyze orders', 'load lineitem', 'load orders', 'primary key orders']);
    const runs = simulate(p, 2, estimate);
    const group = runs.find((r) => r.id === LOAD_ALL)!;
    const first = Math.min(...runs.filter((r) => r.id !== LOAD_ALL).map((r) => r.start));
    assert.ok(first < group.end, 'lineitem\'s builds start while the other tables load');
    assert.deepEqual(group.resized, [{ at: first, slots: 1 }], 'the load gives one slot back, once lineitem is in, and keeps one');
    assertRespectsDependencies(p, runs);
  });

  it('never runs two tasks whose locks conflict, never exceeds the budget, keeps the dependencies (budgets 1 to 4)', () => {
    for (const budget of [1, 2, 3, 4]) {
      const p = plan(budget);
      const runs = simulate(p, budget, estimate);
      assert.equal(runs.length, p.length);
      assertRespectsDependencies(p, runs);
      const byId = new Map(p.map((t) => [t.id, t]));
      for (const a of runs) {
        const overlapping = runs.filter((b) => b.start < a.end && a.start < b.end);
        for (const b of overlapping) {
          if (a === b) continue;
          const clash = byId.get(a.id)!.locks.some((x) => byId.get(b.id)!.locks.some((y) => x.table === y.table && locksConflict(x.mode, y.mode)));
          assert.ok(!clash, `budget ${budget}: ${a.id} and ${b.id} ran together with conflicting locks`);
        }
      }
      // Slots in use at every start and end: never above the budget.
      for (const at of runs.flatMap((r) => [r.start, (r.start + r.end) / 2])) {
        const used = runs.filter((r) => r.start <= at && at < r.end).reduce((n, r) => n + r.slots, 0);
        assert.ok(used <= budget, `budget ${budget}: ${used} slots in use at ${at}`);
      }
    }
  });

  it('with loads first, the last row is in as soon as loading one table after the other with all slots would have it', () => {
    const p = plan(2);
    const runs = simulate(p, 2, estimate);
    const loadEnd = Math.max(...runs.filter((r) => r.id.startsWith('load ')).map((r) => r.end));
    // Each load alone on both slots, biggest first (what the kit's two-at-a-time \copy amounts to at best).
    const serial = SF1.reduce((s, t) => s + p.find((x) => x.id === `load ${t.table}`)!.cost / Math.min(2, p.find((x) => x.id === `load ${t.table}`)!.maxSlots) / 1e8, 0);
    assert.ok(loadEnd <= serial + 1e-9, `loads end at ${loadEnd}, serial ${serial}`);
  });

  it('overlapping builds with loads (a load per table, or one load giving slots back) ends no later than the kit\'s phases, on the estimates', () => {
    for (const budget of [2, 4]) {
      const end = (runs: SimulatedRun[]): number => Math.max(...runs.map((r) => r.end));
      const overlapped = end(simulate(plan(budget), budget, estimate));
      const grouped = end(simulate(plan(budget, { overlap: false, buildAsLoaded: true }), budget, estimate));
      const phased = end(simulate(phasedPlan(budget), budget, estimate));
      // A list schedule is a heuristic, not an optimum: overlapping may lose a hair where a lock holds a task back (0.04% at budget 2).
      assert.ok(overlapped <= phased * 1.01, `budget ${budget}: overlapped ${overlapped} > phased ${phased}`);
      assert.ok(grouped <= phased * 1.01, `budget ${budget}: one load with milestones ${grouped} > phased ${phased}`);
    }
  });

  it('two-step primary keys: the unique index beside the table\'s other indexes, then the constraint on it; a foreign key waits for the constraint', () => {
    const p = orderTasks(dbt3Tasks(SF1, dbt3Builds(), { budget: 2, chunkBytes: 8 * MB, overlap: false, analyze: true, primaryKeyInTwoSteps: true }), 2, { loadsFirst: true });
    const at = (id: string): PlannedTask => p.find((t) => t.id === id)!;
    assert.equal(p.filter((t) => t.kind === 'primary key').length, 16);
    assert.equal(at('primary key lineitem').statement, 'CREATE UNIQUE INDEX "lineitem_pkey" ON "lineitem" ("l_orderkey", "l_linenumber")');
    assert.deepEqual(at('primary key lineitem').locks, [{ table: 'lineitem', mode: 'share' }]);
    assert.equal(at(primaryKeyConstraintId('lineitem')).statement, 'ALTER TABLE "lineitem" ADD PRIMARY KEY USING INDEX "lineitem_pkey"');
    assert.deepEqual(at(primaryKeyConstraintId('lineitem')).after, ['primary key lineitem']);
    assert.deepEqual([...at('foreign key lineitem (l_orderkey) → orders').after].sort(), ['analyze lineitem', 'analyze orders', LOAD_ALL, 'primary key orders constraint']);
    // On the measured SF 1 durations (a shared machine's timeline, stretched alike): lineitem's key sorts beside its indexes, and the builds end sooner.
    const measured: Record<string, number> = {
      'analyze lineitem': 4.06, 'primary key lineitem': 32.59, 'foreign key lineitem (l_orderkey) → orders': 12.05, 'foreign key lineitem (l_partkey, l_suppkey) → partsupp': 15.76,
      'primary key orders': 9.07, 'primary key partsupp': 7.51, 'foreign key orders (o_custkey) → customer': 5.59, 'index i_o_custkey': 4.95, 'index i_o_orderdate': 5.27, 'index i_ps_suppkey': 4.5,
      'index i_l_commitdate': 37.21, 'index i_l_orderkey': 20.65, 'index i_l_orderkey_quantity': 23.7, 'index i_l_partkey': 27.35, 'index i_l_receiptdate': 31.45, 'index i_l_shipdate': 23.09, 'index i_l_suppkey': 29.06, 'index i_l_suppkey_partkey': 27.33,
    };
    const seconds = (t: PlannedTask): number => (t.kind === 'load' ? 72 : t.instant === true ? 0.05 : (measured[t.id] ?? t.cost / 4e7));
    const runs = simulate(p, 2, seconds);
    assertRespectsDependencies(p, runs);
    const run = (id: string): SimulatedRun => runs.find((r) => r.id === id)!;
    assert.ok(runs.some((r) => r.id.startsWith('index i_l_') && r.start < run('primary key lineitem').end && run('primary key lineitem').start < r.end), 'lineitem\'s key sorts beside one of its indexes');
    const kit = simulate(phasedPlan(2), 2, seconds);
    const end = (rs: SimulatedRun[]): number => Math.max(...rs.map((r) => r.end));
    assert.ok(end(runs) - 72 < (end(kit) - 72) * 0.95, `builds ${end(runs) - 72} s in two steps, ${end(kit) - 72} s with ADD PRIMARY KEY`);
  });

  it('a resume that finds a primary key\'s unique index in place (stopped between the two steps) only adds the constraint', () => {
    const builds = dbt3Builds().map((b) => (b.kind === 'primary key' && b.table === 'orders' ? { ...b, indexBuilt: true } : b));
    const p = orderTasks(dbt3Tasks(SF1, builds, { budget: 2, chunkBytes: 8 * MB, overlap: false, analyze: false, primaryKeyInTwoSteps: true }), 2);
    assert.equal(p.find((t) => t.id === 'primary key orders'), undefined);
    assert.deepEqual(p.find((t) => t.id === primaryKeyConstraintId('orders'))!.after, [LOAD_ALL]);
    assert.equal(simulate(p, 2, estimate).length, p.length);
  });

  it('a resume leaves out the builds already there, and what waited on them can start', () => {
    const builds = dbt3Builds().filter((b) => b.id !== 'primary key orders');
    const p = orderTasks(dbt3Tasks(SF1, builds, { budget: 2, chunkBytes: 8 * MB, overlap: true, analyze: false }), 2);
    const fk = p.find((t) => t.id === 'foreign key lineitem (l_orderkey) → orders')!;
    assert.deepEqual([...fk.after].sort(), ['load lineitem', 'load orders']);
    assert.equal(simulate(p, 2, estimate).length, p.length);
  });

  it('nextToStart: gives a load the free slots up to its chunks, skips a task a running one\'s lock would block', () => {
    const p = plan(2);
    const first = nextToStart(p, new Set(), [], 2)!;
    assert.deepEqual([first.task.id, first.slots], ['load lineitem', 2]);
    assert.equal(nextToStart(p, new Set(), [first], 2), undefined, 'no slot free');
    const done = new Set(p.filter((t) => t.kind === 'load').map((t) => t.id));
    const pk = { task: p.find((t) => t.id === 'primary key lineitem')!, slots: 1 };
    const second = nextToStart(p, done, [pk], 2)!;
    assert.notEqual(second.task.table, 'lineitem', `${second.task.id} would wait on the primary key's ACCESS EXCLUSIVE lock`);
    // An index on partsupp runs; lineitem's foreign key to partsupp is ready and waits for it: lineitem's indexes must not start before it.
    const ready = new Set([...done, 'primary key lineitem', 'primary key partsupp', 'primary key orders', 'analyze lineitem', 'analyze partsupp', 'analyze orders', 'foreign key lineitem (l_orderkey) → orders']);
    const onPartsupp = { task: p.find((t) => t.id === 'index i_ps_suppkey')!, slots: 1 };
    const next = nextToStart(p, ready, [onPartsupp], 2);
    assert.ok(next === undefined || (next.task.table !== 'lineitem' && next.task.table !== 'partsupp'), `${next?.task.id} would hold back the foreign key lineitem → partsupp`);
    const tiny = nextToStart(orderTasks(dbt3Tasks([{ table: 'region', bytes: 389 }], [], { budget: 4, chunkBytes: 8 * MB, overlap: true, analyze: false }), 4), new Set(), [], 4)!;
    assert.equal(tiny.slots, 1, 'a one-chunk table uses one worker');
  });

  it('nextToStart: a ready task does not take a lock on the table an earlier task waits on; on the waiting task\'s other tables it may', () => {
    const p = phasedPlan(2);
    const loaded = new Set([LOAD_ALL, 'analyze lineitem', 'analyze orders', 'analyze partsupp', 'analyze customer', 'primary key orders', 'primary key partsupp', 'primary key customer']);
    // lineitem's key is built; its foreign key to orders is ready and waits for orders' first index: orders' second must not start.
    const onOrders = { task: p.find((t) => t.id === 'index i_o_custkey')!, slots: 1 };
    const next = nextToStart(p, new Set([...loaded, 'primary key lineitem']), [onOrders], 2);
    assert.ok(next !== undefined && next.task.table !== 'orders' && next.task.table !== 'lineitem', `${next?.task.id} would make lineitem's foreign key to orders wait for it too`);
    // While lineitem's key runs, its foreign key to partsupp waits on lineitem, not on partsupp: partsupp's builds take the free slot.
    const key = { task: p.find((t) => t.id === 'primary key lineitem')!, slots: 1 };
    const beside = nextToStart(p, loaded, [key], 2);
    assert.ok(beside !== undefined, 'something runs beside lineitem\'s key');
    const partsupp = nextToStart(p, new Set([...loaded, ...p.filter((t) => t.table !== 'partsupp' && t.table !== 'lineitem' && t.kind !== 'load').map((t) => t.id)]), [key], 2);
    assert.equal(partsupp?.task.table, 'partsupp', `${partsupp?.task.id}: partsupp's builds are held back only on the tables the foreign key waits on`);
  });

  it('runSchedule: tells the runner which task is the last to start', async () => {
    const p = phasedPlan(2);
    const lastOnes: string[] = [];
    const outcome = await runSchedule(p, 2, {
      now: () => 0,
      run: async (task, _slots, _signal, _progress, last) => {
        if (last) lastOnes.push(task.id);
        await new Promise((r) => setImmediate(r));
        return { statement: task.id };
      },
    });
    assert.equal(outcome.error, undefined);
    assert.equal(lastOnes.length, 1, `told last: ${lastOnes.join(', ')}`);
    const started = [...outcome.runs].sort((a, b) => a.start - b.start);
    assert.ok(p.some((t) => t.id === lastOnes[0]));
    assert.equal(outcome.runs.length, p.length);
    assert.ok(started.length > 0);
  });

  it('refuses a cycle and a dependency on a task that is not there', () => {
    const t = (id: string, after: string[]) => ({ id, kind: 'index' as const, table: 'x', after, locks: [], maxSlots: 1, cost: 1 });
    assert.throws(() => orderTasks([t('a', ['b']), t('b', ['a'])], 1), /cycle/);
    assert.throws(() => orderTasks([t('a', ['nope'])], 1), /nope, which is not in the schedule/);
  });

  it('locksConflict follows PostgreSQL\'s table: two CREATE INDEX share, ADD PRIMARY KEY blocks all, ANALYZE blocks CREATE INDEX', () => {
    assert.equal(locksConflict('share', 'share'), false);
    assert.equal(locksConflict('share', 'access exclusive'), true);
    assert.equal(locksConflict('share row exclusive', 'share row exclusive'), true);
    assert.equal(locksConflict('share update exclusive', 'share'), true);
    assert.equal(locksConflict('row exclusive', 'row exclusive'), false);
  });

  it('phasesOf: each kind from its first start to its last end', () => {
    const runs = [
      { id: 'load a', kind: 'load' as const, table: 'a', statement: '', slots: 2, start: 0, end: 3 },
      { id: 'load b', kind: 'load' as const, table: 'b', statement: '', slots: 1, start: 3, end: 4 },
      { id: 'index i', kind: 'index' as const, table: 'a', statement: '', slots: 1, start: 3, end: 5.5 },
    ];
    assert.deepEqual(phasesOf(runs), [
      { phase: 'load', seconds: 4, statements: 2 },
      { phase: 'indexes', seconds: 2.5, statements: 1 },
    ]);
  });
});

describe('--build-as-loaded: one load of all tables, giving slots back (milestones)', () => {
  const group = (budget: number): PlannedTask[] => plan(budget, { overlap: false, buildAsLoaded: true });

  it('by default the one load has no milestones, every build waits for all of it', () => {
    const p = phasedPlan(2);
    assert.equal(p.find((t) => t.id === LOAD_ALL)!.milestones, undefined);
    for (const t of p.filter((x) => x.kind !== 'load')) assert.ok(t.after.includes(LOAD_ALL) && !t.after.some((d) => d.startsWith('load ') && d !== LOAD_ALL), `${t.id} waits for the whole load`);
  });

  it('slotToTakeBack: none while a slot is free or before the first table is in; once lineitem is in, the load gives one back; never its last', () => {
    const p = group(2);
    const load = p.find((t) => t.id === LOAD_ALL)!;
    assert.equal(slotToTakeBack(p, new Set(), [{ task: load, slots: 1 }], 2), undefined, 'a slot is free: nothing to take back');
    assert.equal(slotToTakeBack(p, new Set(), [{ task: load, slots: 2 }], 2), undefined, 'no table in: no build could use the slot');
    assert.equal(slotToTakeBack(p, new Set(['load lineitem']), [{ task: load, slots: 2 }], 2), LOAD_ALL);
    assert.equal(slotToTakeBack(p, new Set(['load lineitem']), [{ task: load, slots: 1 }, { task: p.find((t) => t.id === 'analyze lineitem')!, slots: 1 }], 2), undefined, 'the last worker stays');
    // lineitem's builds wait for a lock a running one holds: the slot would only idle.
    assert.equal(nextToStart(p, new Set(['load lineitem']), [{ task: load, slots: 2 }], 2), undefined, 'no free slot: the build waits for the take-back');
    const started = nextToStart(p, new Set(['load lineitem']), [{ task: load, slots: 1 }], 2)!;
    assert.equal(started.task.table, 'lineitem', `${started.task.id} starts on the slot given back`);
    assert.equal(nextToStart(p, new Set(), [{ task: load, slots: 1 }], 2), undefined, 'a table still loading holds its lock: nothing on it starts');
  });

  it('slotToTakeBack: not when the rest of the load is longer than what would start (eight tables of one size: the first in is no long pole)', () => {
    const p = plan(2, { overlap: false, buildAsLoaded: true, tables: SF1.map((t) => ({ table: t.table, bytes: 100 * MB })) });
    const load = p.find((t) => t.id === LOAD_ALL)!;
    const first = load.milestones![0]!;
    assert.ok(nextToStart(p, new Set([first.id]), [{ task: load, slots: 1 }], 2) !== undefined, 'a build could use a slot');
    assert.equal(slotToTakeBack(p, new Set([first.id]), [{ task: load, slots: 2 }], 2), undefined, 'seven tables still to load on two workers come first');
  });

  it('runSchedule: a table\'s builds start at its milestone on the slot the load gives back; the timeline says when', async () => {
    const tables: TableInput[] = [
      { table: 'big', bytes: 100 * MB },
      { table: 'small', bytes: 10 * MB },
    ];
    const build = (id: string, table: string, kind: 'primary key' | 'index', cost: number): TaskSpec => ({ id, kind, table, statement: id, after: [`load ${table}`], locks: [{ table, mode: kind === 'primary key' ? 'access exclusive' : 'share' }], maxSlots: 1, cost });
    const load = dbt3Tasks(tables, [], { budget: 2, chunkBytes: 8 * MB, overlap: false, buildAsLoaded: true, analyze: false })[0]!;
    const p = orderTasks([load, build('primary key big', 'big', 'primary key', 50 * MB), build('index small', 'small', 'index', 5 * MB)], 2, { loadsFirst: true });
    let clock = 0;
    const events: string[] = [];
    const outcome = await runSchedule(p, 2, {
      now: () => clock,
      run: async (task, slots, _signal, progress) => {
        events.push(`start ${task.id} on ${slots}`);
        if (task.kind === 'load') {
          // Two workers: big is in, then the schedule asks for a worker before the next chunk.
          clock = 1;
          progress.reached('load big');
          await new Promise((r) => setImmediate(r));
          assert.equal(progress.takeBack(), true, 'the schedule wants a slot for big\'s key');
          assert.equal(progress.takeBack(), false, 'one request, taken once');
          clock = 1.5;
          progress.gaveBack();
          await new Promise((r) => setImmediate(r));
          clock = 3;
          progress.reached('load small');
          return { statement: 'COPY' };
        }
        await new Promise((r) => setImmediate(r));
        clock += 1;
        return { statement: task.statement! };
      },
    });
    assert.equal(outcome.error, undefined);
    assert.deepEqual(events, [`start ${LOAD_ALL} on 2`, 'start primary key big on 1', 'start index small on 1']);
    const loadRun = outcome.runs.find((r) => r.id === LOAD_ALL)!;
    assert.deepEqual(loadRun.resized, [{ at: 1.5, slots: 1 }]);
    assert.equal(outcome.runs.find((r) => r.id === 'primary key big')!.start, 1.5);
  });
});

describe('runSchedule with milestones', () => {
  it('a load that ends has passed all its milestones, said or not (a resume with every table in): what waits on them runs', async () => {
    const load = dbt3Tasks([{ table: 'a', bytes: MB }], [], { budget: 2, chunkBytes: 8 * MB, overlap: false, buildAsLoaded: true, analyze: true })[0]!;
    const p = orderTasks(dbt3Tasks([{ table: 'a', bytes: MB }], [], { budget: 2, chunkBytes: 8 * MB, overlap: false, buildAsLoaded: true, analyze: true }), 2, { loadsFirst: true });
    assert.deepEqual(load.milestones!.map((m) => m.id), ['load a']);
    const ran: string[] = [];
    const outcome = await runSchedule(p, 2, { now: () => 0, run: async (task) => (ran.push(task.id), { statement: '' }) });
    assert.equal(outcome.error, undefined);
    assert.deepEqual(ran, [LOAD_ALL, 'analyze a']);
  });
});
