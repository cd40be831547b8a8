/**
 * pgsurge COPY against psql's \copy, on the same lineitem.tbl and the same server, runs
 * interleaved (psql×1, pgsurge -w1, psql×2, pgsurge -w2, and again), reporting medians of
 * the pairwise ratios of rows/s; then pgsurge's peak RSS at two input sizes 10× apart.
 *
 *   node dist/bench/load-vs-psql.js [--scale 0.2] [--repeat 3] [--pg-bin system|embedded|<dir>] [--baseline <checkout>]
 *
 * `--baseline <checkout>`: another built pgsurge (a clone or worktree of an earlier commit,
 * after `npm ci`) runs as two more variants in the same rounds, `baseline -w1` and
 * `baseline -w2`, and the ratios of this checkout's rows/s to the baseline's are printed:
 * a change measured before and after in one run, interleaved.
 *
 * psql cannot strip dbgen's trailing `|`, so it loads a stripped copy; two psql streams
 * load the two halves of that copy at once.
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { interleave } from './lib/interleave.js';
import { run } from './lib/run.js';
import { lineitemBench } from './lib/lineitem-bench.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '0.2'));
const repeat = Number(arg('repeat', '3'));
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();
const baselineDir = arg('baseline', '');
const baseline = baselineDir === '' ? undefined : path.join(path.resolve(baselineDir), 'bin', 'pgsurge.js');

const { work, cluster } = await openBenchCluster('pgsurge-bench-', pgBin);
try {
  console.log(benchCommandLine('load-vs-psql'));
  console.log(`# machine: ${describeMachine()}`);
  if (baseline !== undefined) console.log(`# baseline: ${baseline}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const { lineitem, stripped, halves, url, admin, reset, copyCmd } = await lineitemBench(cluster, work, scale);
  // --truncate: the table was emptied behind the ledger's back; without it, rerunning the same load is refused.
  const load = (bin: string, workers: number) => async (): Promise<number> => (await run(process.execPath, [bin, 'load', lineitem.path, '--truncate', '--db', url, '-w', String(workers), '-q'])).seconds;
  const variants: Record<string, () => Promise<number>> = {
    'psql x1': async () => (await run(psql, copyCmd(stripped))).seconds,
    'pgsurge -w1': load(pgsurge, 1),
    ...(baseline === undefined ? {} : { 'baseline -w1': load(baseline, 1) }),
    'psql x2': async () => {
      const started = performance.now();
      await Promise.all(halves.map((h) => run(psql, copyCmd(h))));
      return (performance.now() - started) / 1000;
    },
    'pgsurge -w2': load(pgsurge, 2),
    ...(baseline === undefined ? {} : { 'baseline -w2': load(baseline, 2) }),
  };
  const rates = await interleave(variants, { repeat, rows: lineitem.rows, reset, count: async () => Number((await admin.query('SELECT count(*) AS n FROM lineitem')).rows[0].n) });
  const ratio = (a: string, b: string): number => median(rates[a]!.map((v, i) => v / rates[b]![i]!));
  console.log('\nvariant        median rows/s');
  for (const [name, values] of Object.entries(rates)) console.log(`${name.padEnd(14)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)}`);
  console.log(`\npgsurge -w1 / psql x1: ${ratio('pgsurge -w1', 'psql x1').toFixed(2)} (median of ${repeat} paired runs; target ≥ 0.95)`);
  console.log(`pgsurge -w2 / psql x2: ${ratio('pgsurge -w2', 'psql x2').toFixed(2)} (median of ${repeat} paired runs; target ≥ 0.95)`);
  if (baseline !== undefined) {
    console.log(`pgsurge -w1 / baseline -w1: ${ratio('pgsurge -w1', 'baseline -w1').toFixed(2)}, pairs ${rates['pgsurge -w1']!.map((v, i) => (v / rates['baseline -w1']![i]!).toFixed(2)).join(', ')}`);
    console.log(`pgsurge -w2 / baseline -w2: ${ratio('pgsurge -w2', 'baseline -w2').toFixed(2)}, pairs ${rates['pgsurge -w2']!.map((v, i) => (v / rates['baseline -w2']![i]!).toFixed(2)).join(', ')}`);
    console.log(`baseline -w1 / psql x1: ${ratio('baseline -w1', 'psql x1').toFixed(2)}; baseline -w2 / psql x2: ${ratio('baseline -w2', 'psql x2').toFixed(2)}`);
  }

  // Peak RSS must not grow with the input: the same load at two sizes 10× apart.
  console.log('\npeak RSS of `pgsurge load -w 2` (VmHWM):');
  for (const sf of [Math.max(0.01, scale / 10), scale]) {
    const dir = path.join(work, `rss-${sf}`);
    const f = sf === scale ? lineitem : (await generateDbt3({ scale: sf, outDir: dir, tables: ['lineitem'] })).files[0]!;
    await reset();
    const r = await run(process.execPath, [pgsurge, 'load', f.path, '--truncate', '--db', url, '-w', '2', '-q']);
    console.log(`  ${(f.bytes / 1e6).toFixed(0).padStart(5)} MB input: ${((r.peakRss ?? NaN) / 1024 ** 2).toFixed(0)} MB peak RSS`);
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
