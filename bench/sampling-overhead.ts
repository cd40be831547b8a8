/**
 * What sampling costs: the same load (narrow rows, random unique key, COPY) with and
 * without the sampler, interleaved A B A B …, reporting the median of the pairwise
 * throughput ratios (with / without). The budget is ≤ 2 %. The sampler includes
 * the wait looks at the load's backends (pg_stat_activity every --wait-every ms); with
 * --waits-only both sides sample, and only the wait looks differ.
 *
 *   node dist/bench/sampling-overhead.js [--rows 1000000] [--pairs 5] [--every 1s] [--wait-every 25] [--waits-only] [--db <url>] [--pg-bin embedded|system]
 *
 * Without --db it starts a managed cluster in a temp directory and removes it afterwards.
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeNarrowRows } from '../src/decay/narrow-rows.js';
import { connect } from '../src/cluster/target.js';
import { openTarget } from '../src/cli/open-target.js';
import { load } from '../src/load/load.js';
import { parseSampleEvery, describeSampleEvery } from '../src/metrics/sample-every.js';
import { Sampler, SAMPLER_NAME } from '../src/metrics/sampler.js';
import { median } from '../src/metrics/series.js';
import { DEFAULT_WAIT_EVERY_MS } from '../src/metrics/wait-sampler.js';
import { processCpuSeconds } from '../src/metrics/proc-stat.js';
import { allReporters } from '../src/report/progress-line.js';
import { benchFlags } from './lib/bench-cluster.js';

const { args, flag } = benchFlags();
const rows = Number(flag('--rows', '1000000'));
const pairs = Number(flag('--pairs', '5'));
const every = parseSampleEvery(flag('--every', '1s'));
if (typeof every === 'string') throw new Error(`--every: ${every}`);
const db = args.includes('--db') ? flag('--db', '') : undefined;
const waitEveryMs = Number(flag('--wait-every', String(DEFAULT_WAIT_EVERY_MS)));
const waitsOnly = args.includes('--waits-only');

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-bench-sampling-'));
await fs.chmod(dir, 0o755);
const target = await openTarget(db ? { db } : { dataDir: path.join(dir, 'cluster'), pgBin: flag('--pg-bin', 'embedded') });
try {
  const file = path.join(dir, 'narrow.txt');
  await writeNarrowRows({ rows, keys: 'random', seed: 1, out: file });
  const admin = await connect(target.config);
  const version = (await admin.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v.split(' on ')[0];
  process.stdout.write(`command: node dist/bench/sampling-overhead.js ${args.join(' ')}\n`);
  process.stdout.write(`machine: ${os.cpus()[0]?.model.trim()}, ${os.availableParallelism()} cores, Node ${process.version}, ${version}, target ${target.description}\n`);
  process.stdout.write(`load: ${rows.toLocaleString('en-US')} narrow rows, random unique key, COPY, 2 workers, 1 MB chunks; sampling every ${describeSampleEvery(every)}, wait looks every ${waitEveryMs} ms; ${waitsOnly ? 'A = sampler without wait looks, B = with' : 'A = no sampler, B = sampler with wait looks'}\n`);

  const run = async (sampled: boolean): Promise<{ rowsPerSecond: number; samples: number; busyShare: number; looks: number; clientCpu: number; seconds: number; samplerServerCpu: number | undefined; loadServerCpu: number | undefined }> => {
    await admin.query('DROP TABLE IF EXISTS bench_sampling');
    await admin.query('CREATE TABLE bench_sampling (id bigint PRIMARY KEY, n integer, s text)');
    await admin.query('CHECKPOINT');
    const sampler = sampled || waitsOnly ? await Sampler.open(target, { every, waitEveryMs: sampled ? waitEveryMs : 'off' }) : undefined;
    const cpu0 = process.cpuUsage();
    // the sampler's own backends (its samples' connection, and its wait looks' opened when the load starts), read from /proc
    // (a local server): what its queries cost the server, immune to a busy machine; the looks' backend counts from its start
    const samplerPids = async (): Promise<number[]> => (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name IN ('${SAMPLER_NAME}', '${SAMPLER_NAME} waits')`)).rows.map((r) => r.pid);
    const samplerCpu = (pids: number[]): number => pids.reduce((n, pid) => n + (processCpuSeconds(pid) ?? 0), 0);
    const samplerCpu0 = sampler ? samplerCpu(await samplerPids()) : undefined;
    let pidsAtStart: number[] = [];
    const reporter = sampler ? allReporters(sampler, { start: async () => void (pidsAtStart = await samplerPids()) }) : {};
    const summary = await load([{ file, format: 'text', table: 'bench_sampling', schema: undefined }], { workers: 2, chunkBytes: 1 << 20, create: false, truncate: false }, target, reporter);
    const samplerCpu1 = sampler ? samplerCpu(pidsAtStart) : undefined;
    const samples = (await sampler?.stop())?.length ?? 0;
    const cpu = process.cpuUsage(cpu0);
    if (summary.total.rows !== rows) throw new Error(`loaded ${summary.total.rows} rows, expected ${rows}`);
    return { rowsPerSecond: summary.total.rowsPerSecond, samples, busyShare: (sampler?.busyMs ?? 0) / 1000 / summary.total.seconds, looks: sampler?.waitSummary?.looks ?? 0, clientCpu: (cpu.user + cpu.system) / 1e6, seconds: summary.total.seconds,
      samplerServerCpu: samplerCpu0 !== undefined && samplerCpu1 !== undefined ? samplerCpu1 - samplerCpu0 : undefined, loadServerCpu: sampler?.waitSummary?.serverCpuSeconds };
  };

  await run(false); // warm-up: caches, the file in the page cache
  const ratios: number[] = [];
  const busy: number[] = [];
  const cpuRatios: number[] = [];
  const clientExtra: number[] = [];
  const serverShare: number[] = [];
  for (let p = 0; p < pairs; p++) {
    // alternate which goes first, so drift over time does not favour one side
    let a: Awaited<ReturnType<typeof run>>;
    let b: Awaited<ReturnType<typeof run>>;
    if (p % 2 === 0) {
      a = await run(false);
      b = await run(true);
    } else {
      b = await run(true);
      a = await run(false);
    }
    ratios.push(b.rowsPerSecond / a.rowsPerSecond);
    busy.push(b.busyShare);
    cpuRatios.push(b.clientCpu / a.clientCpu);
    clientExtra.push((b.clientCpu - a.clientCpu) / b.seconds);
    // with --waits-only both sides have a sampler: what the wait looks add is the difference of its backend's CPU
    if (b.samplerServerCpu !== undefined && b.loadServerCpu) serverShare.push((b.samplerServerCpu - (a.samplerServerCpu ?? 0)) / b.loadServerCpu);
    process.stdout.write(`pair ${p + 1}: without ${Math.round(a.rowsPerSecond).toLocaleString('en-US')} rows/s, with ${Math.round(b.rowsPerSecond).toLocaleString('en-US')} rows/s (${b.samples} samples, ${b.looks} wait looks, sample queries busy ${(100 * b.busyShare).toFixed(2)}% of the load's time; pgsurge's CPU ${(1000 * a.clientCpu / a.seconds).toFixed(1)} ms/s without, ${(1000 * b.clientCpu / b.seconds).toFixed(1)} with), ratio ${(b.rowsPerSecond / a.rowsPerSecond).toFixed(3)}\n`);
  }
  const m = median(ratios)!;
  process.stdout.write(`median ratio with/without sampling: ${m.toFixed(3)} (cost ${((1 - m) * 100).toFixed(1)}%; ratios ${ratios.map((r) => r.toFixed(3)).join(' ')})\n`);
  process.stdout.write(`pgsurge's own CPU with/without: median ratio ${median(cpuRatios)!.toFixed(3)} (ratios ${cpuRatios.map((r) => r.toFixed(3)).join(' ')})\n`);
  process.stdout.write(`pgsurge's extra CPU with sampling: median ${(1000 * median(clientExtra)!).toFixed(1)} ms per second of load (${(100 * median(clientExtra)!).toFixed(2)}% of a core)\n`);
  if (serverShare.length > 0) process.stdout.write(`the sampler's backend (its /proc CPU) against the load's backends: median ${(100 * median(serverShare)!).toFixed(2)}% (${serverShare.map((r) => (100 * r).toFixed(2) + '%').join(' ')}) — ${waitsOnly ? 'the wait looks\' server-side cost (B − A)' : 'the server-side cost of all sampling (connection, snapshots, looks)'}, measured so that a busy machine does not blur it\n`);
  process.stdout.write(`sample queries: median ${(100 * median(busy)!).toFixed(2)}% of the load's wall time spent waiting for them (an upper bound on the server time they take, on their own connection)\n`);
  await admin.query('DROP TABLE IF EXISTS bench_sampling');
  await admin.end();
} finally {
  await target.release();
  await fs.rm(dir, { recursive: true, force: true });
}
