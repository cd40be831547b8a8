/**
 * A/B of the levers of `pgsurge dbt3 load` on one managed cluster and one generated data
 * set, interleaved (arm 1, arm 2, … arm 1, arm 2, …), each arm a variant of the command:
 * extra flags, server settings set for its runs (ALTER SYSTEM + reload, or a restart for
 * settings that need one), reset after them. Per arm: the command's wall time, its builds'
 * part (after the last load), the server's CPU seconds (backends, parallel workers and the
 * walwriter/checkpointer meanwhile) and WAL bytes; ratios are medians of the pairwise
 * ratios against the first arm. The timelines go to --timelines <file> (JSON),
 * one per arm and round, which is what the schedule's cost estimates are calibrated from.
 *
 *   node dist/bench/dbt3-levers.js --scale 0.3 --repeat 3 \
 *     --arms '[{"name":"base"},{"name":"wire binary","args":["--wire","binary"]},{"name":"max_wal_size 8GB","reload":{"max_wal_size":"8GB"}}]'
 *
 * An arm: {"name", "bin"?: another bin/pgsurge.js, "args"?: [flags], "env"?: {VAR: value}, "reload"?: {setting: value}, "restart"?: {setting: value}}.
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { measureCpu } from './lib/server-cpu.js';
import { run } from './lib/run.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

interface Arm {
  readonly name: string;
  /** Another build's bin/pgsurge.js (e.g. a copy of main's), to compare code against code. */
  readonly bin?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly reload?: Readonly<Record<string, string>>;
  readonly restart?: Readonly<Record<string, string>>;
}
interface Measured {
  readonly total: number;
  readonly builds: number;
  readonly load: number;
  readonly serverCpu: number;
  readonly walMB: number;
  /** Slot-seconds no task used, from the first build's start to the end (the schedule's own waste, less stretched by a busy machine than wall times). */
  readonly idleSlots: number;
}

interface Bar {
  readonly id: string;
  readonly kind: string;
  readonly start: number;
  readonly end: number;
  readonly slots: number;
  readonly resized?: readonly { at: number; slots: number }[];
}

/**
 * Slot-seconds left unused from the first build's start to the last task's end: builds
 * take one slot each, loads their workers (one load of all tables: its workers less the
 * ones it gave back, whichever table bars cover the moment).
 */
function idleSlotSeconds(timeline: readonly Bar[], workers: number): number {
  const builds = timeline.filter((t) => t.kind !== 'load');
  const loads = timeline.filter((t) => t.kind === 'load');
  if (builds.length === 0) return 0;
  const from = Math.min(...builds.map((t) => t.start));
  const to = Math.max(...timeline.map((t) => t.end));
  const givenBack = [...new Set(loads.flatMap((t) => (t.resized ?? []).map((r) => r.at)))];
  const points = [...new Set([from, to, ...timeline.flatMap((t) => [t.start, t.end]), ...givenBack])].filter((x) => x >= from && x <= to).sort((a, b) => a - b);
  let idle = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const at = (points[i]! + points[i + 1]!) / 2;
    const covering = (t: Bar): boolean => t.start <= at && at < t.end;
    const loadSlots = Math.min(workers - givenBack.filter((g) => g <= at).length, loads.filter(covering).reduce((n, t) => n + t.slots, 0));
    idle += Math.max(0, workers - loadSlots - builds.filter(covering).length) * (points[i + 1]! - points[i]!);
  }
  return idle;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const scale = Number(arg('scale', '0.3'));
const repeat = Number(arg('repeat', '3'));
const workers = Number(arg('workers', '2'));
const arms = JSON.parse(arg('arms', '[{"name":"base"}]')) as Arm[];
const timelinesFile = arg('timelines', '');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const SCHEMA = 'bench';

