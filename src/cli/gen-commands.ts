/**
 * `pgsurge dbt3 gen` and `pgsurge gen narrow`: make data without downloads.
 */
import type { Command } from 'commander';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { DBT3_TABLES } from '../datasets/dbt3-schema.js';
import { parseDbt3GenOptions, parseNarrowOptions, type RawDbt3GenOptions, type RawNarrowOptions } from './gen-options.js';
import { formatCount } from '../core/format-count.js';
import { DEFAULT_ROW_GROUP_ROWS } from '../datasets/dbt3/gen-formats.js';

const PROGRESS_EVERY_MS = 250;

/** A live progress line on stderr, only when stderr is a terminal. */
function progressLine(): { update(label: string, rows: number | undefined, bytes: number): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let last = 0;
  let shownLine = false;
  return {
    update(label, rows, bytes) {
      if (!tty) return;
      const now = Date.now();
      if (now - last < PROGRESS_EVERY_MS) return;
      last = now;
      const seconds = Math.max(0.001, (now - started) / 1000);
      const mb = bytes / 1e6;
      const rowText = rows === undefined ? '' : `  ${formatCount(rows)} rows`;
      process.stderr.write(`\r\x1b[K${label}${rowText}  ${mb.toFixed(1)} MB  ${(mb / seconds).toFixed(1)} MB/s`);
      shownLine = true;
    },
    done() {
      if (tty && shownLine) process.stderr.write('\r\x1b[K');
    },
  };
}

function isEpipe(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'EPIPE';
}

/** Pipe to stdout; a reader that goes away (`| head`) ends the run quietly. */
async function toStdout(source: NodeJS.ReadableStream, onBytes: (n: number) => void): Promise<void> {
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, counter, process.stdout);
  } catch (error) {
    if (isEpipe(error)) return;
    throw error;
  }
}

async function runDbt3Gen(raw: RawDbt3GenOptions): Promise<void> {
  const opts = parseDbt3GenOptions(raw);
  const progress = progressLine();
  // heavy modules only when the command runs
  const { generateDbt3, dbt3TableStream } = await import('../datasets/dbt3/generate.js');
  const slice = { scale: opts.scale, seed: opts.seed, parts: opts.parts, part: opts.part, workers: opts.workers };
  try {
    if (opts.out === '-') {
      const table = opts.tables[0]!;
      let bytes = 0;
      await toStdout(dbt3TableStream(table, slice), (n) => {
        bytes += n;
        progress.update(table, undefined, bytes);
      });
      return;
    }
    const { files } = opts.tables.length === 0 ? { files: [] } : await generateDbt3({
      ...slice,
      tables: opts.tables,
      outDir: opts.out,
      format: opts.format,
      parquet: { compression: opts.compression, rowGroupRows: opts.rowGroupRows },
      onProgress: (p) => progress.update(p.table, p.tableRows, p.totalBytes),
    });
    progress.done();
    for (const f of files) process.stderr.write(`${f.path}: ${formatCount(f.rows)} rows, ${(f.bytes / 1e6).toFixed(1)} MB\n`);
    if (opts.refresh > 0) {
      const { writeRefreshSets } = await import('../datasets/dbt3/refresh/update-sets.js');
      for (const f of await writeRefreshSets(opts.out, opts.scale, opts.refresh)) process.stderr.write(`${f.path}: ${formatCount(f.rows)} rows\n`);
    }
  } finally {
    progress.done();
  }
}

async function runNarrowGen(raw: RawNarrowOptions): Promise<void> {
  const opts = parseNarrowOptions(raw);
  const { generateNarrow, narrowBlocks } = await import('../datasets/narrow/generate.js');
  const progress = progressLine();
  if (opts.out === '-') {
    const { Readable } = await import('node:stream');
    let bytes = 0;
    try {
      await toStdout(Readable.from(narrowBlocks(opts), { objectMode: false }), (n) => progress.update('narrow', undefined, (bytes += n)));
    } finally {
      progress.done();
    }
    return;
  }
  let result;
  try {
    result = await generateNarrow({ ...opts, onProgress: (p) => progress.update('narrow', p.rows, p.bytes) });
  } finally {
    progress.done();
  }
  process.stderr.write(`${result.path}: ${formatCount(result.rows)} rows, ${(result.bytes / 1e6).toFixed(1)} MB\n`);
}

/**
 * Add `gen` under the `dbt3` command (`pgsurge dbt3 gen …`) and `gen narrow` to the program.
 */
export function registerGenCommands(program: Command, dbt3: Command): void {
  dbt3
    .command('gen')
    .description('Write the eight TPC-H tables as dbgen does (.tbl, | delimited) or as Parquet, deterministically')
    .option('--scale <sf>', 'scale factor: 1 is about 1.1 GB (6 million lineitems); fractions such as 0.01 work')
    .option('--out <dir>', 'directory to write <table>.tbl (or <table>.parquet) into (created if missing), or - for stdout with one .tbl table')
    .option('--tables <list>', `comma-separated tables to write (default: all of ${DBT3_TABLES.join(', ')}; none: only the --refresh sets)`)
    .option('--seed <n>', 'random seed: the same scale and seed give byte-identical files (default: 19920101)')
    .option('--parts <n>', 'split each table into n slices by row range and write one of them (with --part)')
    .option('--part <k>', 'which slice to write, 1..n; files are named <table>.tbl.<k> (<table>.<k>.parquet)')
    .option('--workers <n>', 'generator threads (default: 2 on 2 or more cores, 0 for small runs)')
    .option('--format <format>', 'tbl (dbgen\'s | text) or parquet (typed as the kit\'s schema: INT32/INT64 keys, DECIMAL(15,2), DATE, STRING)', 'tbl')
    .option('--compression <codec>', `parquet only: snappy, gzip or none (default: snappy)`)
    .option('--row-group-size <rows>', `parquet only: rows per row group (default: ${formatCount(DEFAULT_ROW_GROUP_ROWS)}, as DuckDB)`)
    .option('--refresh <n>', "also write refresh sets 1..n byte for byte as dbgen -U n does (orders.tbl.uK, lineitem.tbl.uK, delete.K, for `dbt3 refresh`); with --tables none, only the sets")
    .addHelpText(
      'after',
      '\nExamples:\n  pgsurge dbt3 gen --scale 1 --out data/sf1\n  pgsurge dbt3 gen --scale 10 --parts 4 --part 2 --out data/sf10\n  pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl --create\n  pgsurge dbt3 gen --scale 1 --format parquet --out data/sf1-parquet && pgsurge dbt3 load data/sf1-parquet\n  pgsurge dbt3 gen --scale 1 --refresh 2 --out data/sf1\n',
    )
    .action(async (raw: RawDbt3GenOptions) => runDbt3Gen(raw));

  const gen = program.command('gen').description('Generate synthetic data sets');
  gen
    .command('narrow')
    .description('Write narrow rows (~45 bytes: id bigint unique, val integer, note text of 20-28 letters) for insert-decay tests')
    .option('--rows <n>', 'number of rows (100_000_000 and 1e8 work)')
    .option('--out <file>', 'file to write, or - for stdout')
    .option('--keys <order>', 'sequential (1..n in order) or random (a permutation of 1..n, no repeats)', 'sequential')
    .option('--format <format>', 'text (tab-delimited COPY text) or tbl (| delimited, trailing |)', 'text')
    .option('--seed <n>', 'random seed for keys and values (default: 42)')
    .addHelpText('after', '\nThe table is `narrow` (id bigint, val integer, note text); `--create` knows it.\n')
    .action(async (raw: RawNarrowOptions) => runNarrowGen(raw));
}
