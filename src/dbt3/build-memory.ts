import { promises as fs } from 'node:fs';
import os from 'node:os';
import type pg from 'pg';
import type { Target } from '../cluster/target.js';

/**
 * How much memory and how many parallel workers each key/index build session gets:
 * `maintenance_work_mem` (CREATE INDEX, ADD PRIMARY KEY sort in it), `work_mem` (the
 * foreign key's validating join hashes in it, times hash_mem_multiplier) and
 * `max_parallel_maintenance_workers`, all set per session, never on the server.
 */

/** What the server's settings say (pg_settings), in kB and counts. */
export interface ServerBuildSettings {
  readonly maintenanceWorkMemKb: number;
  readonly workMemKb: number;
  readonly sharedBuffersKb: number;
  readonly effectiveCacheSizeKb: number;
  readonly hashMemMultiplier: number;
  readonly maxWorkerProcesses: number;
  readonly maxParallelWorkers: number;
  readonly maxParallelMaintenanceWorkers: number;
}

/** What this machine has, when the server runs on it (undefined fields: unknown, a remote server). */
export interface MachineMemory {
  readonly memAvailableBytes?: number;
  readonly cores?: number;
}

export interface BuildSizingInput {
  readonly server: ServerBuildSettings;
  readonly machine: MachineMemory;
  /** Build sessions that may run at once (the worker budget). */
  readonly buildsAtOnce: number;
  /** `--build-memory`: the memory all build sessions together may use. */
  readonly buildMemoryBytes?: number;
}

export interface SizedSetting {
  readonly name: 'maintenance_work_mem' | 'work_mem' | 'max_parallel_maintenance_workers';
  /** The value the build sessions run with (kB for memory, a count for workers). */
  readonly value: number;
  /** False: the server's own value is kept (it is already higher, or pgsurge has nothing better). */
  readonly set: boolean;
  readonly why: string;
}

export interface BuildSizing {
  readonly buildsAtOnce: number;
  /**
   * The parallel workers of the schedule's last sort (a CREATE INDEX or primary key that
   * starts with nothing else left to start): the cores the other builds leave idle as they
   * end. Undefined: it runs as every build does.
   */
  readonly lastBuild?: { readonly maxParallelMaintenanceWorkers: number; readonly why: string };
  /** The memory all build sessions together may use, in bytes, and where that figure came from. */
  readonly budgetBytes: number;
  readonly budgetFrom: string;
  readonly settings: readonly SizedSetting[];
}

/** More than this per build barely speeds a sort up (measured: 1GB took SF 1's builds from 54 s to 35 s). */
export const MAX_BUILD_MEMORY_KB = 1024 * 1024;

const KB = 1024;

/** `64MB`-style, for messages and the summary. */
export function formatKb(kb: number): string {
  if (kb >= 1024 * 1024 && kb % (1024 * 1024) === 0) return `${kb / (1024 * 1024)}GB`;
  if (kb >= 1024) return `${Math.floor(kb / 1024)}MB`;
  return `${kb}kB`;
}

/**
 * The build sessions' settings. The memory all builds may use is `--build-memory`, else
 * half of the memory this machine has available (the server's other sessions, the
 * loads and the OS cache need the rest), else, for a remote server, the larger of
 * shared_buffers and a quarter of effective_cache_size (what its administrator said the
 * machine has). Each build gets its share, at most 1GB; work_mem is a fraction of that,
 * so a hash join (work_mem × hash_mem_multiplier) stays under it. A server setting
 * already higher is kept. Parallel workers per build: what the cores allow with the other
 * builds running, and never more than max_parallel_workers / max_worker_processes allow.
 */
