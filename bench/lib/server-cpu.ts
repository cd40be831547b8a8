/**
 * CPU seconds by process, from /proc, for benches that say where a load's CPU went: the
 * server's (the postmaster's reaped children: the load's backends, once they end) and the
 * client's (this process's reaped children: pgsurge or psql, once they exit). Contention
 * on a busy machine changes wall times far more than these.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { processCpuSeconds, procStatFields as statFields, TICKS_PER_SECOND } from '../../src/metrics/proc-stat.js';

/** CPU seconds of `pid` itself (utime + stime), 0 once it is gone. */
function ownCpu(pid: number): number {
  return processCpuSeconds(pid) ?? 0;
}

/** CPU seconds of the children `pid` has reaped (cutime + cstime). */
export function reapedChildrenCpu(pid: number | 'self'): number {
  const f = statFields(pid);
  return (Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds of a process and of the children it has reaped: for the postmaster, every
 * backend and parallel worker that has ended; for this process, every command it ran.
 */
export function cpuSecondsWithChildren(pid: number | 'self'): number {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND;
}

export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/**
 * Waits until every process the postmaster started since `before` was taken has ended and
 * been reaped, so their CPU is in the postmaster's reaped children (a backend leaves
 * pg_stat_activity before it exits, so that view is not enough).
 */
async function settle(postmaster: number, before: ReadonlySet<number>, lingering: 'throw' | 'count'): Promise<number[]> {
  for (let i = 0; i < 500; i++) {
    const started = childrenOf(postmaster).filter((pid) => !before.has(pid));
    if (started.length === 0) return [];
    if (i === 499 && lingering === 'count') return started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('bench: the load\'s backends did not end within 10 s');
}

/**
 * Server and client CPU seconds spent while `fn` runs (`fn` must wait for its children to
 * exit). The server's: the backends that ended (the postmaster's reaped children) plus what
 * its long-lived processes spent meanwhile (walwriter, checkpointer, bgwriter: WAL a
 * backend leaves to the walwriter is still the load's), so that loads that commit often
 * (the backend writes its WAL at COMMIT) and one long COPY (the walwriter writes much of
 * it) are counted alike.
 */
export async function measureCpu<T>(postmaster: number, fn: () => Promise<T>, lingering: 'throw' | 'count' = 'throw'): Promise<{ result: T; serverCpu: number; clientCpu: number }> {
  const before = new Set(childrenOf(postmaster));
  const live0 = new Map([...before].map((pid) => [pid, ownCpu(pid)]));
  const s0 = reapedChildrenCpu(postmaster);
  const c0 = reapedChildrenCpu('self');
  const result = await fn();
  // `count`: a process started meanwhile that is still there 10 s after (an autovacuum worker vacuuming the loaded lineitem) counts with what it spent so far.
  let live = (await settle(postmaster, before, lingering)).reduce((a, pid) => a + ownCpu(pid), 0);
  for (const [pid, cpu] of live0) live += Math.max(0, ownCpu(pid) - cpu);
  return { result, serverCpu: reapedChildrenCpu(postmaster) - s0 + live, clientCpu: reapedChildrenCpu('self') - c0 };
}

/**
 * CPU seconds of several servers' processes while `fn` runs (a Citus coordinator and its
 * workers), one figure per postmaster, and the client's. Unlike measureCpu, a process a
 * server started meanwhile that is still there after a short wait (a worker's backend
 * behind a connection the coordinator caches, Citus's maintenance daemon) is counted live
 * rather than waited for.
 */
export async function measureNodesCpu<T>(postmasters: readonly number[], fn: () => Promise<T>): Promise<{ result: T; serverCpu: number[]; clientCpu: number }> {
  const before = postmasters.map((pm) => new Map(childrenOf(pm).map((pid) => [pid, ownCpu(pid)])));
  const reaped0 = postmasters.map((pm) => reapedChildrenCpu(pm));
  const c0 = reapedChildrenCpu('self');
  const result = await fn();
  for (let i = 0; i < 100; i++) {
    if (postmasters.every((pm, n) => childrenOf(pm).every((pid) => before[n]!.has(pid)))) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const serverCpu = postmasters.map((pm, n) => {
    let live = 0;
    for (const pid of childrenOf(pm)) live += Math.max(0, ownCpu(pid) - (before[n]!.get(pid) ?? 0));
    // A process of `before` that ended meanwhile: its CPU since then is in the reaped
    // figure, which also holds what it spent before; take that part back out.
    for (const [pid, cpu] of before[n]!) if (!childrenAlive(pid)) live -= cpu;
    return reapedChildrenCpu(pm) - reaped0[n]! + live;
  });
  return { result, serverCpu, clientCpu: reapedChildrenCpu('self') - c0 };
}

function childrenAlive(pid: number): boolean {
  try {
    statFields(pid);
    return true;
  } catch {
    return false;
  }
}

/** The postmaster's children, for pinning them with it. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (Number(statFields(Number(name))[1]) === pid) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** Pins the postmaster and every process it has started to `cpus` (`0`, `0,1`); new backends inherit it. */
export function pinServer(postmaster: number, cpus: string): void {
  for (const pid of [postmaster, ...childrenOf(postmaster)]) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // a child that ended meanwhile
    }
  }
}
