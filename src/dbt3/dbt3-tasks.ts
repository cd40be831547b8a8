import { analyzeStatement, type Dbt3Build } from './build-keys.js';
import type { TaskSpec } from './build-schedule.js';

/**
 * Relative costs per input byte, in one slot's seconds, a table's load the unit. Calibrated
 * from the timeline of `pgsurge dbt3 load` (bench/results/dbt3-levers.md): per byte of its
 * table, a primary key or an index took about a quarter of the load's slot-seconds (its
 * sort; in memory, with the sized maintenance_work_mem); a foreign key's check (a hash anti
 * join, once the tables have statistics) about a tenth per byte of both tables; ANALYZE
 * reads a sample of 30,000 pages (300 × default_statistics_target 100), i.e. at most ~240MB
 * of its table, at about a fourteenth of the load's cost per byte. They only rank tasks
 * against each other: the real durations are measured.
 */
export const COST_PER_BYTE = { load: 1, 'primary key': 0.25, index: 0.25, 'foreign key': 0.1, analyze: 0.07 } as const;

/** The most of a table ANALYZE reads: its sample of 30,000 pages of 8kB. */
const ANALYZE_SAMPLE_BYTES = 30_000 * 8192;

/** The one load task of a schedule without overlap. */
export const LOAD_ALL = 'load all tables';

export interface TableInput {
  readonly table: string;
  /** Bytes of its input files (what its load reads, and what its builds scan). */
  readonly bytes: number;
}

export interface Dbt3TaskOptions {
  /** Worker slots in all: the load's workers, the build sessions. */
  readonly budget: number;
  /** A load can use at most one worker per chunk of its input. */
  readonly chunkBytes: number;
  /**
   * Each table is its own load and its builds start once it is loaded. False: one load of
   * all tables (one worker pool over all their files, biggest first: no gap between one
   * table's last chunk and the next one's first), every build after it (or, with
   * `buildAsLoaded`, a table's builds once it is in).
   */
  readonly overlap: boolean;
  /**
   * Without overlap: a milestone per table in the one load, each table's builds once it is
   * in, on a slot the load gives back (`slotToTakeBack`). Else every build after the whole
   * load, as the kit's phases (the rows are all in soonest).
   */
  readonly buildAsLoaded?: boolean;
  readonly analyze: boolean;
  readonly schema?: string;
  /**
   * Each primary key as its unique index (beside the table's other CREATE INDEXes, SHARE)
   * and then its constraint on that index (ACCESS EXCLUSIVE for a moment), instead of the
   * kit's ADD PRIMARY KEY (ACCESS EXCLUSIVE for the whole sort: lineitem's ran alone on its
   * table, in its chain of builds). False on Citus (no ADD PRIMARY KEY USING INDEX there).
   */
  readonly primaryKeyInTwoSteps?: boolean;
}

/** The task that adds a primary key's constraint on its unique index (`primary key <table>` builds the index). */
export function primaryKeyConstraintId(table: string): string {
  return `primary key ${table} constraint`;
}

/**
 * The DBT-3 load as tasks: each table's load; its primary key and indexes once it is
 * loaded; ANALYZE of a table as soon as it is loaded (it reads the rows, not the indexes,
 * and the statistics are the ones an ANALYZE after the builds would gather); a foreign key
 * once its table is loaded, the referenced key exists and both tables are analyzed. The
 * foreign key's check is a query the planner plans: without statistics it chose, for
 * lineitem → partsupp, a merge anti join sorting all of lineitem (9.7 s at SF 0.3) instead
 * of the hash anti join it picks with them (bench/results/dbt3-levers.md). Builds already in
 * place (a resume) are left out and count as done for what waits on them.
 */
