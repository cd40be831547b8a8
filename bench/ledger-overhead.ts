/**
 * What exactly-once costs: the same COPY load with the ledger (one more INSERT per chunk,
 * in the chunk's transaction, plus the checks at start) and with `--no-ledger`, side by
 * side on one managed cluster, interleaved (ledger, none, ledger, none …), reporting the
 * median of the pairwise ratios of load time, per chunk size.
 *
 *   node dist/bench/ledger-overhead.js [--rows 200000] [--rounds 5] [--workers 2] [--chunk-sizes 64KB,1MB,8MB] [--pg-bin embedded|system|<dir>]
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSize } from '../src/cli/parse-options.js';
import { ManagedCluster } from '../src/cluster/managed-cluster.js';
import { load } from '../src/load/load.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1]! : fallback;
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const rows = Number(arg('rows', '200000'));
const rounds = Number(arg('rounds', '5'));
const workers = Number(arg('workers', '2'));
const chunkSizes = arg('chunk-sizes', '64KB,1MB,8MB').split(',');
const pgBin = arg('pg-bin', 'embedded');

const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-bench-ledger-'));
await fs.chmod(work, 0o755);
const cluster = await ManagedCluster.open({ dataDir: path.join(work, 'data'), pgBin, env: process.env });
try {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`# bench/ledger-overhead: node ${path.relative(process.cwd(), process.argv[1]!)} ${process.argv.slice(2).join(' ')}`);
  console.log(`# machine: ${cpu}, ${os.availableParallelism()} cores, Node ${process.version}; server ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, default settings`);
  const file = path.join(work, 'lineitem.tbl');
  const lines: string[] = [];
  for (let i = 1; i <= rows; i++) {
    const d = String((i % 28) + 1).padStart(2, '0');
    lines.push(`${i}|${i % 200}|${i % 10}|${(i % 7) + 1}|${(i % 50) + 1}.00|${(i * 7.31).toFixed(2)}|0.0${i % 10}|0.0${i % 8}|${'RAN'[i % 3]}|${'OF'[i % 2]}|1995-03-${d}|1995-04-${d}|1995-05-${d}|DELIVER IN PERSON|TRUCK|c${'x'.repeat(i % 30)}|`);
  }
  await fs.writeFile(file, lines.join('\n') + '\n');
  const size = (await fs.stat(file)).size;
  console.log(`# input: ${rows.toLocaleString('en-US')} lineitem rows, ${(size / 1e6).toFixed(1)} MB; ${workers} workers; ${rounds} rounds`);
  await cluster.start();
  const target = { config: cluster.connection(), description: 'bench cluster', managed: undefined, release: async () => {} };
  const input = { file, table: 'lineitem', schema: undefined, format: 'tbl' as const };

  const once = async (chunk: number, ledger: boolean): Promise<number> => {
    // The whole call: the ledger's checks at start and its rewrite of reject files at the end count too.
    const started = performance.now();
    const summary = await load([input], { workers, chunkBytes: chunk, create: true, truncate: true, ledger }, target);
    if (summary.total.loaded !== rows) throw new Error(`loaded ${summary.total.loaded} of ${rows}`);
    return (performance.now() - started) / 1000;
  };
  await once(parseSize('--chunk-size', '1MB'), true); // warm up: creates the table and the ledger

  console.log('\nchunk size  chunks  ledger s (median)  none s (median)  ledger/none (median of pairs)');
  for (const c of chunkSizes) {
    const chunk = parseSize('--chunk-size', c);
    const withLedger: number[] = [];
    const without: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so drift in the machine's load falls on both.
      const a = r % 2 === 0 ? await once(chunk, true) : undefined;
      const b = await once(chunk, false);
      const a2 = a ?? (await once(chunk, true));
      withLedger.push(a2);
      without.push(b);
      ratios.push(a2 / b);
    }
    console.log(`${c.padEnd(10)}  ${String(Math.ceil(size / chunk)).padStart(6)}  ${median(withLedger).toFixed(3).padStart(17)}  ${median(without).toFixed(3).padStart(15)}  ${median(ratios).toFixed(3).padStart(29)}`);
  }
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
