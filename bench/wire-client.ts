/**
 * The loader's whole cost per row, this build against another (`--before <dir>`, a copy of
 * a worktree's bin/ and dist/), side by side: interleaved rounds of `pgsurge load
 * lineitem.tbl --wire <wire> -w <workers>` from each build, with the client's CPU seconds
 * (the reaped pgsurge process: reading, framing, encoding, the protocol, the ledger, the
 * sampler, its start and end) and the server's (the postmaster's reaped children), then the
 * medians of the per-round ratios. CPU seconds are what a busy machine disturbs least; at
 * -w2 on two cores the client's CPU per row is taken from the backends', so it is the lever.
 *
 * Then a load's fixed cost: the same command on a 1,000-row file, against psql `\copy` of
 * it, wall seconds and client CPU seconds: what every load pays whatever its size (Node's
 * start, the bundle, connections, the catalog and ledger queries, the sampler, the end's
 * summary), a share of a bench's wall time that rows/s ratios include.
 *
 *   node dist/bench/wire-client.js [--scale 0.3] [--repeat 5] [--wire binary] [--workers 2] [--before <dir>] [--pg-bin system|embedded|<dir>]
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
import { postmasterPid } from './lib/server-cpu.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const scale = Number(arg('scale', '0.3'));
const repeat = Number(arg('repeat', '5'));
const wire = arg('wire', 'binary');
const workers = arg('workers', '2');
const before = arg('before', '');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();
const SMALL_ROWS = 1000;

type Run = CpuRun;

const { work, cluster } = await openBenchCluster('pgsurge-bench-wire-client-', pgBin);
try {
  console.log(benchCommandLine('wire-client'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, autovacuum off, Unix socket`);
  const bench = await lineitemBench(cluster, work, scale, { autovacuum: 'off' });
  const { lineitem, stripped, url, admin, copyCmd } = bench;
  const rows = lineitem.rows;
  const postmaster = postmasterPid(cluster.dataDir);
  // The fixed cost's input: the file's first rows (psql's copy without the trailing `|`, as ever).
  const small = path.join(work, 'small', 'lineitem.tbl');
  const smallPsql = path.join(work, 'small.psql');
  await fs.mkdir(path.dirname(small), { recursive: true });
  await fs.chmod(path.dirname(small), 0o755);
  const head = async (from: string, to: string): Promise<void> => {
    const text = (await fs.readFile(from, 'utf8')).split('\n').slice(0, SMALL_ROWS).join('\n') + '\n';
    await fs.writeFile(to, text);
  };
  await head(lineitem.path, small);
  await head(stripped, smallPsql);

  const load = (bin: string, file: string) => (): Promise<unknown> =>
    run(process.execPath, [path.join(bin, 'bin', 'pgsurge.js'), 'load', file, '--truncate', '--db', url, '-w', workers, '--wire', wire, '-q']);
  const builds: Record<string, string> = { ...(before ? { before: path.resolve(before) } : {}), now: root };

  const rounds = async (label: string, n: number, expected: number, variants: Record<string, () => Promise<unknown>>): Promise<Record<string, Run[]>> => {
    console.log(`\n## ${label}`);
    const us = (s: number): string => ((s * 1e6) / expected).toFixed(2);
    return cpuRounds(bench, postmaster, variants, n, expected, (round, name, { seconds, serverCpu, clientCpu }) => {
      console.log(`${String(round).padStart(5)} ${name.padEnd(22)} ${seconds.toFixed(2).padStart(7)} s ${Math.round(expected / seconds).toLocaleString('en-US').padStart(9)} rows/s  server ${serverCpu.toFixed(2)} s (${us(serverCpu)} µs/row)  client ${clientCpu.toFixed(2)} s (${us(clientCpu)} µs/row)`);
    });
  };
  const ratios = (runs: Record<string, Run[]>, a: string, b: string): string => {
    const r = (f: (x: Run) => number): string => median(runs[a]!.map((x, i) => f(x) / f(runs[b]![i]!))).toFixed(3);
    return `${a} / ${b}: client CPU ${r((x) => x.clientCpu)}, server CPU ${r((x) => x.serverCpu)}, rows/s ${r((x) => 1 / x.seconds)} (medians of the per-round ratios)`;
  };

  const big = await rounds(
    `lineitem at scale ${scale}, --wire ${wire} -w ${workers}`,
    repeat,
    rows,
    Object.fromEntries(Object.entries(builds).map(([k, bin]) => [`${k}`, load(bin, lineitem.path)])),
  );
  console.log('');
  for (const [name, rs] of Object.entries(big)) {
    console.log(`${name.padEnd(8)} median client ${median(rs.map((r) => (r.clientCpu * 1e6) / rows)).toFixed(3)} µs/row, server ${median(rs.map((r) => (r.serverCpu * 1e6) / rows)).toFixed(3)} µs/row, ${Math.round(median(rs.map((r) => rows / r.seconds))).toLocaleString('en-US')} rows/s`);
  }
  if (before) console.log(ratios(big, 'now', 'before'));

  const fixed = await rounds(`a load's fixed cost: ${SMALL_ROWS.toLocaleString('en-US')} rows`, repeat, SMALL_ROWS, {
    psql: () => run(psql, copyCmd(smallPsql)),
    ...Object.fromEntries(Object.entries(builds).map(([k, bin]) => [k, load(bin, small)])),
  });
  console.log('');
  for (const [name, rs] of Object.entries(fixed)) {
    console.log(`${name.padEnd(8)} median ${median(rs.map((r) => r.seconds)).toFixed(3)} s wall, client CPU ${median(rs.map((r) => r.clientCpu)).toFixed(3)} s`);
  }
  if (before) console.log(ratios(fixed, 'now', 'before'));
  const perLoad = median(fixed['now']!.map((r, i) => r.seconds - fixed['psql']![i]!.seconds));
  console.log(`pgsurge's fixed cost over psql's: ${perLoad.toFixed(2)} s a load (median of the per-round differences): ${((100 * perLoad) / median(big['now']!.map((r) => r.seconds))).toFixed(1)}% of this scale's load`);
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