export function sizeBuildSessions(input: BuildSizingInput): BuildSizing {
  const { server, machine } = input;
  const builds = Math.max(1, input.buildsAtOnce);
  const [budgetBytes, budgetFrom] =
    input.buildMemoryBytes !== undefined
      ? [input.buildMemoryBytes, '--build-memory']
      : machine.memAvailableBytes !== undefined
        ? [Math.floor(machine.memAvailableBytes / 2), 'half of MemAvailable (/proc/meminfo)']
        : [Math.max(server.sharedBuffersKb, Math.floor(server.effectiveCacheSizeKb / 4)) * KB, 'the larger of shared_buffers and effective_cache_size / 4'];
  const share = Math.min(MAX_BUILD_MEMORY_KB, Math.floor(budgetBytes / KB / builds));
  const memory = (name: 'maintenance_work_mem' | 'work_mem', current: number, wanted: number, why: string): SizedSetting =>
    current >= wanted ? { name, value: current, set: false, why: `the server's ${formatKb(current)} is at least pgsurge's ${formatKb(wanted)}` } : { name, value: wanted, set: true, why };
  const mwm = memory('maintenance_work_mem', server.maintenanceWorkMemKb, share, `${budgetFrom} (${formatKb(Math.floor(budgetBytes / KB))}) / ${builds} build${builds === 1 ? '' : 's'} at once, at most ${formatKb(MAX_BUILD_MEMORY_KB)}`);
  const multiplier = Math.max(1, server.hashMemMultiplier);
  const wm = memory('work_mem', server.workMemKb, Math.max(64, Math.floor(mwm.value / (2 * multiplier))), `maintenance_work_mem / (2 × hash_mem_multiplier ${multiplier})`);
  const serverCap = Math.min(server.maxParallelWorkers, Math.max(0, server.maxWorkerProcesses - 1));
  const perBuildCap = Math.floor(serverCap / builds);
  const parallel: SizedSetting =
    machine.cores !== undefined
      ? {
          name: 'max_parallel_maintenance_workers',
          value: Math.max(0, Math.min(perBuildCap, Math.floor(machine.cores / builds) - 1)),
          set: true,
          why: `${machine.cores} cores / ${builds} build${builds === 1 ? '' : 's'} at once, less the build's own backend; max_parallel_workers ${server.maxParallelWorkers}, max_worker_processes ${server.maxWorkerProcesses}`,
        }
      : server.maxParallelMaintenanceWorkers <= perBuildCap
        ? { name: 'max_parallel_maintenance_workers', value: server.maxParallelMaintenanceWorkers, set: false, why: "the server's setting (its cores are not known here)" }
        : { name: 'max_parallel_maintenance_workers', value: perBuildCap, set: true, why: `max_parallel_workers ${server.maxParallelWorkers} / ${builds} builds at once` };
  // The last sort: the other builds end while it runs, and their cores would idle; its leader and workers share them.
  const lastWorkers = machine.cores !== undefined ? Math.max(0, Math.min(serverCap, machine.cores - 1)) : 0;
  const lastBuild =
    lastWorkers > parallel.value
      ? { maxParallelMaintenanceWorkers: lastWorkers, why: `the last sort to start has ${machine.cores} cores to itself once the builds beside it end, less its own backend; max_parallel_workers ${server.maxParallelWorkers}, max_worker_processes ${server.maxWorkerProcesses}` }
      : undefined;
  return { buildsAtOnce: builds, budgetBytes, budgetFrom, settings: [mwm, wm, parallel], ...(lastBuild ? { lastBuild } : {}) };
}

/**
 * The statements around the last sort (`BuildSizing.lastBuild`): its parallel workers,
 * and the session's own value back after it. None when it runs as every build does.
 */
export function lastBuildSql(sizing: BuildSizing): { before: string; after: string } | undefined {
  if (sizing.lastBuild === undefined) return undefined;
  const own = sizing.settings.find((s) => s.name === 'max_parallel_maintenance_workers');
  return {
    before: `SET max_parallel_maintenance_workers = ${sizing.lastBuild.maxParallelMaintenanceWorkers}`,
    after: own?.set === true ? `SET max_parallel_maintenance_workers = ${own.value}` : 'RESET max_parallel_maintenance_workers',
  };
}

