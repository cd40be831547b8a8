import { readFileSync } from 'node:fs';

/** /proc/<pid>/stat counts CPU in USER_HZ ticks, 100 a second on Linux. */
export const TICKS_PER_SECOND = 100;

export type ReadFile = (file: string) => string;
const readText: ReadFile = (f) => readFileSync(f, 'utf8');

/**
 * The fields of /proc/<pid>/stat after the command name, which is in parentheses and may
 * hold spaces: index 0 is the state (field 3), 1 the parent pid, 11/12 utime/stime,
 * 13/14 cutime/cstime (the children it has reaped). Throws when the process is gone.
 */
export function procStatFields(pid: number | 'self', read: ReadFile = readText): string[] {
  const stat = read(`/proc/${pid}/stat`);
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a process in seconds, or undefined when it is gone (or not on this machine). */
export function processCpuSeconds(pid: number, read: ReadFile = readText): number | undefined {
  try {
    const fields = procStatFields(pid, read);
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}
