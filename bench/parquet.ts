/**
 * Parquet against .tbl: lineitem at one scale as a .tbl file and as Parquet (snappy,
 * written by DuckDB from the same .tbl, DuckDB's default row groups of 122,880 rows),
 * loaded into the same server, interleaved (tbl -w1, parquet -w1, psql x1, tbl -w2,
 * parquet -w2, and again; the Parquet loads also with the readers' decoding threads forced
 * on and off, PGSURGE_PARQUET_DECODE_THREADS=1 / 0, at both worker counts), reporting
 * rows/s and medians of the pairwise ratios; then the
 * peak RSS of a Parquet load at two file sizes 10× apart (the same row-group size), which
 * should not grow with the file: a reader holds one decoded row group.
 *
 *   node dist/bench/parquet.js [--scale 1] [--repeat 3] [--pg-bin system|embedded|<dir>]
 *
 * DuckDB (`@duckdb/node-api`, a dev dependency) writes the Parquet files.
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { createTableSql } from '../src/datasets/table-ddl.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { tblToParquet } from '../test/helpers/duckdb-parquet.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { interleave } from './lib/interleave.js';
import { run } from './lib/run.js';
import { stripTrailingPipe } from './lib/tbl-strip.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();
const ROW_GROUP = 122_880;

const { work, cluster } = await openBenchCluster('pgsurge-bench-parquet-', pgBin);
try {
  console.log(benchCommandLine('parquet'));
  console.log(`# machine: ${describeMachine()}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const { files } = await generateDbt3({ scale, outDir: work, tables: ['lineitem'] });
  const lineitem = files[0]!;
  const parquet = path.join(work, 'lineitem.parquet');
  await tblToParquet('lineitem', lineitem.path, parquet, { compression: 'snappy', rowGroupSize: ROW_GROUP });
  const parquetBytes = (await fs.stat(parquet)).size;
  console.log(`# input: lineitem at scale ${scale}: ${lineitem.rows.toLocaleString('en-US')} rows; .tbl ${(lineitem.bytes / 1e6).toFixed(0)} MB, Parquet (snappy, row groups of ${ROW_GROUP}) ${(parquetBytes / 1e6).toFixed(0)} MB`);
  const stripped = path.join(work, 'lineitem.psql');
  await stripTrailingPipe(lineitem.path, stripped);

  await cluster.start();
  const url = cluster.url();
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  await admin.query(createTableSql('lineitem')!);
  const reset = async (): Promise<void> => {
    await admin.query('TRUNCATE lineitem');
    await admin.query('CHECKPOINT');
  };
  const load = (file: string, w: string, env: NodeJS.ProcessEnv = {}) => async () => (await run(process.execPath, [pgsurge, 'load', file, '-t', 'lineitem', '--truncate', '--db', url, '-w', w, '-q'], env)).seconds;
  // The readers' decoding threads forced on (1) or off (0), against the default (on when workers + 1 < cores).
  const threads = (on: boolean): NodeJS.ProcessEnv => ({ PGSURGE_PARQUET_DECODE_THREADS: on ? '1' : '0' });
  const variants: Record<string, () => Promise<number>> = {
    'tbl -w1': load(lineitem.path, '1'),
    'parquet -w1': load(parquet, '1'),
    'pq -w1 thr': load(parquet, '1', threads(true)),
    'pq -w1 nothr': load(parquet, '1', threads(false)),
    'psql x1': async () => (await run(psql, [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy lineitem from '${stripped}' with (delimiter '|')`])).seconds,
    'tbl -w2': load(lineitem.path, '2'),
    'parquet -w2': load(parquet, '2'),
    'pq -w2 thr': load(parquet, '2', threads(true)),
    'pq -w2 nothr': load(parquet, '2', threads(false)),
  };
  const rates = await interleave(variants, { repeat, rows: lineitem.rows, reset, count: async () => Number((await admin.query('SELECT count(*) AS n FROM lineitem')).rows[0].n) });
  const ratio = (a: string, b: string): string => median(rates[a]!.map((v, i) => v / rates[b]![i]!)).toFixed(2);
  console.log('\nvariant        median rows/s');
  for (const [name, values] of Object.entries(rates)) console.log(`${name.padEnd(14)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)}`);
  console.log(`\nparquet -w1 / tbl -w1: ${ratio('parquet -w1', 'tbl -w1')} (median of ${repeat} paired runs; target ≥ 1)`);
  console.log(`parquet -w2 / tbl -w2: ${ratio('parquet -w2', 'tbl -w2')} (target ≥ 1)`);
  console.log(`parquet -w1 / psql x1: ${ratio('parquet -w1', 'psql x1')}`);
  console.log(`decoding threads on / off (PGSURGE_PARQUET_DECODE_THREADS=1 / 0): ${ratio('pq -w1 thr', 'pq -w1 nothr')} (-w1), ${ratio('pq -w2 thr', 'pq -w2 nothr')} (-w2); the default is on when workers + 1 < cores (${os.availableParallelism()} here)`);

  // Peak RSS bounded by workers × one decoded row group: two files 10× apart, the same row groups.
  console.log(`\npeak RSS of \`pgsurge load <lineitem.parquet> -w 2\` (VmHWM), row groups of ${ROW_GROUP} rows:`);
  for (const sf of [Math.max(0.01, scale / 10), scale]) {
    let file = parquet;
    if (sf !== scale) {
      const dir = path.join(work, `rss-${sf}`);
      const f = (await generateDbt3({ scale: sf, outDir: dir, tables: ['lineitem'] })).files[0]!;
      file = path.join(dir, 'lineitem.parquet');
      await tblToParquet('lineitem', f.path, file, { compression: 'snappy', rowGroupSize: ROW_GROUP });
    }
    await reset();
    const r = await run(process.execPath, [pgsurge, 'load', file, '-t', 'lineitem', '--truncate', '--db', url, '-w', '2', '-q']);
    console.log(`  ${((await fs.stat(file)).size / 1e6).toFixed(0).padStart(5)} MB Parquet (scale ${sf}): ${((r.peakRss ?? NaN) / 1024 ** 2).toFixed(0)} MB peak RSS`);
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
