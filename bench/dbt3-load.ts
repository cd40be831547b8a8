/**
 * The whole DBT-3 load test, pgsurge against the DBT-3 kit's way with psql, on the same
 * generated data and the same server, interleaved (kit, pgsurge, kit, pgsurge …):
 *
 *   kit-style: the eight `\copy`s two at a time, biggest first; then the 8 primary keys two
 *   at a time; then the 15 indexes and 8 foreign keys two at a time; then ANALYZE of each
 *   table two at a time. One psql per statement, default session settings. The statements
 *   are the ones pgsurge builds (src/dbt3/build-keys.ts).
 *
 *   pgsurge: `pgsurge dbt3 load <dir> -w 2` (one schedule, sized build sessions).
 *
 *   node dist/bench/dbt3-load.js [--scale 1] [--repeat 3] [--workers 2] [--pg-bin system|embedded|<dir>] [--compare-overlap]
 *
 * Per phase and in total: each run's seconds, the medians, and the median of the pairwise
 * kit/pgsurge ratios; the server's CPU seconds (the postmaster's reaped children) beside
 * them, which contention on a shared machine disturbs less than elapsed time.
 * `--compare-overlap` adds `pgsurge --overlap` (each table its own load, its builds as soon
 * as it is loaded) as a third arm: the measurement behind the default (no overlap).
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pLimit from 'p-limit';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { analyzeStatement, dbt3KeyStatements } from '../src/dbt3/build-keys.js';
import { qualifiedName } from '../src/core/identifiers.js';
import { DBT3_TABLES } from '../src/datasets/dbt3-schema.js';
import { createTableSql } from '../src/datasets/table-ddl.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { cpuSecondsWithChildren } from './lib/server-cpu.js';
import { run } from './lib/run.js';
import { stripTrailingPipe } from './lib/tbl-strip.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const workers = Number(arg('workers', '2'));
const compareOverlap = process.argv.includes('--compare-overlap');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();
const SCHEMA = 'bench';

type Phases = Record<string, number>;
interface Measured {
  readonly phases: Phases;
  readonly serverCpu: number;
  readonly clientCpu: number;
}

const { work, cluster } = await openBenchCluster('pgsurge-bench-dbt3-', pgBin);
try {
  console.log(benchCommandLine('dbt3-load'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const dataDir = path.join(work, 'tbl');
  const { files } = await generateDbt3({ scale, outDir: dataDir });
  const rows = new Map(files.map((f) => [f.table, f.rows]));
  console.log(`# input: dbt3 gen --scale ${scale}: ${files.reduce((a, f) => a + f.rows, 0).toLocaleString('en-US')} rows, ${(files.reduce((a, f) => a + f.bytes, 0) / 1e6).toFixed(0)} MB`);
  const kitDir = path.join(work, 'kit');
  await fs.mkdir(kitDir);
  for (const f of files) await stripTrailingPipe(f.path, path.join(kitDir, `${f.table}.tbl`));
  await fs.chmod(kitDir, 0o755);

  await cluster.start();
  const url = cluster.url();
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  admin.on('error', (e) => console.error(`bench: the admin connection failed: ${e.message}`));
  const postmaster = Number((await fs.readFile(path.join(work, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0]);

  const fresh = async (): Promise<void> => {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    await admin.query('CHECKPOINT');
  };
  /** Every table holds its file's rows, and the catalog the kit's 8 + 15 + 8 keys and indexes, valid. */
  const check = async (name: string): Promise<void> => {
    for (const t of DBT3_TABLES) {
      const n = Number((await admin.query(`SELECT count(*) AS n FROM ${qualifiedName(t, SCHEMA)}`)).rows[0].n);
      if (n !== rows.get(t)) throw new Error(`${name}: ${t} holds ${n} rows, expected ${rows.get(t)}`);
    }
    const r = await admin.query(
      `SELECT (SELECT count(*) FROM pg_constraint WHERE connamespace = $1::regnamespace AND contype IN ('p', 'f') AND convalidated)::int AS keys,
              (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = $1::regnamespace AND i.indisvalid)::int AS indexes`,
      [SCHEMA],
    );
    if (r.rows[0].keys !== 16 || r.rows[0].indexes !== 23) throw new Error(`${name}: ${r.rows[0].keys} keys and ${r.rows[0].indexes} valid indexes, expected 16 and 23`);
  };
  const psqlRun = (sql: string): Promise<unknown> => run(psql, [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql]);
  const twoAtATime = async (statements: readonly string[]): Promise<number> => {
    const started = performance.now();
    const limit = pLimit(workers);
    await Promise.all(statements.map((s) => limit(() => psqlRun(s))));
    return (performance.now() - started) / 1000;
  };

  const measure = async (body: () => Promise<Phases>): Promise<Measured> => {
    const server0 = cpuSecondsWithChildren(postmaster);
    const client0 = cpuSecondsWithChildren('self');
    const phases = await body();
    return { phases, serverCpu: cpuSecondsWithChildren(postmaster) - server0, clientCpu: cpuSecondsWithChildren('self') - client0 };
  };

  const statements = dbt3KeyStatements(SCHEMA);
  const bySize = [...files].sort((a, b) => b.bytes - a.bytes);
  const kit = async (): Promise<Phases> => {
    await fresh();
    for (const t of DBT3_TABLES) await admin.query(createTableSql(t, SCHEMA)!);
    const started = performance.now();
    const load = await twoAtATime(bySize.map((f) => `\\copy ${qualifiedName(f.table, SCHEMA)} from '${path.join(kitDir, `${f.table}.tbl`)}' with (delimiter '|')`));
    const primaryKeys = await twoAtATime(statements.primaryKeys);
    const fkAndIndexes = await twoAtATime(statements.foreignKeysAndIndexes);
    const analyze = await twoAtATime(DBT3_TABLES.map((t) => analyzeStatement(t, SCHEMA)));
    const total = (performance.now() - started) / 1000;
    return { load, 'keys, indexes, analyze': primaryKeys + fkAndIndexes + analyze, 'primary keys': primaryKeys, 'foreign keys and indexes': fkAndIndexes, analyze, total };
  };
  const pgsurgeRun = (extra: string[]) => async (): Promise<Phases> => {
    await fresh();
    const r = await run(process.execPath, [pgsurge, 'dbt3', 'load', dataDir, '--db', url, '--schema', SCHEMA, '-w', String(workers), '--json', '--sample-every', 'off', ...extra]);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    const timeline: { kind: string; start: number; end: number }[] = summary.timeline;
    const loadsEnd = Math.max(...timeline.filter((t) => t.kind === 'load').map((t) => t.end));
    const loadsStart = Math.min(...timeline.filter((t) => t.kind === 'load').map((t) => t.start));
    const phase = (name: string): number => summary.phases.find((p: { phase: string }) => p.phase === name)?.seconds ?? 0;
    // The total is the command's own wall time, from its start (node's too) to its exit.
    // pgsurge has no phases: its "primary keys", "foreign keys and indexes" and "analyze" are spans (a kind's first start to its last end), and they overlap.
    return { load: loadsEnd - loadsStart, 'keys, indexes, analyze': summary.seconds - loadsEnd, 'primary keys span': phase('primary keys'), 'foreign keys and indexes span': Math.max(phase('indexes'), phase('foreign keys')), 'analyze span': phase('analyze'), total: r.seconds };
  };
  const arms: Record<string, () => Promise<Phases>> = {
    'kit-style psql': kit,
    'pgsurge dbt3 load': pgsurgeRun([]),
    ...(compareOverlap ? { 'pgsurge --overlap': pgsurgeRun(['--overlap']) } : {}),
  };
  const results: Record<string, Measured[]> = Object.fromEntries(Object.keys(arms).map((k) => [k, []]));
  for (let round = 1; round <= repeat; round++) {
    for (const [name, body] of Object.entries(arms)) {
      const m = await measure(body);
      await check(name);
      results[name]!.push(m);
      console.log(
        `round ${round} ${name.padEnd(22)} ${Object.entries(m.phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}; server CPU ${m.serverCpu.toFixed(1)} s, clients' CPU ${m.clientCpu.toFixed(1)} s`,
      );
    }
  }

  const phaseNames = ['load', 'keys, indexes, analyze', 'total'];
  const names = Object.keys(arms);
  console.log(`\n| phase | ${names.map((n) => `${n} (median s)`).join(' | ')} | kit / pgsurge (median of pairs) |`);
  console.log(`| --- | ${names.map(() => '---').join(' | ')} | --- |`);
  const pairRatio = (a: string, b: string, f: (m: Measured) => number): number => median(results[a]!.map((m, i) => f(m) / f(results[b]![i]!)));
  for (const p of phaseNames) {
    const meds = names.map((n) => median(results[n]!.map((m) => m.phases[p]!)).toFixed(2));
    console.log(`| ${p} | ${meds.join(' | ')} | ${pairRatio('kit-style psql', 'pgsurge dbt3 load', (m) => m.phases[p]!).toFixed(2)}× |`);
  }
  const cpu = names.map((n) => median(results[n]!.map((m) => m.serverCpu)).toFixed(1));
  console.log(`| server CPU s | ${cpu.join(' | ')} | ${pairRatio('kit-style psql', 'pgsurge dbt3 load', (m) => m.serverCpu).toFixed(2)}× |`);
  console.log(`\nkit phases (median s): primary keys ${median(results['kit-style psql']!.map((m) => m.phases['primary keys']!)).toFixed(2)}, foreign keys and indexes ${median(results['kit-style psql']!.map((m) => m.phases['foreign keys and indexes']!)).toFixed(2)}, analyze ${median(results['kit-style psql']!.map((m) => m.phases.analyze!)).toFixed(2)}`);
  const total = pairRatio('kit-style psql', 'pgsurge dbt3 load', (m) => m.phases.total!);
  const load = pairRatio('kit-style psql', 'pgsurge dbt3 load', (m) => m.phases.load!);
  console.log(`pgsurge's total: ${total.toFixed(2)}× the kit's (target ≥ 1.5×); its load phase ${load.toFixed(2)}× (target ≥ 1.0×), medians of ${repeat} interleaved pairs`);
  if (compareOverlap) {
    console.log(`overlap: default total / --overlap total ${pairRatio('pgsurge dbt3 load', 'pgsurge --overlap', (m) => m.phases.total!).toFixed(2)} (above 1: overlapping wins), server CPU ratio ${pairRatio('pgsurge dbt3 load', 'pgsurge --overlap', (m) => m.serverCpu).toFixed(2)}, load phase ${pairRatio('pgsurge dbt3 load', 'pgsurge --overlap', (m) => m.phases.load!).toFixed(2)}`);
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
