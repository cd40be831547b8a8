/**
 * The binary wire against text and against psql's \copy, on SF lineitem.tbl and the same
 * server: interleaved rounds of psql ×1, pgsurge --wire text -w1, pgsurge --wire binary
 * -w1, psql ×2 (the two halves at once), text -w2, binary -w2. For every run: rows/s,
 * the server's CPU seconds (the postmaster's reaped children: the load's backends) and
 * the client's (this script's reaped children: pgsurge or psql). Then the ratios to psql,
 * medians of the per-round ratios. Then "the loader on its own host": the server's
 * processes pinned to CPU 0 with taskset, psql and pgsurge to CPU 1.
 *
 *   node dist/bench/wire.js [--scale 1] [--repeat 3] [--pinned-repeat 3] [--pg-bin system|embedded|<dir>]
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { run } from './lib/run.js';
import { cpuRounds, lineitemBench, type CpuRun } from './lib/lineitem-bench.js';
import { pinServer, postmasterPid } from './lib/server-cpu.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const pinnedRepeat = Number(arg('pinned-repeat', '3'));
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();

type Run = CpuRun;

const { work, cluster } = await openBenchCluster('pgsurge-bench-wire-', pgBin);
try {
  console.log(benchCommandLine('wire'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, autovacuum off (its workers would count as the load's CPU), Unix socket`);
  const bench = await lineitemBench(cluster, work, scale, { autovacuum: 'off' });
  const { lineitem, stripped, halves, url, admin, copyCmd } = bench;
  const rows = lineitem.rows;
  const postmaster = postmasterPid(cluster.dataDir);

  /** `pin`: the client's CPU list for taskset (the pinned rounds), or none. */
  const variantsFor = (pin: string | undefined): Record<string, () => Promise<unknown>> => {
    const cmd = (c: string, args: string[]): Promise<unknown> => (pin === undefined ? run(c, args) : run('taskset', ['-c', pin, c, ...args]));
    // --truncate: the table was emptied behind the ledger's back; without it, rerunning the same load is refused.
    const load = (wire: string, w: number) => (): Promise<unknown> => cmd(process.execPath, [pgsurge, 'load', lineitem.path, '--truncate', '--db', url, '-w', String(w), '--wire', wire, '-q']);
    const both: Record<string, () => Promise<unknown>> = {
      'psql x1': () => cmd(psql, copyCmd(stripped)),
      'text -w1': load('text', 1),
      'binary -w1': load('binary', 1),
    };
    if (pin !== undefined) return both;
    return {
      ...both,
      'psql x2': () => Promise.all(halves.map((h) => cmd(psql, copyCmd(h)))),
      'text -w2': load('text', 2),
      'binary -w2': load('binary', 2),
    };
  };

  const rounds = async (label: string, variants: Record<string, () => Promise<unknown>>, n: number): Promise<Record<string, Run[]>> => {
    console.log(`\n## ${label}`);
    console.log('round variant          seconds      rows/s  server CPU s  µs/row  client CPU s  µs/row');
    const us = (s: number): string => ((s * 1e6) / rows).toFixed(2).padStart(6);
    return cpuRounds(bench, postmaster, variants, n, rows, (round, name, { seconds, serverCpu, clientCpu }) => {
      console.log(`${String(round).padStart(5)} ${name.padEnd(14)} ${seconds.toFixed(2).padStart(9)} ${Math.round(rows / seconds).toLocaleString('en-US').padStart(11)} ${serverCpu.toFixed(2).padStart(13)} ${us(serverCpu)} ${clientCpu.toFixed(2).padStart(13)} ${us(clientCpu)}`);
    });
  };

  const report = (runs: Record<string, Run[]>, targets: [string, string, number][]): void => {
    console.log('\nvariant        median rows/s  server µs/row  client µs/row');
    for (const [name, rs] of Object.entries(runs)) {
      const m = (f: (r: Run) => number): number => median(rs.map(f));
      console.log(`${name.padEnd(14)} ${Math.round(m((r) => rows / r.seconds)).toLocaleString('en-US').padStart(13)} ${m((r) => (r.serverCpu * 1e6) / rows).toFixed(2).padStart(14)} ${m((r) => (r.clientCpu * 1e6) / rows).toFixed(2).padStart(14)}`);
    }
    const ratio = (a: string, b: string, f: (r: Run) => number): number => median(runs[a]!.map((r, i) => f(r) / f(runs[b]![i]!)));
    console.log('');
    for (const [a, b, target] of targets) {
      console.log(`${`${a} / ${b}`.padEnd(24)} rows/s ${ratio(a, b, (r) => 1 / r.seconds).toFixed(2)} (target ≥ ${target})  server CPU ${ratio(a, b, (r) => r.serverCpu).toFixed(2)}`);
    }
  };

  const free = await rounds('both cores shared by server and client', variantsFor(undefined), repeat);
  report(free, [
    ['text -w1', 'psql x1', 1],
    ['binary -w1', 'psql x1', 1.25],
    ['text -w2', 'psql x2', 1],
    ['binary -w2', 'psql x2', 1.1],
  ]);
  const serverRatio = median(free['binary -w1']!.map((r, i) => r.serverCpu / free['psql x1']![i]!.serverCpu));
  console.log(`server CPU per row, binary -w1 / psql x1: ${serverRatio.toFixed(2)} (target ≤ 0.75)`);

  if (pinnedRepeat > 0) {
    // The loader on its own host: the server keeps CPU 0, the clients get CPU 1.
    pinServer(postmaster, '0');
    try {
      const pinned = await rounds('pinned: server on CPU 0, client on CPU 1 (the loader on its own host)', variantsFor('1'), pinnedRepeat);
      report(pinned, [
        ['text -w1', 'psql x1', 1],
        ['binary -w1', 'psql x1', 1.3],
      ]);
    } finally {
      pinServer(postmaster, '0-' + String(os.availableParallelism() - 1));
    }
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
