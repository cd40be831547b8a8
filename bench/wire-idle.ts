/**
 * Where the server's core sits idle in the "loader on its own host" run of bench/wire.ts:
 * the server's processes pinned to CPU 0, psql or pgsurge to CPU 1, lineitem loaded with
 * one stream, and the load's backend looked at every few milliseconds in
 * pg_stat_activity. Each look is one of:
 *   - on CPU: active, no wait event;
 *   - in COPY, waiting for data: active, ClientRead, in the COPY statement (the next piece
 *     has not come: the loader is encoding, framing, or busy with something else);
 *   - after COPY, waiting for the next statement: idle in transaction (the ledger row and
 *     COMMIT have not come yet);
 *   - between chunks: idle (the next chunk's BEGIN; COPY has not come yet);
 *   - other waits (WAL, I/O, locks), named.
 * Also the server's CPU seconds over the wall time (how busy its core was), and the
 * client's. Interleaved rounds of psql ×1, pgsurge --wire binary -w1 and, with
 * `--before <dir>`, the same from another build (a copy of a worktree's bin/ and dist/),
 * so a change's effect is measured side by side.
 *
 *   node dist/bench/wire-idle.js [--scale 0.1] [--repeat 3] [--every-ms 4] [--wire binary] [--before <dir>] [--cpu-prof-dir <dir>] [--also "<load flags>"] [--pg-bin system|embedded|<dir>]
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { run } from './lib/run.js';
import { lineitemBench } from './lib/lineitem-bench.js';
import { measureCpu, pinServer, postmasterPid } from './lib/server-cpu.js';
import { processCpuSeconds } from '../src/metrics/proc-stat.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const scale = Number(arg('scale', '0.1'));
const repeat = Number(arg('repeat', '3'));
const everyMs = Number(arg('every-ms', '4'));
const wire = arg('wire', 'binary');
const before = arg('before', '');
/** `--cpu-prof-dir <dir>`: pgsurge's runs write a CPU profile there (node --cpu-prof), to see where its core goes. */
const cpuProfDir = arg('cpu-prof-dir', '');
/** `--also "<pgsurge load flags>"`: one more variant, this build with these flags (`--also "--chunk-size 32MB"`). */
const also = arg('also', '');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();

const CLASSES = ['on CPU', 'COPY: waiting for data', 'after COPY: waiting for ledger+COMMIT', 'between chunks: idle', 'other waits'] as const;
type Look = (typeof CLASSES)[number];

interface Run {
  readonly seconds: number;
  readonly serverCpu: number;
  readonly clientCpu: number;
  readonly looks: Record<Look, number>;
  readonly otherWaits: Map<string, number>;
}

