import { analyzeStatement, type Dbt3Build } from '../db/build-keys.js';
import type { TaskSpec } from './build-schedule.js';

/**
 * Relative costs per input byte, in one slot's seconds (from SF 1 on PostgreSQL 15: a
 * table's load is the unit; an index or key over it about a quarter to a third of that).
 * They only rank tasks against each other: the real durations are measured.
 */
export const COST_PER_BYTE = { load: 1, 'primary key': 0.35, index: 0.25, 'foreign key': 0.25, analyze: 0.01 } as const;

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
   * table's last chunk and the next one's first), every build after it.
   */
  readonly overlap: boolean;
  readonly analyze: boolean;
  readonly schema?: string;
}

/**
 * The DBT-3 load as tasks: each table's load; its primary key and indexes once it is
 * loaded; a foreign key once its table is loaded and the referenced key exists; ANALYZE
 * of a table after everything built on it. Builds already in place (a resume) are left out
 * and count as done for what waits on them.
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
            maxSlots: slotsFor(allBytes),
            cost: Math.max(1, allBytes) * COST_PER_BYTE.load,
          },
        ];
  const loadIds = new Set(loads.map((l) => l.id));
  const loadOf = (table: string): string[] => (options.overlap ? [`load ${table}`] : [LOAD_ALL]).filter((id) => loadIds.has(id));
  const pending = new Set(builds.map((b) => b.id));
  const primaryKeyOf = (table: string): string[] => [`primary key ${table}`].filter((id) => pending.has(id));
  const buildTasks: TaskSpec[] = builds.map((b) => {
    if (b.kind === 'foreign key') {
      return {
        id: b.id,
        kind: b.kind,
        table: b.table,
        statement: b.statement,
        after: [...new Set([...loadOf(b.table), ...loadOf(b.references), ...primaryKeyOf(b.references)])],
        locks: [
          { table: b.table, mode: 'share row exclusive' },
          { table: b.references, mode: 'share row exclusive' },
        ],
        maxSlots: 1,
        cost: Math.max(1, size(b.table) + size(b.references) / 4) * COST_PER_BYTE['foreign key'],
      };
    }
    return {
      id: b.id,
      kind: b.kind,
      table: b.table,
      statement: b.statement,
      after: loadOf(b.table),
      locks: [{ table: b.table, mode: b.kind === 'primary key' ? 'access exclusive' : 'share' }],
      maxSlots: 1,
      cost: Math.max(1, size(b.table)) * COST_PER_BYTE[b.kind],
    };
  });
  const analyzes: TaskSpec[] = options.analyze
    ? tables.map((t) => ({
        id: `analyze ${t.table}`,
        kind: 'analyze',
        table: t.table,
        statement: analyzeStatement(t.table, options.schema),
        after: [...loadOf(t.table), ...buildTasks.filter((b) => b.table === t.table).map((b) => b.id)],
        locks: [{ table: t.table, mode: 'share update exclusive' }],
        maxSlots: 1,
        // ANALYZE reads a sample (300 × default_statistics_target rows), not the table.
        cost: Math.max(1, Math.min(t.bytes, 64 * 1024 * 1024)) * COST_PER_BYTE.analyze,
      }))
    : [];
  return [...loads, ...buildTasks, ...analyzes];
}
