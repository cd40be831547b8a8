import type { DurabilityReport } from '../writer/durability/durability-session.js';
import { mbPerSecond, perSecond } from './rates.js';
import type { TableWire } from '../wire/wire-report.js';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import type { ChunkResult } from '../writer/chunk-writer.js';
import type { TableRoute } from '../writer/citus/plan-routing.js';

/** Rows of one input: read = loaded + rejected + skipped, counted over the chunks this run committed. */
export interface RowAccount {
  readonly read: number;
  readonly loaded: number;
  readonly rejected: number;
  readonly skipped: number;
}

export interface FileTotals extends RowAccount {
  readonly table: string;
  readonly file: string;
  /** What earlier runs of the same load committed for this input (a resume does not read it again). */
  readonly earlier: Omit<RowAccount, 'read'>;
}

export interface TableTotals extends RowAccount {
  readonly table: string;
  readonly files: readonly string[];
  /** Rows loaded (the same as `loaded`). */
  readonly rows: number;
  readonly bytes: number;
  readonly chunks: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  readonly mbPerSecond: number;
  /** Of `skipped`, rows the table's BEFORE INSERT row trigger kept out (it returned NULL for them); absent when none. */
  readonly skippedByTrigger?: number;
  /** The table's BEFORE INSERT row triggers, when it has any (then the server may store fewer rows than sent). */
  readonly rowTriggers?: readonly string[];
}

export interface LoadSummary {
  readonly tables: readonly TableTotals[];
  readonly files: readonly FileTotals[];
  /**
   * All tables together. Its `seconds` and `rowsPerSecond` are measured as each table's are:
   * from the first chunk sent to the last chunk committed (rows/s = rows loaded ÷ those seconds);
   * `elapsedSeconds` is the whole load, connecting, planning and the end checks included.
   */
  readonly total: Omit<TableTotals, 'table' | 'files'> & { readonly elapsedSeconds: number };
  /** The ledger's id for this load (resume with `--load-id`), when it has one. */
  readonly loadId?: string;
  /** Reject files written, with how many rows each holds. */
  readonly rejectFiles?: readonly { path: string; rows: number }[];
  readonly workers: number;
  readonly target: string;
  /** A load of keys to delete (`--mode delete`): its `loaded` rows were deleted, its `skipped` keys matched no row. */
  readonly deletes?: boolean;
  /** Which wire (binary or text COPY) each table went through, and why when text; absent for writers without a wire (INSERT). */
  readonly wire?: readonly TableWire[];
  /** The durability preset and the settings the load ran with (set by `loadWithDurability`). */
  readonly durability?: DurabilityReport;
  /**
   * A stopped load: what the ledger holds of it, all runs together (what is in the table
   * whatever this run's counters saw), or `null` when the ledger could not be read.
   */
  readonly ledger?: { readonly loaded: number; readonly rejected: number; readonly skipped: number } | null;
  /** `--create` from a file: what was sniffed or read of each input described, and how it was read (one line each). */
  readonly sniffed?: readonly string[];
  /** What to do about the rows rejected, when the load knows more than the reject file says (types sniffed from a sample). */
  readonly hints?: readonly string[];
  /** Citus: which way each Citus table's rows went (routed to the shards by pgsurge, or through the coordinator), and why. */
  readonly citusRoutes?: readonly TableRoute[];
  /** The load had completed before: this run loaded nothing. When it completed, and what its runs committed. */
  readonly completed?: { readonly at: Date; readonly loaded: number; readonly rejected: number; readonly skipped: number };
  /** Inputs (as named) that grew since their load: this run loaded what was appended to them. */
  readonly appended?: readonly string[];
}

interface FileTally {
  table: string;
  read: number;
  loaded: number;
  rejected: number;
  skipped: number;
  earlier: { loaded: number; rejected: number; skipped: number };
}

interface Tally {
  files: Set<string>;
  read: number;
  rejected: number;
  skipped: number;
  triggerSkipped: number;
  triggers?: readonly string[];
  rows: number;
  bytes: number;
  chunks: number;
  first: number;
  last: number;
}

/** Counts what the server confirmed, per table, with the time span each table was loading. */
export class LoadCounters {
  private readonly tallies = new Map<string, Tally>();
  private readonly fileTallies = new Map<string, FileTally>();
  private readonly started = performance.now();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** Registers a table up front so an empty input still appears in the summary. */
  expect(table: string, file: string): void {
    this.tally(table).files.add(file);
    this.fileTally(table, file);
  }

  /** What earlier runs of the load committed for an input. */
  earlier(table: string, file: string, counts: { loaded: number; rejected: number; skipped: number }): void {
    this.fileTally(table, file).earlier = { ...counts };
  }

  /**
   * A committed chunk: `rows` loaded by the server; `account` says how many records were read
   * and rejected or skipped (by default all read rows count as loaded).
   */
  add(table: string, file: string, rows: number, bytes: number, startedAt: number, endedAt: number, account: Partial<RowAccount> & { triggerSkipped?: number } = {}): void {
    const read = account.read ?? rows;
    const rejected = account.rejected ?? 0;
    const skipped = account.skipped ?? 0;
    const f = this.fileTally(table, file);
    f.read += read;
    f.loaded += rows;
    f.rejected += rejected;
    f.skipped += skipped;
    const t = this.tally(table);
    t.files.add(file);
    t.read += read;
    t.rejected += rejected;
    t.skipped += skipped;
    t.triggerSkipped += account.triggerSkipped ?? 0;
    t.rows += rows;
    t.bytes += bytes;
    t.chunks += 1;
    t.first = Math.min(t.first, startedAt);
    t.last = Math.max(t.last, endedAt);
  }