/** Looks at the load's backends (psql's, or pgsurge's workers) until `stop` resolves. */
async function lookAt(client: pg.Client, stop: Promise<unknown>): Promise<Pick<Run, 'looks' | 'otherWaits'>> {
  const seq: Look[] = [];
  const otherWaits = new Map<string, number>();
  let done = false;
  void stop.finally(() => (done = true));
  // psql's backend has application_name psql; pgsurge's workers `pgsurge <load id> w<n>` (its sampler is left out).
  const sql = `SELECT state, wait_event_type AS t, wait_event AS e, left(query, 40) AS q FROM pg_stat_activity
    WHERE pid <> pg_backend_pid() AND (application_name = 'psql' OR application_name ~ '^pgsurge .* w[0-9]+$')`;
  while (!done) {
    for (const r of (await client.query<{ state: string; t: string | null; e: string | null; q: string }>(sql)).rows) {
      let look: Look;
      if (r.state === 'idle in transaction') look = 'after COPY: waiting for ledger+COMMIT';
      else if (r.state === 'idle') look = 'between chunks: idle';
      else if (r.e === null) look = 'on CPU';
      else if (r.e === 'ClientRead' && /COPY/i.test(r.q)) look = 'COPY: waiting for data';
      else {
        look = 'other waits';
        const name = `${r.t}:${r.e}${r.e === 'ClientRead' ? ` (${r.q.trim()})` : ''}`;
        otherWaits.set(name, (otherWaits.get(name) ?? 0) + 1);
      }
      seq.push(look);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  // The load's own start and end (connecting, reading the catalog, the first chunk read; the
  // last flush and the summary) leave the connection idle too: only the looks from its first
  // statement to its last count.
  const busy = (l: Look): boolean => l !== 'between chunks: idle';
  const from = seq.findIndex(busy);
  let to = seq.length - 1;
  while (to >= 0 && !busy(seq[to]!)) to--;
  const looks = Object.fromEntries(CLASSES.map((c) => [c, 0])) as Record<Look, number>;
  for (const l of from < 0 ? [] : seq.slice(from, to + 1)) looks[l]++;
  return { looks, otherWaits };
}

const { work, cluster } = await openBenchCluster('pgsurge-bench-wire-idle-', pgBin);
try {
  console.log(benchCommandLine('wire-idle'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, autovacuum off, Unix socket; pinned to CPU 0, the loaders to CPU 1; a look every ${everyMs} ms (this script, on CPU 1 too)`);
  const { lineitem, stripped, url, admin, reset, copyCmd } = await lineitemBench(cluster, work, scale, { autovacuum: 'off' });
  const rows = lineitem.rows;
  const postmaster = postmasterPid(cluster.dataDir);
  const watcher = new pg.Client(cluster.connection());
  await watcher.connect();
  // The looks' own backend is one of the server's processes: its CPU is taken out of the server's.
  const watcherPid = (await watcher.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const pinned = (c: string, args: string[]): Promise<unknown> => run('taskset', ['-c', '1', c, ...args]);
  const load = (bin: string, extra: readonly string[] = []) => (): Promise<unknown> =>
    pinned(process.execPath, [...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(cpuProfDir)}`] : []), path.join(bin, 'bin', 'pgsurge.js'), 'load', lineitem.path, '--truncate', '--db', url, '-w', '1', '--wire', wire, '-q', ...extra]);
  const variants: Record<string, () => Promise<unknown>> = {
    'psql x1': () => pinned(psql, copyCmd(stripped)),
    ...(before ? { [`${wire} before`]: load(path.resolve(before)) } : {}),
    ...(also ? { [`${wire} ${also}`]: load(root, also.split(/\s+/).filter(Boolean)) } : {}),
    [`${wire} -w1`]: load(root),
  };
  const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));

  pinServer(postmaster, '0');
  try {
    for (let round = 1; round <= repeat; round++) {
      for (const [name, fn] of Object.entries(variants)) {
        await reset();
        const started = performance.now();
        let looked: Promise<Pick<Run, 'looks' | 'otherWaits'>> | undefined;
        const looker0 = processCpuSeconds(watcherPid) ?? 0;
        const { serverCpu: withLooks, clientCpu } = await measureCpu(postmaster, () => {
          const loading = fn();
          looked = lookAt(watcher, loading);
          return loading;
        });
        const seconds = (performance.now() - started) / 1000;
        const serverCpu = withLooks - ((processCpuSeconds(watcherPid) ?? 0) - looker0);
        const count = Number((await admin.query('SELECT count(*) AS n FROM lineitem')).rows[0].n);
        if (count !== rows) throw new Error(`${name} loaded ${count} rows, expected ${rows}`);
        const seen = await looked!;
        const r: Run = { seconds, serverCpu, clientCpu, ...seen };
        runs[name]!.push(r);
        const total = CLASSES.reduce((n, c) => n + r.looks[c], 0) || 1;
        const shares = CLASSES.map((c) => `${((100 * r.looks[c]) / total).toFixed(1).padStart(5)}%`).join(' ');
        console.log(`${String(round).padStart(5)} ${name.padEnd(16)} ${seconds.toFixed(2).padStart(7)} s ${Math.round(rows / seconds).toLocaleString('en-US').padStart(9)} rows/s  server ${((serverCpu * 1e6) / rows).toFixed(2)} µs/row, busy ${((100 * serverCpu) / seconds).toFixed(0).padStart(3)}%  client ${((clientCpu * 1e6) / rows).toFixed(2)} µs/row, busy ${((100 * clientCpu) / seconds).toFixed(0).padStart(3)}%  looks ${total}: ${shares}`);
      }
    }
  } finally {
    pinServer(postmaster, '0-' + String(os.availableParallelism() - 1));
  }

  console.log(`\nshares of the looks, medians over ${repeat} rounds: ${CLASSES.join(' | ')}`);
  for (const [name, rs] of Object.entries(runs)) {
    const share = (c: Look): number => median(rs.map((r) => r.looks[c] / (CLASSES.reduce((n, k) => n + r.looks[k], 0) || 1)));
    const busy = median(rs.map((r) => r.serverCpu / r.seconds));
    console.log(`${name.padEnd(16)} rows/s ${Math.round(median(rs.map((r) => rows / r.seconds))).toLocaleString('en-US').padStart(9)}  server ${median(rs.map((r) => (r.serverCpu * 1e6) / rows)).toFixed(2)} µs/row, busy ${(100 * busy).toFixed(0)}%  client ${median(rs.map((r) => (r.clientCpu * 1e6) / rows)).toFixed(2)} µs/row  ${CLASSES.map((c) => `${(100 * share(c)).toFixed(1)}%`).join(' | ')}`);
    const others = new Map<string, number>();
    for (const r of rs) for (const [k, v] of r.otherWaits) others.set(k, (others.get(k) ?? 0) + v);
    if (others.size > 0) console.log(`${''.padEnd(16)} other waits (all rounds): ${[...others].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, v]) => `${k} ×${v}`).join(', ')}`);
  }
  const names = Object.keys(runs);
  const last = names.at(-1)!;
  for (const base of names.slice(0, -1)) {
    const ratio = (f: (r: Run) => number): string => median(runs[last]!.map((r, i) => f(r) / f(runs[base]![i]!))).toFixed(2);
    console.log(`${last} / ${base}: rows/s ${ratio((r) => 1 / r.seconds)}, server CPU ${ratio((r) => r.serverCpu)}, client CPU ${ratio((r) => r.clientCpu)} (medians of the per-round ratios)`);
  }
  await watcher.end();
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
