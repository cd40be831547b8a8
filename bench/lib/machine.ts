import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** One line that says what machine a figure came from. */
export function describeMachine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const mem = (os.totalmem() / 1024 ** 3).toFixed(0);
  return `${cpu}, ${os.availableParallelism()} cores, ${mem} GiB, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function psqlPath(): string {
  try {
    return execFileSync('which', ['psql'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('psql is needed for this bench (apt-get install postgresql-client)');
  }
}

/** `--name value` from argv, or the default. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
