/**
 * A partitioned lineitem: COPY into the root (the server routes each row to its partition)
 * against the same rows already routed, each leaf's rows COPYed into the leaf, on the same
 * server, interleaved (root, leaves, root, leaves …): medians of the pairwise ratios of rows/s
 * and of the server's CPU per row (the postmaster's reaped children and its own processes,
 * from /proc: on a shared machine contention moves wall times far more than CPU).
 *
 *   node dist/bench/partitioned.js [--scale 1] [--repeat 3] [--workers 2] [--schemes yearly,monthly,hash8] [--pg-bin system|embedded|<dir>]
 *
 * Schemes: `yearly` and `monthly` are RANGE partitions on l_shipdate (7 and 84 leaves over
 * 1992–1998), `hashN` is HASH on l_orderkey into N leaves.
 *
 * The leaves' files are what a router in pgsurge would send each leaf: the server routes the
 * file once (a load into the root), then each leaf is copied out to `<leaf>.tbl` in dbgen's
 * layout (`|` after every field), its rows in the file's order. A load of those files, one
 * pgsurge with the same workers, has none of a client router's cost (reading the partition
 * bounds, hashing the keys, parsing the fields to find them): what it measures is the most
 * routing could win.
 */
import './lib/usage.js';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { to as copyTo } from 'pg-copy-streams';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { run } from './lib/run.js';
import { cpuRounds, lineitemBench, type CpuRun } from './lib/lineitem-bench.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';
import { postmasterPid } from './lib/server-cpu.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const workers = Number(arg('workers', '2'));
const schemes = arg('schemes', 'yearly,monthly,hash8').split(',');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');

/** The partitions' DDL for a scheme, on the table `lineitem` made by lineitemBench. */
function partitionsSql(scheme: string): { by: string; leaves: { name: string; bounds: string }[] } {
  const years = [1992, 1993, 1994, 1995, 1996, 1997, 1998];
  if (scheme === 'yearly') {
    return { by: 'RANGE (l_shipdate)', leaves: years.map((y) => ({ name: `lineitem_${y}`, bounds: `FROM ('${y}-01-01') TO ('${y + 1}-01-01')` })) };
  }
  if (scheme === 'monthly') {
    const leaves = years.flatMap((y) =>
      Array.from({ length: 12 }, (_, m) => {
        const from = `${y}-${String(m + 1).padStart(2, '0')}-01`;
        const to = m === 11 ? `${y + 1}-01-01` : `${y}-${String(m + 2).padStart(2, '0')}-01`;
        return { name: `lineitem_${y}_${String(m + 1).padStart(2, '0')}`, bounds: `FROM ('${from}') TO ('${to}')` };
      }),
    );
    return { by: 'RANGE (l_shipdate)', leaves };
  }
  const hash = /^hash(\d+)$/.exec(scheme);
  if (hash) {
    const n = Number(hash[1]);
    return { by: 'HASH (l_orderkey)', leaves: Array.from({ length: n }, (_, k) => ({ name: `lineitem_h${k}`, bounds: `WITH (MODULUS ${n}, REMAINDER ${k})` })) };
  }
  throw new Error(`unknown scheme ${scheme}: yearly, monthly or hashN`);
}

