/**
 * DBT-3's refresh functions, pgsurge against the DBT-3 kit's way with psql, on the same
 * generated data and the same server: the tables (`dbt3 gen --scale <s> --refresh <sets>`)
 * loaded by `pgsurge dbt3 load` into two schemas, then, set after set, RF1 and RF2 of set K
 * in each schema, the order alternating (pgsurge first for odd sets, the kit first for even):
 *
 *   pgsurge: `pgsurge dbt3 refresh <dir> --set K -w <workers>` (RF1: orders.tbl.uK then
 *   lineitem.tbl.uK through pgsurge's load, 64 KB chunks; RF2: delete.K's orders and
 *   lineitems from a staged key table, one transaction);
 *   kit: bench/lib/kit-refresh.ts (psql: a temporary table per file, `\copy`, INSERT …
 *   SELECT, one transaction; then a temporary key table, DELETE … USING, one transaction).
 *
 *   node dist/bench/dbt3-refresh.js [--scale 1] [--sets 4] [--workers 2] [--pg-bin system|embedded|<dir>]
 *
 * Prints each set's RF1 and RF2 seconds for both, their medians, and checks that after
 * every set the two schemas' orders and lineitem hold the same number of rows.
 */
import './lib/usage.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { benchCommandLine, benchFlags, openBenchCluster } from './lib/bench-cluster.js';
import { kitRefresh } from './lib/kit-refresh.js';
import { describeMachine, median, psqlPath } from './lib/machine.js';
import { run } from './lib/run.js';

const { flag } = benchFlags();
const scale = flag('--scale', '1');
const sets = Number(flag('--sets', '4'));
const workers = flag('--workers', '2');
const pgBin = flag('--pg-bin', 'embedded');
const pgsurge = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/pgsurge.js');
const OURS = 'refresh_pgsurge';
const KIT = 'refresh_kit';

psqlPath();
const { work, cluster } = await openBenchCluster('pgsurge-bench-refresh-', pgBin);
console.log(benchCommandLine('dbt3-refresh.js'));
console.log(`# machine: ${describeMachine()}`);
try {
  await cluster.start();
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const url = cluster.url();
  const dataDir = path.join(work, 'dbt3');
  await run(process.execPath, [pgsurge, 'dbt3', 'gen', '--scale', scale, '--refresh', String(sets), '--out', dataDir]);
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  const count = async (schema: string): Promise<string> => {
    const r = await admin.query(`SELECT (SELECT count(*) FROM ${schema}.orders) AS o, (SELECT count(*) FROM ${schema}.lineitem) AS l`);
    return `${r.rows[0].o} orders, ${r.rows[0].l} lineitems`;
  };
  for (const schema of [OURS, KIT]) {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    await run(process.execPath, [pgsurge, 'dbt3', 'load', dataDir, '--db', url, '--schema', schema, '-w', workers, '--json', '--sample-every', 'off']);
  }
  console.log(`# loaded SF ${scale} into ${OURS} and ${KIT}: ${await count(OURS)} each`);
  const rows: { set: number; ours: { rf1: number; rf2: number }; kit: { rf1: number; rf2: number } }[] = [];
  const ourRefresh = async (set: number): Promise<{ rf1: number; rf2: number }> => {
    const r = await run(process.execPath, [pgsurge, 'dbt3', 'refresh', dataDir, '--set', String(set), '--db', url, '--schema', OURS, '-w', workers, '--json', '--sample-every', 'off']);
    const refresh = JSON.parse(r.stdout.trim().split('\n').at(-1)!).refresh as { rf1: { seconds: number }; rf2: { seconds: number } };
    return { rf1: refresh.rf1.seconds, rf2: refresh.rf2.seconds };
  };
  console.log('set  pgsurge RF1 s  kit RF1 s  pgsurge RF2 s  kit RF2 s  rows after (each)');
  for (let set = 1; set <= sets; set++) {
    let ours: { rf1: number; rf2: number };
    let kit: { rf1: number; rf2: number };
    if (set % 2 === 1) {
      ours = await ourRefresh(set);
      kit = kitRefresh(url, dataDir, set, KIT);
    } else {
      kit = kitRefresh(url, dataDir, set, KIT);
      ours = await ourRefresh(set);
    }
    const [a, b] = [await count(OURS), await count(KIT)];
    if (a !== b) throw new Error(`set ${set}: pgsurge's schema has ${a}, the kit's ${b}`);
    rows.push({ set, ours, kit });
    console.log(`${String(set).padStart(3)}  ${ours.rf1.toFixed(3).padStart(13)}  ${kit.rf1.toFixed(3).padStart(9)}  ${ours.rf2.toFixed(3).padStart(13)}  ${kit.rf2.toFixed(3).padStart(9)}  ${a}`);
  }
  const med = (f: (r: (typeof rows)[number]) => number): string => median(rows.map(f)).toFixed(3);
  console.log(`median  ${med((r) => r.ours.rf1).padStart(9)}  ${med((r) => r.kit.rf1).padStart(9)}  ${med((r) => r.ours.rf2).padStart(13)}  ${med((r) => r.kit.rf2).padStart(9)}`);
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
}
