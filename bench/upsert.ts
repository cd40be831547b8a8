/**
 * `pgsurge load --on-conflict update` against the psql staging way (`\copy` into a
 * temporary table, then one INSERT … SELECT … ON CONFLICT DO UPDATE), on lineitem loaded
 * with its primary key (l_orderkey, l_linenumber). The upsert file takes the first
 * --rows rows of lineitem.tbl: every even one a row already there with changed values
 * (l_quantity + 1, a new l_comment), every odd one a new row (l_orderkey + 2^31). Runs
 * interleaved (psql, pgsurge -w1, pgsurge -w2, and again), each on the same table, put
 * back before each run; prints the medians of the pairwise ratios of rows/s.
 *
 *   node dist/bench/upsert.js [--scale 1] [--rows 1000000] [--repeat 3] [--chunk-size <bytes>] [--pg-bin system|embedded|<dir>]
 *
 * Target: pgsurge -w2 ≥ 1.2× the psql way's rows/s; -w1 reported.
 */
import './lib/usage.js';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { interleave } from './lib/interleave.js';
import { run } from './lib/run.js';
import { lineitemBench } from './lib/lineitem-bench.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '1'));
const rows = Number(arg('rows', '1000000'));
const repeat = Number(arg('repeat', '3'));
const chunkSize = arg('chunk-size', '');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();
const NEW_KEY = 2n ** 31n;

/** The upsert file (`.tbl`, for pgsurge) and its stripped twin (for psql's `\copy`): half rows there, changed; half new. */
async function writeUpsertFiles(lineitem: string, tbl: string, stripped: string, n: number): Promise<void> {
  const a = createWriteStream(tbl);
  const b = createWriteStream(stripped);
  let i = 0;
  for await (const line of readline.createInterface({ input: createReadStream(lineitem), crlfDelay: Infinity })) {
    if (i >= n) break;
    const f = line.split('|');
    if (i % 2 === 0) {
      f[4] = (Number(f[4]) + 1).toFixed(2);
      f[15] = `upd ${i}`;
    } else f[0] = String(BigInt(f[0]!) + NEW_KEY);
    const out = `${f.join('|')}\n`;
    if (!a.write(out)) await once(a, 'drain');
    if (!b.write(out.replace(/\|\n$/, '\n'))) await once(b, 'drain');
    i++;
  }
  if (i < n) throw new Error(`lineitem.tbl at scale ${scale} has ${i} rows, fewer than --rows ${n}`);
  a.end();
  b.end();
  await Promise.all([once(a, 'close'), once(b, 'close')]);
}

const { work, cluster } = await openBenchCluster('pgsurge-bench-upsert-', pgBin);
try {
  console.log(benchCommandLine('upsert'));
  console.log(`# machine: ${describeMachine()}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const bench = await lineitemBench(cluster, work, scale);
  const { lineitem, url, admin } = bench;
  const upsertTbl = path.join(work, 'upsert.tbl');
  const upsertPsql = path.join(work, 'upsert.psql');
  await writeUpsertFiles(lineitem.path, upsertTbl, upsertPsql, rows);
  console.log(`# upsert file: ${rows.toLocaleString('en-US')} rows, ${Math.ceil(rows / 2).toLocaleString('en-US')} of them keys already there (changed values), ${Math.floor(rows / 2).toLocaleString('en-US')} new`);

  // The base: lineitem with its primary key, kept in lineitem_base and copied back before each run.
  const started = performance.now();
  await run(process.execPath, [pgsurge, 'load', lineitem.path, '--db', url, '-w', '2', '-q', '--no-ledger']);
  await admin.query('ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)');
  await admin.query('CREATE TABLE lineitem_base AS SELECT * FROM lineitem');
  console.log(`# base: ${lineitem.rows.toLocaleString('en-US')} rows with the primary key, in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const reset = async (): Promise<void> => {
    await admin.query('TRUNCATE lineitem');
    await admin.query('INSERT INTO lineitem SELECT * FROM lineitem_base');
    await admin.query('VACUUM ANALYZE lineitem');
    await admin.query('CHECKPOINT');
  };
  // Right when every row of the file is in: the new rows, plus the rows there that carry the file's values.
  const count = async (): Promise<number> => {
    const r = await admin.query<{ n: string }>(`SELECT (count(*) - ${lineitem.rows}) + count(*) FILTER (WHERE l_comment LIKE 'upd %') AS n FROM lineitem`);
    return Number(r.rows[0]!.n);
  };

  const columns = DBT3_COLUMNS.lineitem.map(([c]) => c);
  const set = columns.filter((c) => c !== 'l_orderkey' && c !== 'l_linenumber').map((c) => `${c} = excluded.${c}`).join(', ');
  const psqlWay = [
    url, '-X', '-q', '-v', 'ON_ERROR_STOP=1',
    '-c', 'CREATE TEMP TABLE stage (LIKE lineitem)',
    '-c', `\\copy stage from '${upsertPsql}' with (delimiter '|')`,
    '-c', `INSERT INTO lineitem SELECT * FROM stage ON CONFLICT (l_orderkey, l_linenumber) DO UPDATE SET ${set}`,
  ];
  let runs = 0;
  const pgsurgeWay = (workers: number) => async (): Promise<number> =>
    (await run(process.execPath, [pgsurge, 'load', upsertTbl, '-t', 'lineitem', '--on-conflict', 'update', '--db', url, '-w', String(workers), '-q', '--load-id', `upsert-bench-${++runs}`, ...(chunkSize === '' ? [] : ['--chunk-size', chunkSize])])).seconds;
  const variants: Record<string, () => Promise<number>> = {
    'psql staging': async () => (await run(psql, psqlWay)).seconds,
    'pgsurge -w1': pgsurgeWay(1),
    'pgsurge -w2': pgsurgeWay(2),
  };
  const rates = await interleave(variants, { repeat, rows, reset, count });
  const ratio = (a: string, b: string): number => median(rates[a]!.map((v, i) => v / rates[b]![i]!));
  console.log('\nvariant        median rows/s');
  for (const [name, values] of Object.entries(rates)) console.log(`${name.padEnd(14)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)}`);
  console.log(`\npgsurge -w1 / psql staging: ${ratio('pgsurge -w1', 'psql staging').toFixed(2)} (median of ${repeat} paired runs)`);
  console.log(`pgsurge -w2 / psql staging: ${ratio('pgsurge -w2', 'psql staging').toFixed(2)} (median of ${repeat} paired runs; target ≥ 1.2)`);
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
