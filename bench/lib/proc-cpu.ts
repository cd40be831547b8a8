import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of a process and of its children it has reaped (utime + stime + cutime +
 * cstime in /proc/<pid>/stat): for the postmaster, every backend and parallel worker
 * that has ended; for this process, every command it ran. Contention on a shared
 * machine stretches elapsed time much more than it changes these.
 */
export function cpuSecondsWithChildren(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at the state, field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
  return (utime! + stime! + cutime! + cstime!) / TICKS_PER_SECOND;
}
