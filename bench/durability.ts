/**
 * What the durability presets and a separate WAL directory buy, measured side by side on
 * managed clusters: the same DBT-3 lineitem file loaded with --durability safe, fast,
 * fast + --unlogged and unsafe, into a cluster whose WAL is in the data directory and one
 * whose WAL is in its own directory (--wal-dir), interleaved (A B C … A B C …), several runs.
 * Prints rows/s and WAL bytes per row for each, as medians of per-run ratios to `safe` with
 * the WAL in the data directory.
 *
 *   node dist/bench/durability.js [--scale 0.17] [--runs 3] [--workers 2] [--pg-bin embedded] [--dir <scratch>] [--wal-dir <dir>]
 *
 * The data is `pgsurge dbt3 gen`'s lineitem at that scale (0.17: about a million rows).
 *
 * `--wal-dir` puts the second cluster's WAL there (default: a directory next to the data,
 * on the same disk: that measures the mechanism, not a second disk).
 */
import './lib/usage.js';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ManagedCluster } from '../src/cluster/managed-cluster.js';
import { filesystemInfo } from '../src/cluster/filesystem-info.js';
import type { Target } from '../src/cluster/target.js';
import { loadWithDurability } from '../src/load/durable-load.js';
import type { DurabilityOptions } from '../src/writer/durability/presets.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const SCALE = Number(arg('scale', '0.17'));
const RUNS = Number(arg('runs', '3'));
const WORKERS = Number(arg('workers', '2'));
const PG_BIN = arg('pg-bin', 'embedded');
const DIR = path.resolve(arg('dir', path.join(os.tmpdir(), 'pgsurge-bench-durability')));
const WAL_DIR = path.resolve(arg('wal-dir', path.join(DIR, 'separate-wal')));

interface Variant {
  readonly name: string;
  readonly cluster: 'data-dir WAL' | 'separate WAL';
  readonly durability: DurabilityOptions;
  /** Default: WORKERS workers, 8 MB chunks. `single`: one worker, the whole file as one chunk (one transaction). */
  readonly single?: boolean;
}

const VARIANTS: Variant[] = [
  ...(['data-dir WAL', 'separate WAL'] as const).flatMap((cluster): Variant[] => [
    { name: `safe, ${cluster}`, cluster, durability: { preset: 'safe', unlogged: false } },
    { name: `fast, ${cluster}`, cluster, durability: { preset: 'fast', unlogged: false } },
    { name: `fast --unlogged, ${cluster}`, cluster, durability: { preset: 'fast', unlogged: true } },
    { name: `unsafe, ${cluster}`, cluster, durability: { preset: 'unsafe', unlogged: false } },
  ]),
  // One transaction that creates the table and COPYs all of it: FREEZE for every row, and
  // under wal_level=minimal no WAL for the rows at all. The price: no parallelism, and memory for the whole file.
  { name: 'safe, -w 1, one chunk', cluster: 'data-dir WAL', durability: { preset: 'safe', unlogged: false }, single: true },
  { name: 'fast, -w 1, one chunk', cluster: 'data-dir WAL', durability: { preset: 'fast', unlogged: false }, single: true },
  { name: 'unsafe, -w 1, one chunk', cluster: 'data-dir WAL', durability: { preset: 'unsafe', unlogged: false }, single: true },
];

interface Measure {
  rowsPerSecond: number;
  /** Counting the steps around the load (SET LOGGED, restarts, CHECKPOINT). */
  rowsPerSecondAll: number;
  walPerRow: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  await fs.mkdir(DIR, { recursive: true });
  await fs.chmod(DIR, 0o755);
  process.stderr.write(`generating DBT-3 lineitem at scale ${SCALE} in ${DIR}\n`);
  const generated = (await generateDbt3({ scale: SCALE, outDir: path.join(DIR, `sf-${SCALE}`), tables: ['lineitem'] })).files[0]!;
  const file = generated.path;
  const ROWS = generated.rows;
  const fileBytes = generated.bytes;