  /** The table has BEFORE INSERT row triggers (rows they keep out are counted as skipped): the summary names them. */
  rowTriggers(table: string, triggers: readonly string[]): void {
    this.tally(table).triggers = triggers;
  }

  now(): number {
    return this.clock();
  }

  summary(workers: number, target: string, extra: { loadId?: string; rejectFiles?: readonly { path: string; rows: number }[]; wire?: readonly TableWire[] } = {}): LoadSummary {
    const tables: TableTotals[] = [...this.tallies.entries()].map(([table, t]) => {
      const seconds = t.chunks > 0 ? (t.last - t.first) / 1000 : 0;
      return {
        table,
        files: [...t.files],
        read: t.read,
        loaded: t.rows,
        rejected: t.rejected,
        skipped: t.skipped,
        rows: t.rows,
        bytes: t.bytes,
        chunks: t.chunks,
        seconds,
        rowsPerSecond: perSecond(t.rows, seconds),
        mbPerSecond: mbPerSecond(t.bytes, seconds),
        ...(t.triggerSkipped > 0 ? { skippedByTrigger: t.triggerSkipped } : {}),
        ...(t.triggers !== undefined && t.triggers.length > 0 ? { rowTriggers: t.triggers } : {}),
      };
    });
    const files: FileTotals[] = [...this.fileTallies.entries()].map(([key, f]) => ({
      table: f.table,
      file: key.slice(key.indexOf('\0') + 1),
      read: f.read,
      loaded: f.loaded,
      rejected: f.rejected,
      skipped: f.skipped,
      earlier: f.earlier,
    }));
    const rows = tables.reduce((s, t) => s + t.rows, 0);
    const read = tables.reduce((s, t) => s + t.read, 0);
    const rejected = tables.reduce((s, t) => s + t.rejected, 0);
    const skipped = tables.reduce((s, t) => s + t.skipped, 0);
    const bytes = tables.reduce((s, t) => s + t.bytes, 0);
    const chunks = tables.reduce((s, t) => s + t.chunks, 0);
    const first = Math.min(...[...this.tallies.values()].filter((t) => t.chunks > 0).map((t) => t.first));
    const last = Math.max(...[...this.tallies.values()].filter((t) => t.chunks > 0).map((t) => t.last));
    const seconds = chunks > 0 ? (last - first) / 1000 : 0;
    const elapsedSeconds = (this.clock() - this.started) / 1000;
    return {
      tables,
      files,
      ...extra,
      total: { read, loaded: rows, rejected, skipped, rows, bytes, chunks, seconds, rowsPerSecond: perSecond(rows, seconds), mbPerSecond: mbPerSecond(bytes, seconds), elapsedSeconds },
      workers,
      target,
    };
  }

  private fileTally(table: string, file: string): FileTally {
    const key = `${table}\0${file}`;
    let f = this.fileTallies.get(key);
    if (!f) {
      f = { table, read: 0, loaded: 0, rejected: 0, skipped: 0, earlier: { loaded: 0, rejected: 0, skipped: 0 } };
      this.fileTallies.set(key, f);
    }
    return f;
  }

  private tally(table: string): Tally {
    let t = this.tallies.get(table);
    if (!t) {
      t = { files: new Set(), read: 0, rejected: 0, skipped: 0, triggerSkipped: 0, rows: 0, bytes: 0, chunks: 0, first: Infinity, last: -Infinity };
      this.tallies.set(table, t);
    }
    return t;
  }
}

/** What the load tells whoever watches it (the CLI's progress line, a test). */
export interface LoadReporter {
  /** Called once the tables are ready and before any row is sent; the load waits for it (a sampler takes its baseline). */
  start?(info: { inputs: readonly LoadTarget[]; totalBytes: number | undefined; workers: number; target: string; loadId: string; resumed: boolean; /** The application_name prefix of this run's workers (a part's has its K/N): what the wait sampler looks for; absent where the watcher hears of several loads' workers by `workersNamed`. */ workerPrefix?: string }): void | Promise<void>;
  /** The application_name prefix of the workers of one of several loads under one watcher (dbt3 load's tables), once they are connected. */
  workersNamed?(workerPrefix: string): void;
  chunkLoaded?(info: { chunk: Chunk; rows: number; result: ChunkResult; seconds: number; counters: LoadCounters }): void;
  /** Every row of the table's inputs is in (its chunks counted): its keys may be built while other tables still load. */
  tableLoaded?(table: string): void;
  /** Something the user should know before the load goes on (e.g. the table was emptied by crash recovery). */
  note?(message: string): void;
  /** Something that may be a mistake with the user's data, shown even under -q (e.g. the same file was loaded before, differently: its rows go in again). */
  warning?(message: string): void;
  /** A chunk's connection or server went away; it is retried on a fresh connection. */
  retrying?(info: { chunk: Chunk; error: unknown; attempt: number; waitMs: number }): void;
}