export function dbt3Tasks(tables: readonly TableInput[], builds: readonly Dbt3Build[], options: Dbt3TaskOptions): TaskSpec[] {
  const bytes = new Map(tables.map((t) => [t.table, t.bytes]));
  const size = (table: string): number => bytes.get(table) ?? 0;
  const slotsFor = (bytes: number): number => Math.max(1, Math.min(options.budget, Math.ceil(bytes / options.chunkBytes)));
  const allBytes = tables.reduce((a, t) => a + t.bytes, 0);
  const loads: TaskSpec[] = options.overlap
    ? tables.map((t) => ({
        id: `load ${t.table}`,
        kind: 'load',
        table: t.table,
        after: [],
        locks: [{ table: t.table, mode: 'row exclusive' }],
        maxSlots: slotsFor(t.bytes),
        cost: Math.max(1, t.bytes) * COST_PER_BYTE.load,
      }))
    : tables.length === 0
      ? []
      : [
          {
            id: LOAD_ALL,
            kind: 'load',
            table: tables[0]!.table,
            tables: tables.map((t) => t.table),
            after: [],
            locks: tables.map((t) => ({ table: t.table, mode: 'row exclusive' as const })),
            // Each table is in at its milestone (the load reads the biggest first): its builds may start then.
            milestones: options.buildAsLoaded !== true ? undefined : [...tables].sort((a, b) => b.bytes - a.bytes).map((t) => ({ id: `load ${t.table}`, table: t.table, cost: Math.max(1, t.bytes) * COST_PER_BYTE.load })),
            maxSlots: slotsFor(allBytes),
            cost: Math.max(1, allBytes) * COST_PER_BYTE.load,
          },
        ];
  // With overlap, `load <table>` is a task; without, a milestone of the one load.
  const loadIds = new Set(loads.flatMap((l) => [l.id, ...(l.milestones ?? []).map((m) => m.id)]));
  const loadOf = (table: string): string[] => (loadIds.has(`load ${table}`) ? [`load ${table}`] : loadIds.has(LOAD_ALL) ? [LOAD_ALL] : []);
  const pending = new Set(builds.map((b) => b.id));
  const twoSteps = options.primaryKeyInTwoSteps === true;
  // What a foreign key waits for: the referenced table's key as a constraint.
  const primaryKeyOf = (table: string): string[] => (pending.has(`primary key ${table}`) ? [twoSteps ? primaryKeyConstraintId(table) : `primary key ${table}`] : []);
  const analyzed = new Set(options.analyze ? tables.map((t) => t.table) : []);
  const analyzeOf = (table: string): string[] => (analyzed.has(table) ? [`analyze ${table}`] : []);
  const buildTasks: TaskSpec[] = builds.flatMap((b): TaskSpec[] => {
    // A key whose index a resume found in place gets only its constraint, with or without the two steps this time.
    if (b.kind === 'primary key' && (twoSteps || b.indexBuilt === true)) {
      const constraint: TaskSpec = {
        id: primaryKeyConstraintId(b.table),
        kind: b.kind,
        table: b.table,
        statement: b.index.attach,
        after: b.indexBuilt === true ? loadOf(b.table) : [b.id],
        locks: [{ table: b.table, mode: 'access exclusive' }],
        maxSlots: 1,
        cost: 1,
        instant: true,
      };
      if (b.indexBuilt === true) return [constraint];
      return [
        { id: b.id, kind: b.kind, table: b.table, statement: b.index.statement, after: loadOf(b.table), locks: [{ table: b.table, mode: 'share' }], maxSlots: 1, cost: Math.max(1, size(b.table)) * COST_PER_BYTE[b.kind] },
        constraint,
      ];
    }
    if (b.kind === 'foreign key') {
      return [{
        id: b.id,
        kind: b.kind,
        table: b.table,
        statement: b.statement,
        after: [...new Set([...loadOf(b.table), ...loadOf(b.references), ...primaryKeyOf(b.references), ...analyzeOf(b.table), ...analyzeOf(b.references)])],
        locks: [
          { table: b.table, mode: 'share row exclusive' },
          { table: b.references, mode: 'share row exclusive' },
        ],
        maxSlots: 1,
        cost: Math.max(1, size(b.table) + size(b.references)) * COST_PER_BYTE['foreign key'],
      }];
    }
    return [{
      id: b.id,
      kind: b.kind,
      table: b.table,
      statement: b.statement,
      after: loadOf(b.table),
      locks: [{ table: b.table, mode: b.kind === 'primary key' ? 'access exclusive' : 'share' }],
      maxSlots: 1,
      cost: Math.max(1, size(b.table)) * COST_PER_BYTE[b.kind],
    }];
  });
  const analyzes: TaskSpec[] = options.analyze
    ? tables.map((t) => ({
        id: `analyze ${t.table}`,
        kind: 'analyze',
        table: t.table,
        statement: analyzeStatement(t.table, options.schema),
        after: loadOf(t.table),
        locks: [{ table: t.table, mode: 'share update exclusive' }],
        maxSlots: 1,
        cost: Math.max(1, Math.min(t.bytes, ANALYZE_SAMPLE_BYTES)) * COST_PER_BYTE.analyze,
      }))
    : [];
  return [...loads, ...analyzes, ...buildTasks];
}
