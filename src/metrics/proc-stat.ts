import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/** /proc/<pid>/stat counts CPU in USER_HZ ticks, 100 a second on Linux. */
export const TICKS_PER_SECOND = 100;

export type ReadFile = (file: string) => string;
const readText: ReadFile = (f) => readFileSync(f, 'utf8');

/** The fields of a /proc/<pid>/stat line after the command name (see procStatFields). */
function statFieldsOf(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime in seconds from the fields, or undefined when they are not numbers. */
function cpuSecondsOf(fields: readonly string[]): number | undefined {
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / TICKS_PER_SECOND : undefined;
}

/**
 * The fields of /proc/<pid>/stat after the command name, which is in parentheses and may
 * hold spaces: index 0 is the state (field 3), 1 the parent pid, 11/12 utime/stime,
 * 13/14 cutime/cstime (the children it has reaped). Throws when the process is gone.
 */
export function procStatFields(pid: number | 'self', read: ReadFile = readText): string[] {
  return statFieldsOf(read(`/proc/${pid}/stat`));
}

/** utime + stime of a process in seconds, or undefined when it is gone (or not on this machine). */
export function processCpuSeconds(pid: number, read: ReadFile = readText): number | undefined {
  try {
    return cpuSecondsOf(procStatFields(pid, read));
  } catch {
    return undefined;
  }
}

/**
 * A process's CPU seconds read again and again from one open /proc/<pid>/stat: one pread
 * a reading (the kernel writes the line afresh at offset 0), where readFileSync opens,
 * stats, reads twice and closes. The descriptor stays bound to that process: once it has
 * ended a read fails (ESRCH), even if its pid is reused, and the reader closes itself.
 */
export class ProcCpuReader {
  private static readonly buffer = Buffer.alloc(1024);
  private fd: number | undefined;

  private constructor(fd: number) {
    this.fd = fd;
  }

  /** A reader for the process, or undefined when it is gone (or not on this machine). */
  static open(pid: number): ProcCpuReader | undefined {
    try {
      return new ProcCpuReader(openSync(`/proc/${pid}/stat`, 'r'));
    } catch {
      return undefined;
    }
  }

  /** Its CPU seconds now, or undefined once it has ended. */
  read(): number | undefined {
    if (this.fd === undefined) return undefined;
    try {
      const n = readSync(this.fd, ProcCpuReader.buffer, 0, ProcCpuReader.buffer.length, 0);
      const seconds = n > 0 ? cpuSecondsOf(statFieldsOf(ProcCpuReader.buffer.toString('latin1', 0, n))) : undefined;
      if (seconds === undefined) this.close();
      return seconds;
    } catch {
      this.close();
      return undefined;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
    this.fd = undefined;
  }
}
