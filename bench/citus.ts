/**
 * Loads into a Citus distributed table: lineitem.tbl, hash-distributed by l_orderkey (32
 * shards), into a coordinator and two workers on this machine (PostgreSQL 15 with Citus,
 * built by scripts/citus-build.sh), runs interleaved: psql \copy ×1 and ×2 (the two
 * halves at once) through the coordinator, pgsurge -w1, -w2, -w4. Medians of the pairwise
 * ratios of rows/s.
 *
 *   node dist/bench/citus.js [--scale 1] [--repeat 3] [--shards 32] [--variants 'psql x1,psql x2,pgsurge -w1,pgsurge -w2,pgsurge -w4']
 *
 * `psql x2 pool1` (not in the default list) is psql ×2 with pgsurge's Citus session
 * settings, through PGOPTIONS. `pgsurge -w1` … `-w4` route the rows to the shards' nodes
 * themselves (`--citus-route auto`, the default); `pgsurge -w2 coordinator` (also not in
 * the default list) is -w2 through the coordinator (`--citus-route coordinator`), as
 * pgsurge loaded before client-side routing.
 *
 * `--ab '<env>'` adds `pgsurge -w2 (<env>)`, the same load with an environment variable set
 * (e.g. `PGSURGE_CITUS_SETTINGS=none`, the Citus session settings left at their defaults);
 * `--ab '--<flag> <value>'` the same load with more pgsurge options (e.g. `--chunk-size 32MB`).
 * Several, separated by `;`, add one variant each.
 *
 * Every run also reports the CPU seconds of each node's backends (the coordinator's and
 * each worker's, from /proc: the postmasters' reaped children plus their long-lived
 * processes meanwhile) and of the client (psql or pgsurge), the measure contention on a
 * busy machine disturbs least; the medians per variant are printed at the end.
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CitusCluster, CITUS_PG_BIN, citusInstalled } from '../src/cluster/citus-cluster.js';
import { createTableSql } from '../src/datasets/table-ddl.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { run } from './lib/run.js';
import { interleave } from './lib/interleave.js';
import { stripTrailingPipe } from './lib/tbl-strip.js';
import { benchCommandLine, benchWorkDir } from './lib/bench-cluster.js';
import { CITUS_SESSION_SETTINGS } from '../src/writer/citus/citus.js';
import { measureNodesCpu, postmasterPid } from './lib/server-cpu.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const shards = Number(arg('shards', '32'));
const ab = arg('ab', '');
const psql = path.join(CITUS_PG_BIN, 'psql');
const wanted = arg('variants', 'psql x1,pgsurge -w1,psql x2,pgsurge -w2,pgsurge -w4').split(',').map((v) => v.trim());

if (!citusInstalled()) {
  console.error('bench/citus: Citus is not installed for PostgreSQL 15: run scripts/citus-build.sh');
  process.exit(2);
}

const work = await benchWorkDir('pgsurge-bench-citus-');
let cluster: CitusCluster | undefined;
try {
  console.log(benchCommandLine('citus'));
  console.log(`# machine: ${describeMachine()}`);
  const { files } = await generateDbt3({ scale, outDir: work, tables: ['lineitem'] });
  const lineitem = files[0]!;
  const stripped = path.join(work, 'lineitem.psql');
  const halves: [string, string] = [path.join(work, 'half1.psql'), path.join(work, 'half2.psql')];
  await stripTrailingPipe(lineitem.path, stripped, { files: halves, lines: lineitem.rows });
  cluster = await CitusCluster.start({ dir: path.join(work, 'cluster'), workers: 2, basePort: 5700, env: process.env });
  const url = cluster.url();
  const admin = new pg.Client({ connectionString: url });
  // Stopping the cluster after a failed run ends this connection: the run's own error is the one to report.
  admin.on('error', () => undefined);
  await admin.connect();
  const version = (await admin.query<{ v: string; c: string }>("SELECT version() AS v, (SELECT extversion FROM pg_extension WHERE extname = 'citus') AS c")).rows[0]!;
  console.log(`# server: ${version.v.split(' on ')[0]}, Citus ${version.c}: a coordinator and 2 workers on this machine, default settings, Unix sockets`);
  console.log(`# input: lineitem.tbl at scale ${scale}: ${lineitem.rows.toLocaleString('en-US')} rows, ${(lineitem.bytes / 1e6).toFixed(0)} MB; lineitem distributed by l_orderkey in ${shards} shards`);
  await admin.query(createTableSql('lineitem')!);
  await admin.query(`SELECT create_distributed_table('lineitem', 'l_orderkey', shard_count => ${shards})`);
  const reset = async (): Promise<void> => {
    await admin.query('TRUNCATE lineitem');
    await admin.query("SELECT run_command_on_all_nodes('CHECKPOINT')");
  };
  const copyCmd = (file: string): string[] => [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy lineitem from '${file}' with (delimiter '|')`];
  const pgsurgeRun = (workers: number, env: NodeJS.ProcessEnv = {}, extra: readonly string[] = []) => async (): Promise<number> =>
    (await run(process.execPath, [pgsurge, 'load', lineitem.path, '--truncate', '--db', url, '-w', String(workers), '-q', ...extra], env)).seconds;
  const all: Record<string, () => Promise<number>> = {
    'psql x1': async () => (await run(psql, copyCmd(stripped))).seconds,
    'psql x2': async () => {
      const started = performance.now();
      await Promise.all(halves.map((h) => run(psql, copyCmd(h))));
      return (performance.now() - started) / 1000;
    },
    // psql with pgsurge's Citus session settings (one connection per worker node): what they cost or save a single COPY.
    'psql x2 pool1': async () => {
      const started = performance.now();
      await Promise.all(halves.map((h) => run(psql, copyCmd(h), { PGOPTIONS: CITUS_SESSION_SETTINGS.map(([k, v]) => `-c ${k}=${v}`).join(' ') })));
      return (performance.now() - started) / 1000;
    },
    // pgsurge -wN: rows routed to their shards by pgsurge (--citus-route auto, the default, spelled out).
    'pgsurge -w1': pgsurgeRun(1, {}, ['--citus-route', 'auto']),
    'pgsurge -w2': pgsurgeRun(2, {}, ['--citus-route', 'auto']),
    'pgsurge -w4': pgsurgeRun(4, {}, ['--citus-route', 'auto']),
    'pgsurge -w2 coordinator': pgsurgeRun(2, {}, ['--citus-route', 'coordinator']),
  };
  const plain: Record<string, () => Promise<number>> = Object.fromEntries(wanted.filter((w) => all[w]).map((w) => [w, all[w]!]));
  const abs = ab.split(';').map((a) => a.trim()).filter((a) => a !== '');
  for (const one of abs) {
    if (one.startsWith('--')) plain[`pgsurge -w2 (${one})`] = pgsurgeRun(2, {}, ['--citus-route', 'auto', ...one.split(/\s+/)]);
    else {
      const [k, ...v] = one.split('=');
      plain[`pgsurge -w2 (${one})`] = pgsurgeRun(2, { [k!]: v.join('=') }, ['--citus-route', 'auto']);
    }
  }
  // Each run's CPU by node: coordinator, worker 1, worker 2, client.
  const postmasters = cluster.nodes.map((n) => postmasterPid(n.dataDir));
  const cpu: Record<string, number[][]> = Object.fromEntries(Object.keys(plain).map((k) => [k, []]));
  const measured = (name: string, fn: () => Promise<number>) => async (): Promise<number> => {
    const { result, serverCpu, clientCpu } = await measureNodesCpu(postmasters, fn);
    cpu[name]!.push([...serverCpu, clientCpu]);
    return result;
  };
  const variants = Object.fromEntries(Object.entries(plain).map(([k, fn]) => [k, measured(k, fn)]));
  const rates = await interleave(variants, { repeat, rows: lineitem.rows, reset, count: async () => Number((await admin.query('SELECT count(*) AS n FROM lineitem')).rows[0].n) });
  const ratio = (a: string, b: string): number => median(rates[a]!.map((v, i) => v / rates[b]![i]!));
  console.log('\nvariant                                median rows/s');
  for (const [name, values] of Object.entries(rates)) console.log(`${name.padEnd(38)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)}`);
  const us = (s: number): string => ((s / lineitem.rows) * 1e6).toFixed(2).padStart(8);
  console.log(`\nCPU µs per row, medians (coordinator's backends, each worker's, the client; total)`);
  console.log(`variant                                  coord  ${postmasters.slice(1).map((_, i) => `  worker${i + 1}`).join('')}   client    total`);
  for (const [name, runs] of Object.entries(cpu)) {
    const cols = runs[0]!.map((_, c) => median(runs.map((r) => r[c]!)));
    console.log(`${name.padEnd(38)} ${cols.map(us).join(' ')} ${us(median(runs.map((r) => r.reduce((a, b) => a + b, 0))))}`);
  }
  const pairs: [string, string][] = [['pgsurge -w1', 'psql x1'], ['pgsurge -w2', 'psql x2'], ['pgsurge -w4', 'psql x2'], ['pgsurge -w2', 'pgsurge -w2 coordinator'], ['pgsurge -w2 coordinator', 'psql x2']];
  for (const one of abs) pairs.push([`pgsurge -w2 (${one})`, 'pgsurge -w2'], [`pgsurge -w2 (${one})`, 'psql x2']);
  console.log('');
  for (const [a, b] of pairs) if (rates[a] && rates[b]) console.log(`${a} / ${b}: ${ratio(a, b).toFixed(2)} (median of ${repeat} paired runs${b === 'psql x2' && a === 'pgsurge -w2' ? '; target ≥ 1.0' : ''})`);
  await admin.end();
} finally {
  await cluster?.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
