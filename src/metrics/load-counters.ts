import { mbPerSecond, perSecond } from './rates.js';

export interface TableTotals {
  readonly table: string;
  readonly files: readonly string[];
  readonly rows: number;
  /** Rows left out on purpose (`--on-conflict skip`). */
  readonly skipped: number;
  /** Rows read from the input: rows + skipped. */
  readonly read: number;
  readonly bytes: number;
  readonly chunks: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  readonly mbPerSecond: number;
}

export interface LoadSummary {
  readonly tables: readonly TableTotals[];
  readonly total: Omit<TableTotals, 'table' | 'files'>;
  readonly workers: number;
  readonly target: string;
}

interface Tally {
  files: Set<string>;
  rows: number;
  skipped: number;
  bytes: number;
  chunks: number;
  first: number;
  last: number;
}

/** Counts what the server confirmed, per table, with the time span each table was loading. */
export class LoadCounters {
  private readonly tallies = new Map<string, Tally>();
  private readonly started = performance.now();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** Registers a table up front so an empty input still appears in the summary. */
  expect(table: string, file: string): void {
    this.tally(table).files.add(file);
  }

  add(table: string, file: string, rows: number, bytes: number, startedAt: number, endedAt: number, skipped = 0): void {
    const t = this.tally(table);
    t.files.add(file);
    t.rows += rows;
    t.skipped += skipped;
    t.bytes += bytes;
    t.chunks += 1;
    t.first = Math.min(t.first, startedAt);
    t.last = Math.max(t.last, endedAt);
  }

  now(): number {
    return this.clock();
  }

  summary(workers: number, target: string): LoadSummary {
    const tables: TableTotals[] = [...this.tallies.entries()].map(([table, t]) => {
      const seconds = t.chunks > 0 ? (t.last - t.first) / 1000 : 0;
      return {
        table,
        files: [...t.files],
        rows: t.rows,
        skipped: t.skipped,
        read: t.rows + t.skipped,
        bytes: t.bytes,
        chunks: t.chunks,
        seconds,
        rowsPerSecond: perSecond(t.rows, seconds),
        mbPerSecond: mbPerSecond(t.bytes, seconds),
      };
    });
    const rows = tables.reduce((s, t) => s + t.rows, 0);
    const skipped = tables.reduce((s, t) => s + t.skipped, 0);
    const bytes = tables.reduce((s, t) => s + t.bytes, 0);
    const chunks = tables.reduce((s, t) => s + t.chunks, 0);
    const seconds = (this.clock() - this.started) / 1000;
    return {
      tables,
      total: { rows, skipped, read: rows + skipped, bytes, chunks, seconds, rowsPerSecond: perSecond(rows, seconds), mbPerSecond: mbPerSecond(bytes, seconds) },
      workers,
      target,
    };
  }

  private tally(table: string): Tally {
    let t = this.tallies.get(table);
    if (!t) {
      t = { files: new Set(), rows: 0, skipped: 0, bytes: 0, chunks: 0, first: Infinity, last: -Infinity };
      this.tallies.set(table, t);
    }
    return t;
  }
}
