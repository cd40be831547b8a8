/**
 * `pgsurge dbt3 gen`: the eight TPC-H tables as dbgen writes them, deterministic for a
 * scale factor and seed, sliceable, streamed in blocks with bounded memory.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DBT3_TABLES, type Dbt3Table } from '../dbt3-schema.js';
import { groupBlocks, type BlockMaker } from './block-source.js';
import { buildContext, DEFAULT_SEED, type GenContext } from './context.js';
import { dbt3Counts, drivingRows, partsuppKeysUnique, sliceRange } from './scale.js';
import { BlockWorkers } from './worker-pool.js';
import type { ParquetOutOptions } from './parquet-out.js';
import type { Dbt3GenFormat } from './gen-formats.js';
import type { Block, TableGroup } from './block.js';


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
  /** `.tbl` (dbgen's `|` text, the default) or Parquet (typed as the kit's schema). */
  readonly format?: Dbt3GenFormat;
  /** Parquet only: compression and rows per row group. */
  readonly parquet?: ParquetOutOptions;
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

/**
 * The file name dbgen gives a table, or one of its slices: `lineitem.tbl`, `lineitem.tbl.3`;
 * as Parquet, `lineitem.parquet`, `lineitem.3.parquet` (the extension last, as Parquet
 * tools expect; `dbt3 load` takes both).
 */
export function dbt3FileName(table: Dbt3Table, parts = 1, part = 1, format: Dbt3GenFormat = 'tbl'): string {
  if (format === 'parquet') return parts > 1 ? `${table}.${part}.parquet` : `${table}.parquet`;
  return parts > 1 ? `${table}.tbl.${part}` : `${table}.tbl`;
}

/** The tables in schema order, orders and lineitem paired when both are asked for. */
export function tableGroups(tables: readonly Dbt3Table[]): TableGroup[] {
  const wanted = DBT3_TABLES.filter((t) => tables.includes(t));
  const both = wanted.includes('orders') && wanted.includes('lineitem');
  const groups: TableGroup[] = [];
  for (const t of wanted) {
    if (both && t === 'lineitem') continue;
    groups.push(both && t === 'orders' ? ['orders', 'lineitem'] : [t]);
  }
  return groups;
}

export async function generateDbt3(opts: Dbt3GenerateOptions): Promise<{ files: Dbt3File[] }> {
  const r = resolve(opts);
  const tables = opts.tables ?? DBT3_TABLES;
  for (const t of tables) if (!DBT3_TABLES.includes(t)) throw new Error(`Unknown DBT-3 table ${t}; expected one of ${DBT3_TABLES.join(', ')}`);
  try {
    await mkdir(opts.outDir, { recursive: true });
  } catch (error) {
    throw new Error(`Cannot use ${opts.outDir} as the output directory: ${(error as Error).message}`);
  }
  const format = opts.format ?? 'tbl';
  const { maker, close } = blockMaker(r, unitsOf(r, tables));
  const started = Date.now();
  const files: Dbt3File[] = [];
  let totalRows = 0;
  let totalBytes = 0;
  try {
    for (const group of tableGroups(tables)) {
      // a group's tables share their driving rows, so one slice range serves them all
      const { start, end } = sliceOf(r, group[0]!);
      const outputs = group.map((table) => ({ table, path: path.join(opts.outDir, dbt3FileName(table, r.parts, r.part, format)), rows: 0, bytes: 0 }));
      const sinks = format === 'parquet' ? await parquetSinks(outputs, opts.parquet) : await tblSinks(outputs);
      let finished = false;
      try {
        for await (const blocks of groupBlocks(maker, group, start, end)) {
          await Promise.all(blocks.map((block, i) => sinks[i]!.write(block.buf)));
          blocks.forEach((block, i) => {
            const out = outputs[i]!;
            const written = sinks[i]!.bytes();
            totalBytes += written - out.bytes;
            out.bytes = written;
            out.rows += block.rows;
            totalRows += block.rows;
          });
          const last = outputs[outputs.length - 1]!;
          opts.onProgress?.({ table: last.table, tableRows: last.rows, tableBytes: last.bytes, totalRows, totalBytes, elapsedMs: Date.now() - started });
        }
        finished = true;
      } finally {
        for (const sink of sinks) await sink.close(finished);
      }
      outputs.forEach((out, i) => {
        const written = sinks[i]!.bytes();
        totalBytes += written - out.bytes;
        out.bytes = written;
      });
      files.push(...outputs);
    }
  } finally {
    await close();
  }
  return { files };
}

/** Where one table's blocks go: a `.tbl` file (the bytes as made) or a Parquet file. */
interface TableSink {
  write(buf: Buffer): Promise<void> | void;
  /** Bytes in the file so far. */
  bytes(): number;
  /** `finished` false: an error stopped the run; close without completing the file. */
  close(finished: boolean): Promise<void> | void;
}

async function tblSinks(outputs: readonly { path: string }[]): Promise<TableSink[]> {
  const sinks: TableSink[] = [];
  try {
    for (const out of outputs) {
      const handle = await open(out.path, 'w');
      let bytes = 0;
      sinks.push({
        write: async (buf) => {
          await writeAll(handle, buf);
          bytes += buf.length;
        },
        bytes: () => bytes,
        close: () => handle.close(),
      });
    }
  } catch (error) {
    for (const sink of sinks) await sink.close(false);
    throw error;
  }
  return sinks;
}

async function parquetSinks(outputs: readonly { table: Dbt3Table; path: string }[], options: ParquetOutOptions | undefined): Promise<TableSink[]> {
  // Imported when Parquet is written: `.tbl` runs do not load the Parquet writer (see source/open-input.ts).
  const { Dbt3ParquetFile } = await import('./parquet-out.js');
  const sinks: TableSink[] = [];
  try {
    for (const out of outputs) {
      const file = new Dbt3ParquetFile(out.table, out.path, options);
      sinks.push({
        write: (buf) => file.write(buf),
        bytes: () => file.bytes,
        close: (finished) => (finished ? file.close() : file.abandon()),
      });
    }
  } catch (error) {
    for (const sink of sinks) sink.close(false);
    throw error;
  }
  return sinks;
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
    for await (const [block] of groupBlocks(maker, [table], start, end)) yield block!;
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
