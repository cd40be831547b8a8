import { readFileSync } from 'node:fs';
import { childrenOf } from './server-cpu.js';

/** Where one backend's time went while it was watched, in seconds, from /proc/<pid>/schedstat and status. */
export interface BackendTime {
  /** Watched for this long (first reading to last). */
  readonly seconds: number;
  /** On a CPU. */
  readonly run: number;
  /** Runnable, waiting for a CPU (other processes on its core: the machine, not the load). */
  readonly queue: number;
  /** Neither: asleep, waiting for its client (ClientRead, the next statement) or for I/O. */
  readonly asleep: number;
  /** Times it went to sleep. */
  readonly sleeps: number;
}

interface Reading {
  readonly at: number;
  readonly run: number;
  readonly queue: number;
  readonly sleeps: number;
}

function read(pid: number): Reading | undefined {
  try {
    const [run, queue] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    const sleeps = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return { at: performance.now(), run: run! / 1e9, queue: queue! / 1e9, sleeps };
  } catch {
    return undefined;
  }
}

/**
 * Follows the backends a server starts while a run goes on (children of its postmaster not
 * there at the start) and says where the time of the busiest one went: a load's COPY
 * backend. Asleep time is the backend waiting (for its client or for I/O), measured by
 * the kernel whatever else the machine runs; run-queue time is the machine's share.
 * Readings every `everyMs` (the last one before the backend ends counts), the children
 * listed again every 5 readings, so the watcher costs its core little.
 */
export function watchBackends(postmaster: number, everyMs = 20): { stop(): BackendTime | undefined } {
  const before = new Set(childrenOf(postmaster));
  const seen = new Map<number, { first: Reading; last: Reading }>();
  let ticks = 0;
  const tick = (): void => {
    if (ticks++ % 5 === 0) {
      for (const pid of childrenOf(postmaster)) {
        if (before.has(pid) || seen.has(pid)) continue;
        const r = read(pid);
        if (r) seen.set(pid, { first: r, last: r });
      }
    }
    for (const [pid, s] of seen) s.last = read(pid) ?? s.last;
  };
  const timer = setInterval(tick, everyMs);
  tick();
  return {
    stop() {
      clearInterval(timer);
      for (const [pid, s] of seen) s.last = read(pid) ?? s.last;
      let best: BackendTime | undefined;
      for (const { first, last } of seen.values()) {
        const seconds = (last.at - first.at) / 1000;
        const run = last.run - first.run;
        const queue = last.queue - first.queue;
        const t = { seconds, run, queue, asleep: Math.max(0, seconds - run - queue), sleeps: last.sleeps - first.sleeps };
        if (best === undefined || t.run > best.run) best = t;
      }
      return best;
    },
  };
}