/** The SET statements a build session runs first. */
export function buildSessionSql(sizing: BuildSizing): string[] {
  return sizing.settings.filter((s) => s.set).map((s) => `SET ${s.name} = ${s.name === 'max_parallel_maintenance_workers' ? String(s.value) : `'${s.value}kB'`}`);
}

const SETTING_NAMES = ['maintenance_work_mem', 'work_mem', 'shared_buffers', 'effective_cache_size', 'hash_mem_multiplier', 'max_worker_processes', 'max_parallel_workers', 'max_parallel_maintenance_workers'];

/** pg_settings' values, memory in kB whatever the unit (shared_buffers is in 8kB pages). */
export async function readServerBuildSettings(client: pg.Client): Promise<ServerBuildSettings> {
  const r = await client.query<{ name: string; setting: string; unit: string | null }>('SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)', [SETTING_NAMES]);
  const byName = new Map(r.rows.map((row) => [row.name, row]));
  const kb = (name: string, fallback: number): number => {
    const row = byName.get(name);
    if (!row) return fallback;
    const unit = row.unit ?? 'kB';
    const m = /^(\d+)?\s*(kB|MB|GB|B)$/.exec(unit);
    const factor = m ? Number(m[1] ?? 1) * ({ B: 1 / 1024, kB: 1, MB: 1024, GB: 1024 * 1024 } as Record<string, number>)[m[2]!]! : 1;
    return Math.floor(Number(row.setting) * factor);
  };
  const num = (name: string, fallback: number): number => (byName.has(name) ? Number(byName.get(name)!.setting) : fallback);
  return {
    maintenanceWorkMemKb: kb('maintenance_work_mem', 65536),
    workMemKb: kb('work_mem', 4096),
    sharedBuffersKb: kb('shared_buffers', 131072),
    effectiveCacheSizeKb: kb('effective_cache_size', 4 * 1024 * 1024),
    // PostgreSQL 12 and older have no hash_mem_multiplier: a hash used work_mem alone.
    hashMemMultiplier: num('hash_mem_multiplier', 1),
    maxWorkerProcesses: num('max_worker_processes', 8),
    maxParallelWorkers: num('max_parallel_workers', 8),
    maxParallelMaintenanceWorkers: num('max_parallel_maintenance_workers', 2),
  };
}

/**
 * A server on this machine: the managed cluster, a Unix socket, or localhost. The target's
 * config names its host (the CLI resolves PGHOST and the rest into it, `resolveConnection`);
 * one that names none is libpq's default, a local socket.
 */
export function isLocalServer(target: Target): boolean {
  if (target.managed !== undefined) return true;
  const cs = target.config.connectionString;
  // `postgresql://user@/db?host=/socket/dir` is no WHATWG URL (an empty host): read the two places a host can be.
  const host = cs !== undefined ? hostOfUrl(cs) : (target.config.host as string | undefined);
  if (host === undefined || host === '') return true;
  return host.startsWith('/') || ['localhost', '127.0.0.1', '::1', '[::1]'].includes(host);
}

/** The host of a connection URL: `?host=` if given (a socket directory), else the authority's host; '' for none. */
export function hostOfUrl(url: string): string {
  const param = /[?&]host=([^&]*)/.exec(url);
  if (param) return decodeURIComponent(param[1]!);
  const m = /^[a-z]+:\/\/(?:[^@/?]*@)?(\[[^\]]*\]|[^:/?]*)/i.exec(url);
  return m ? decodeURIComponent(m[1]!) : '';
}

/** MemAvailable and the cores, for a server on this machine. */
export async function localMachineMemory(): Promise<MachineMemory> {
  const meminfo = await fs.readFile('/proc/meminfo', 'utf8').catch(() => undefined);
  const m = meminfo === undefined ? null : /^MemAvailable:\s+(\d+) kB/m.exec(meminfo);
  return { memAvailableBytes: m ? Number(m[1]) * 1024 : os.freemem(), cores: os.availableParallelism() };
}