  const clusters = {
    'data-dir WAL': await ManagedCluster.open({ dataDir: path.join(DIR, 'cluster-a'), pgBin: PG_BIN, env: process.env }),
    'separate WAL': await ManagedCluster.open({ dataDir: path.join(DIR, 'cluster-b'), pgBin: PG_BIN, walDir: WAL_DIR, env: process.env }),
  };
  for (const c of Object.values(clusters)) {
    await c.start();
  }
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const dataFs = await filesystemInfo(clusters['data-dir WAL'].dataDir);
  const walFs = await filesystemInfo(path.join(clusters['separate WAL'].dataDir, 'pg_wal'));
  process.stdout.write(
    [
      `command: node dist/bench/durability.js ${process.argv.slice(2).join(' ')}`.trimEnd(),
      `machine: ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM; Node ${process.version}; ${clusters['data-dir WAL'].binaries.version} (${clusters['data-dir WAL'].binaries.source})`,
      `data: DBT-3 lineitem at scale ${SCALE}, ${ROWS.toLocaleString('en-US')} rows, ${(fileBytes / 2 ** 20).toFixed(0)} MB; ${WORKERS} workers; ${RUNS} runs, variants interleaved`,
      `separate WAL: ${walFs.realPath} on ${walFs.device} — data on ${dataFs.device}: ${walFs.dev === dataFs.dev ? 'THE SAME filesystem (so this measures the mechanism, not a second disk)' : 'different filesystems'}`,
      '',
    ].join('\n'),
  );

  const results = new Map<string, Measure[]>(VARIANTS.map((v) => [v.name, []]));
  try {
    for (let run = 1; run <= RUNS; run++) {
      for (const v of VARIANTS) {
        const cluster = clusters[v.cluster];
        const target: Target = { config: cluster.connection(), description: v.cluster, managed: cluster, release: async () => {} };
        const c = new pg.Client(cluster.connection());
        await c.connect();
        // Every variant starts alike: no table, no checkpoint debt.
        await c.query('DROP TABLE IF EXISTS lineitem');
        await c.query('CHECKPOINT');
        await c.end();
        const summary = await loadWithDurability(
          [{ file, table: 'lineitem', schema: undefined, format: 'tbl' }],
          { workers: v.single ? 1 : WORKERS, chunkBytes: v.single ? fileBytes + 1 : 8 * 2 ** 20, create: true, truncate: false, durability: v.durability },
          target,
        );
        const d = summary.durability!;
        if (summary.total.rows !== ROWS) throw new Error(`${v.name}: loaded ${summary.total.rows} rows, expected ${ROWS}`);
        if (v.single && v.durability.preset !== 'safe' && d.frozenRows !== ROWS) throw new Error(`${v.name}: ${d.frozenRows} rows frozen, expected all ${ROWS}`);
        const extra = d.steps.reduce((a, s) => a + s.seconds, 0);
        const m = {
          rowsPerSecond: summary.total.rowsPerSecond,
          rowsPerSecondAll: ROWS / (summary.total.seconds + extra),
          walPerRow: d.walBytes / ROWS,
        };
        results.get(v.name)!.push(m);
        process.stderr.write(
          `run ${run} ${v.name.padEnd(34)} ${Math.round(m.rowsPerSecond).toLocaleString('en-US').padStart(9)} rows/s (${Math.round(m.rowsPerSecondAll).toLocaleString('en-US')} with steps)  ${m.walPerRow.toFixed(1)} WAL bytes/row\n`,
        );
      }
    }
  } finally {
    for (const c of Object.values(clusters)) await c.stop().catch(() => undefined);
  }

  const base = results.get(VARIANTS[0]!.name)!;
  const ratio = (xs: Measure[], key: keyof Measure): number => median(xs.map((x, i) => x[key] / base[i]![key]));
  const rows = VARIANTS.map((v) => {
    const xs = results.get(v.name)!;
    const walRatio = base.every((b) => b.walPerRow > 0) ? ratio(xs, 'walPerRow').toFixed(3) : '-';
    return [
      v.name,
      Math.round(median(xs.map((x) => x.rowsPerSecond))).toLocaleString('en-US'),
      ratio(xs, 'rowsPerSecond').toFixed(2),
      ratio(xs, 'rowsPerSecondAll').toFixed(2),
      median(xs.map((x) => x.walPerRow)).toFixed(1),
      walRatio,
    ];
  });
  const header = ['variant', 'rows/s', 'rows/s vs safe', 'incl. steps vs safe', 'WAL bytes/row', 'WAL vs safe'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  process.stdout.write(`${fmt(header)}\n|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|\n${rows.map(fmt).join('\n')}\n`);
  process.stdout.write(`\nratios: medians over ${RUNS} runs of (variant / "safe, data-dir WAL") in the same run; "incl. steps" counts SET LOGGED, the restarts and the CHECKPOINT of unsafe.\n`);
  try {
    process.stdout.write(`file ${(fileBytes / 2 ** 20).toFixed(0)} MB = ${(fileBytes / ROWS).toFixed(1)} bytes/row (${execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim()})\n`);
  } catch {
    // no uname
  }
}

await main();