const { work, cluster } = await openBenchCluster('pgsurge-bench-partitioned-', pgBin);
try {
  console.log(benchCommandLine('partitioned'));
  console.log(`# machine: ${describeMachine()}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const bench = await lineitemBench(cluster, work, scale);
  const { lineitem, url, admin } = bench;
  const postmaster = postmasterPid(path.join(work, 'data'));
  const attributes = await admin.query<{ def: string; out: string }>(
    `SELECT format('%I %s', attname, format_type(atttypid, atttypmod)) AS def,
            CASE WHEN atttypid = 'bpchar'::regtype THEN format('%I::text', attname) ELSE format('%I', attname) END AS out
       FROM pg_attribute WHERE attrelid = 'lineitem'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
  );
  const columns = attributes.rows.map((r) => r.def);
  // char(n) as text: COPY TO pads it with spaces the file did not have
  const selectList = attributes.rows.map((r) => r.out).join(', ');
  const load = (files: readonly string[]) => async (): Promise<number> => (await run(process.execPath, [pgsurge, 'load', ...files, '--truncate', '--db', url, '-w', String(workers), '-q'])).seconds;
  const perRow = (r: CpuRun): number => (r.serverCpu * 1e6) / lineitem.rows;
  const results: { scheme: string; leaves: number; root: CpuRun[]; routed: CpuRun[] }[] = [];
  for (const scheme of schemes) {
    const { by, leaves } = partitionsSql(scheme);
    await admin.query('DROP TABLE lineitem');
    await admin.query(`CREATE TABLE lineitem (${columns.join(', ')}) PARTITION BY ${by}`);
    for (const leaf of leaves) await admin.query(`CREATE TABLE ${leaf.name} PARTITION OF lineitem FOR VALUES ${leaf.bounds}`);
    // the server routes the file once; each leaf's rows, copied out in dbgen's layout, are what a router would send it
    await load([lineitem.path])();
    const files: string[] = [];
    for (const leaf of leaves) {
      const file = path.join(work, `${leaf.name}.tbl`);
      await pipeline(admin.query(copyTo(`COPY (SELECT ${selectList}, '' FROM ${leaf.name}) TO STDOUT (DELIMITER '|')`)), createWriteStream(file));
      files.push(file);
    }
    const bytes = (await Promise.all(files.map((f) => fs.stat(f)))).reduce((a, s) => a + s.size, 0);
    console.log(`\n## ${scheme}: ${leaves.length} leaves, PARTITION BY ${by}; the leaves' files ${bytes.toLocaleString('en-US')} bytes (lineitem.tbl ${lineitem.bytes.toLocaleString('en-US')})`);
    const [a, b] = [`root -w${workers}`, `leaves -w${workers}`];
    const runs = await cpuRounds(bench, postmaster, { [a]: load([lineitem.path]), [b]: load(files) }, repeat, lineitem.rows, (round, name, r) =>
      console.log(`round ${round} ${name.padEnd(12)} ${r.seconds.toFixed(2)} s  ${Math.round(lineitem.rows / r.seconds).toLocaleString('en-US')} rows/s  server ${perRow(r).toFixed(2)} µs/row  client ${r.clientCpu.toFixed(1)} s`),
    );
    results.push({ scheme, leaves: leaves.length, root: runs[a]!, routed: runs[b]! });
    await Promise.all(files.map((f) => fs.rm(f)));
  }
  console.log(`\nmedians of ${repeat} interleaved pairs (each pair's ratio in brackets)`);
  console.log('scheme     leaves  root rows/s  leaves rows/s  leaves/root rows/s           server µs/row root, leaves  leaves/root server CPU');
  for (const r of results) {
    const n = (v: number): string => Math.round(v).toLocaleString('en-US').padStart(11);
    const speed = r.routed.map((x, i) => r.root[i]!.seconds / x.seconds);
    const cpu = r.routed.map((x, i) => x.serverCpu / r.root[i]!.serverCpu);
    const list = (v: number[]): string => v.map((p) => p.toFixed(2)).join(', ');
    console.log(
      `${r.scheme.padEnd(10)} ${String(r.leaves).padStart(6)}  ${n(lineitem.rows / median(r.root.map((x) => x.seconds)))}  ${n(lineitem.rows / median(r.routed.map((x) => x.seconds)))}    ${median(speed).toFixed(2)} (${list(speed)})` +
        `   ${median(r.root.map(perRow)).toFixed(2)}, ${median(r.routed.map(perRow)).toFixed(2)}    ${median(cpu).toFixed(2)} (${list(cpu)})`,
    );
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