const { work, cluster } = await openBenchCluster('pgsurge-bench-dbt3-levers-', pgBin);
try {
  console.log(benchCommandLine('dbt3-levers'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const dataDir = path.join(work, 'tbl');
  const { files } = await generateDbt3({ scale, outDir: dataDir });
  console.log(`# input: dbt3 gen --scale ${scale}: ${files.reduce((a, f) => a + f.rows, 0).toLocaleString('en-US')} rows, ${(files.reduce((a, f) => a + f.bytes, 0) / 1e6).toFixed(0)} MB`);
  let restartedWith = '{}';
  await cluster.start();
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, Unix socket`);
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client(cluster.connection());
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  const results = new Map<string, Measured[]>(arms.map((a) => [a.name, []]));
  const timelines: Record<string, unknown> = {};
  for (let round = 1; round <= repeat; round++) {
    for (const arm of arms) {
      const wanted = JSON.stringify(arm.restart ?? {});
      if (wanted !== restartedWith) {
        await cluster.stop();
        await cluster.start(arm.restart ?? {});
        restartedWith = wanted;
      }
      await admin(async (c) => {
        await c.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
        await c.query(`CREATE SCHEMA ${SCHEMA}`);
        for (const [k, v] of Object.entries(arm.reload ?? {})) await c.query(`ALTER SYSTEM SET ${k} = '${v}'`);
        await c.query('SELECT pg_reload_conf()');
        await c.query('CHECKPOINT');
      });
      await new Promise((r) => setTimeout(r, 300));
      const wal0 = await admin(async (c) => (await c.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]!.l);
      const postmaster = Number((await fs.readFile(path.join(work, 'data', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      const { result, serverCpu } = await measureCpu(postmaster, () =>
        run(process.execPath, [arm.bin ?? pgsurge, 'dbt3', 'load', dataDir, '--db', cluster.url(), '--schema', SCHEMA, '-w', String(workers), '--json', '--sample-every', 'off', ...(arm.args ?? [])], arm.env ?? {}),
        'count',
      );
      const walMB = await admin(async (c) => Number((await c.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS b', [wal0])).rows[0]!.b) / 1e6);
      if (arm.reload !== undefined) {
        await admin(async (c) => {
          for (const k of Object.keys(arm.reload!)) await c.query(`ALTER SYSTEM RESET ${k}`);
          await c.query('SELECT pg_reload_conf()');
        });
      }
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { seconds: number; timeline: Bar[] };
      const loads = summary.timeline.filter((t) => t.kind === 'load');
      const loadsEnd = Math.max(...loads.map((t) => t.end));
      const m: Measured = { total: result.seconds, builds: summary.seconds - loadsEnd, load: loadsEnd - Math.min(...loads.map((t) => t.start)), serverCpu, walMB, idleSlots: idleSlotSeconds(summary.timeline, workers) };
      results.get(arm.name)!.push(m);
      timelines[`${arm.name}, round ${round}`] = summary.timeline.map((t) => ({ id: t.id, kind: t.kind, start: +t.start.toFixed(2), seconds: +(t.end - t.start).toFixed(2), slots: t.slots, ...(t.resized ? { resized: t.resized } : {}) }));
      console.log(`round ${round} ${arm.name.padEnd(24)} total ${m.total.toFixed(2)} s, load ${m.load.toFixed(2)} s, builds ${m.builds.toFixed(2)} s, idle slot-s ${m.idleSlots.toFixed(1)}, server CPU ${m.serverCpu.toFixed(1)} s, WAL ${m.walMB.toFixed(0)} MB; load average ${os.loadavg()[0]!.toFixed(1)}`);
    }
  }
  if (restartedWith !== '{}') {
    await cluster.stop();
    await cluster.start();
  }
  const base = results.get(arms[0]!.name)!;
  const ratio = (ms: Measured[], f: (m: Measured) => number): string => median(ms.map((m, i) => f(base[i]!) / f(m))).toFixed(2);
  console.log(`\n| arm | total (median s) | builds | idle slot-s | server CPU s | WAL MB | ${arms[0]!.name} / arm: total, builds, server CPU (medians of pairs) |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const arm of arms) {
    const ms = results.get(arm.name)!;
    const med = (f: (m: Measured) => number): string => median(ms.map(f)).toFixed(2);
    console.log(`| ${arm.name} | ${med((m) => m.total)} | ${med((m) => m.builds)} | ${med((m) => m.idleSlots)} | ${med((m) => m.serverCpu)} | ${med((m) => m.walMB)} | ${ratio(ms, (m) => m.total)}, ${ratio(ms, (m) => m.builds)}, ${ratio(ms, (m) => m.serverCpu)} |`);
  }
  if (timelinesFile !== '') await fs.writeFile(timelinesFile, JSON.stringify(timelines, null, 1));
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
