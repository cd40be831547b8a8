/**
 * What one wait look costs pgsurge's CPU: the real Sampler (1 s samples) on a real server,
 * watching backends named like a load's workers, for a few seconds with its wait looks on
 * (B) and off (A), interleaved A B / B A; pgsurge's CPU from process.cpuUsage(). The extra
 * CPU of B over A divided by B's looks is the cost of a look, wake-up included (the
 * process is otherwise idle: the worst case, a load keeps it awake anyway). The watched
 * backends sit in one long pg_sleep each (active, a wait event; their /proc files are read
 * as a load's are), so neither they nor pgsurge do any other work that could blur it.
 *
 *   node dist/bench/wait-look-cpu.js [--seconds 5] [--rounds 4] [--backends 2] [--wait-every 50] [--db <url>] [--pg-bin embedded|system]
 *
 * Without --db it starts a managed cluster in a temp directory and removes it afterwards.
 */
import './lib/usage.js';
import os from 'node:os';
import path from 'node:path';
import { connect } from '../src/cluster/target.js';
import { openTarget } from '../src/cli/open-target.js';
import { Sampler } from '../src/metrics/sampler.js';
import { median } from '../src/metrics/series.js';
import { DEFAULT_WAIT_EVERY_MS } from '../src/metrics/wait-sampler.js';
import { processCpuSeconds } from '../src/metrics/proc-stat.js';
import { benchCommandLine, benchFlags, benchWorkDir } from './lib/bench-cluster.js';
import { promises as fs } from 'node:fs';

const { args, flag } = benchFlags();
const seconds = Number(flag('--seconds', '5'));
const rounds = Number(flag('--rounds', '4'));
const backends = Number(flag('--backends', '2'));
const waitEveryArg = flag('--wait-every', '');
const waitEveryMs = waitEveryArg === '' ? undefined : Number(waitEveryArg);
const db = args.includes('--db') ? flag('--db', '') : undefined;

const work = await benchWorkDir('pgsurge-bench-look-');
const target = await openTarget(db ? { db } : { dataDir: path.join(work, 'cluster'), pgBin: flag('--pg-bin', 'embedded') });
const prefix = 'pgsurge lookbench w';
try {
  const admin = await connect(target.config);
  const version = (await admin.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v.split(' on ')[0];
  process.stdout.write(`${benchCommandLine('wait-look-cpu')}\n`);
  process.stdout.write(`machine: ${os.cpus()[0]?.model.trim()}, ${os.availableParallelism()} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${version}\n`);
  await admin.query('DROP TABLE IF EXISTS bench_look');
  await admin.query('CREATE TABLE bench_look (id bigint)');
  // the watched backends: each in one long statement until the end
  const watched = await Promise.all(Array.from({ length: backends }, async (_, n) => {
    const c = await connect(target.config);
    await c.query(`SET application_name = '${prefix}${n + 1}'`);
    return c;
  }));
  const sleeps = watched.map((c) => c.query('SELECT pg_sleep(36000)').catch(() => undefined));

  // the sampler's backends (its samples' connection, and the looks' where it has one of its own): what the looks cost the server
  const samplerCpu = async (): Promise<number> =>
    (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'pgsurge sampler%'")).rows.reduce((n, r) => n + (processCpuSeconds(r.pid) ?? 0), 0);
  const run = async (looks: boolean): Promise<{ cpu: number; looks: number; wall: number; server: number }> => {
    const sampler = await Sampler.open(target, { every: { ms: 1000 }, waitEveryMs: looks ? (waitEveryMs ?? DEFAULT_WAIT_EVERY_MS) : 'off' });
    await sampler.start({ inputs: [{ table: 'bench_look', schema: undefined }], workerPrefix: prefix });
    const s0 = await samplerCpu();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c = process.cpuUsage(c0);
    const wall = (performance.now() - t0) / 1000;
    const server = (await samplerCpu()) - s0;
    await sampler.stop();
    return { cpu: (c.user + c.system) / 1e6, looks: sampler.waitSummary?.looks ?? 0, wall, server };
  };

  await run(true); // warm-up
  const perLook: number[] = [];
  const perSecond: number[] = [];
  const serverPerLook: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const [a, b] = r % 2 === 0 ? [await run(false), await run(true)] : (([y, x]) => [x, y])([await run(true), await run(false)]);
    const extra = b!.cpu / b!.wall - a!.cpu / a!.wall;
    perSecond.push(extra);
    perLook.push((extra * b!.wall) / Math.max(1, b!.looks));
    serverPerLook.push((b!.server - (a!.server * b!.wall) / a!.wall) / Math.max(1, b!.looks));
    process.stdout.write(`round ${r + 1}: pgsurge CPU without looks ${(1000 * a!.cpu / a!.wall).toFixed(1)} ms/s, with ${(1000 * b!.cpu / b!.wall).toFixed(1)} ms/s (${b!.looks} looks in ${b!.wall.toFixed(1)} s): ${(1000 * perLook.at(-1)!).toFixed(3)} ms a look; the sampler's backends ${(1000 * b!.server / b!.wall).toFixed(1)} ms/s with, ${(1000 * a!.server / a!.wall).toFixed(1)} without\n`);
  }
  process.stdout.write(`wait looks every ${waitEveryMs ?? DEFAULT_WAIT_EVERY_MS} ms at ${backends} busy backends: pgsurge CPU median ${(1000 * median(perLook)!).toFixed(3)} ms a look, ${(100 * median(perSecond)!).toFixed(2)}% of a core; the server (its sampler backends, /proc in 10 ms ticks) ${(1000 * median(serverPerLook)!).toFixed(3)} ms a look\n`);
  await admin.query(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '${prefix}%'`);
  await Promise.all(sleeps);
  await Promise.all(watched.map((c) => c.end()));
  await admin.query('DROP TABLE IF EXISTS bench_look');
  await admin.end();
} finally {
  await target.release();
  await fs.rm(work, { recursive: true, force: true });
}
