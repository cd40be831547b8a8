/**
 * `pgsurge dbt3 gen`: the eight TPC-H tables as dbgen writes them, deterministic for a
 * scale factor and seed, sliceable, streamed in blocks with bounded memory.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DBT3_TABLES, type Dbt3Table } from '../dbt3-schema.js';
import { tableBlocks, type BlockMaker } from './block-source.js';
import { buildContext, DEFAULT_SEED, type GenContext } from './context.js';
import { dbt3Counts, drivingRows, partsuppKeysUnique, sliceRange } from './scale.js';
import { BlockWorkers } from './worker-pool.js';
import type { Block } from './block.js';

export { DEFAULT_SEED } from './context.js';

export interface Dbt3Progress {
  readonly table: Dbt3Table;
  /** Rows and bytes written so far, of this table and in all. */
  readonly tableRows: number;
  readonly tableBytes: number;
  readonly totalRows: number;
  readonly totalBytes: number;
  readonly elapsedMs: number;
}

export interface Dbt3SliceOptions {
  readonly scale: number;
  readonly seed?: number;
  /** Write slice `part` (1-based) of `parts`; the slices concatenated are the whole table. */
  readonly parts?: number;
  readonly part?: number;
  /** Worker threads; default: 2 on a machine with 2 or more cores, none for small jobs. */
  readonly workers?: number;
}

export interface Dbt3GenerateOptions extends Dbt3SliceOptions {
  readonly tables?: readonly Dbt3Table[];
  readonly outDir: string;
  readonly onProgress?: (p: Dbt3Progress) => void;
}

export interface Dbt3File {
  readonly table: Dbt3Table;
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
}

/** Driving rows below which threads cost more than they save. */
const SMALL_JOB_UNITS = 20_000;

interface Resolved {
  readonly scale: number;
  readonly seed: number;
  readonly parts: number;
  readonly part: number;
  readonly workers: number | undefined;
}

function resolve(opts: Dbt3SliceOptions): Resolved {
  const { scale } = opts;
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`The scale factor must be a number greater than 0, got ${scale}`);
  const seed = opts.seed ?? DEFAULT_SEED;
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`The seed must be a whole number from 0 to 4294967295, got ${seed}`);
  const parts = opts.parts ?? 1;
  const part = opts.part ?? 1;
  if (!Number.isSafeInteger(parts) || parts < 1) throw new Error(`The number of parts must be a whole number from 1 up, got ${parts}`);
  if (!Number.isSafeInteger(part) || part < 1 || part > parts) throw new Error(`The part must be a whole number from 1 to ${parts}, got ${part}`);
  const counts = dbt3Counts(scale);
  if (!partsuppKeysUnique(counts)) {
    throw new Error(`Scale factor ${scale} gives ${counts.supplier} suppliers, and dbgen's partsupp formula then gives some part the same supplier twice; use a scale factor such as 0.01, 0.1 or 1`);
  }
  const workers = opts.workers;
  if (workers !== undefined && (!Number.isSafeInteger(workers) || workers < 0)) {
    throw new Error(`The number of workers must be a whole number from 0 up, got ${workers}`);
  }
  return { scale, seed, parts, part, workers };
}

function defaultWorkers(units: number): number {
  if (units < SMALL_JOB_UNITS) return 0;
  const cores = availableParallelism();
  return cores >= 2 ? Math.min(2, cores) : 0;
}

/** Generate blocks on workers or on this thread; `close` stops any workers. */
function blockMaker(r: Resolved, units: number): { maker: BlockMaker; close: () => Promise<void> } {
  const n = r.workers ?? defaultWorkers(units);
  if (n > 0) {
    const workers = new BlockWorkers(n, { scale: r.scale, seed: r.seed });
    return { maker: { workers }, close: () => workers.close() };
  }
  let ctx: GenContext | undefined;
  return { maker: { context: () => (ctx ??= buildContext(r.scale, r.seed)) }, close: async () => undefined };
}

function sliceOf(r: Resolved, table: Dbt3Table): { start: number; end: number } {
  return sliceRange(drivingRows(table, dbt3Counts(r.scale)), r.parts, r.part);
}

function unitsOf(r: Resolved, tables: readonly Dbt3Table[]): number {
  let units = 0;
  for (const t of tables) {
    const { start, end } = sliceOf(r, t);
    units += end - start;
  }
  return units;
}

/** The file name dbgen gives a table, or one of its slices: `lineitem.tbl`, `lineitem.tbl.3`. */
export function dbt3FileName(table: Dbt3Table, parts = 1, part = 1): string {
  return parts > 1 ? `${table}.tbl.${part}` : `${table}.tbl`;
}

export async function generateDbt3(opts: Dbt3GenerateOptions): Promise<{ files: Dbt3File[] }> {
  const r = resolve(opts);
  const tables = opts.tables ?? DBT3_TABLES;
  for (const t of tables) if (!DBT3_TABLES.includes(t)) throw new Error(`Unknown DBT-3 table ${t}; expected one of ${DBT3_TABLES.join(', ')}`);
  await mkdir(opts.outDir, { recursive: true });
  const { maker, close } = blockMaker(r, unitsOf(r, tables));
  const started = Date.now();
  const files: Dbt3File[] = [];
  let totalRows = 0;
  let totalBytes = 0;
  try {
    for (const table of tables) {
      const file = path.join(opts.outDir, dbt3FileName(table, r.parts, r.part));
      const { start, end } = sliceOf(r, table);
      const handle = await open(file, 'w');
      let rows = 0;
      let bytes = 0;
      try {
        for await (const block of tableBlocks(maker, table, start, end)) {
          await writeAll(handle, block.buf);
          rows += block.rows;
          bytes += block.buf.length;
          totalRows += block.rows;
          totalBytes += block.buf.length;
          opts.onProgress?.({ table, tableRows: rows, tableBytes: bytes, totalRows, totalBytes, elapsedMs: Date.now() - started });
        }
      } finally {
        await handle.close();
      }
      files.push({ table, path: file, rows, bytes });
    }
  } finally {
    await close();
  }
  return { files };
}

async function writeAll(handle: FileHandle, buf: Buffer): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await handle.write(buf, done, buf.length - done);
    done += bytesWritten;
  }
}

/** The blocks of one table (or one slice of it), in order; stops its workers when dropped. */
export async function* dbt3TableBlocks(table: Dbt3Table, opts: Dbt3SliceOptions): AsyncGenerator<Block> {
  const r = resolve(opts);
  if (!DBT3_TABLES.includes(table)) throw new Error(`Unknown DBT-3 table ${table}; expected one of ${DBT3_TABLES.join(', ')}`);
  const { start, end } = sliceOf(r, table);
  const { maker, close } = blockMaker(r, end - start);
  try {
    yield* tableBlocks(maker, table, start, end);
  } finally {
    await close();
  }
}

/** One table as a byte stream (for `--out -`). Destroying the stream stops the generator. */
export function dbt3TableStream(table: Dbt3Table, opts: Dbt3SliceOptions): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    for await (const block of dbt3TableBlocks(table, opts)) yield block.buf;
  }
  return Readable.from(bytes(), { objectMode: false, highWaterMark: 1 });
}
