import { promises as fs } from 'node:fs';
import path from 'node:path';

/** What one disk (the filesystem under a directory) did in `pgsurge probe`. */
export interface DiskFigures {
  /** The directory probed, and what it stands for (`data directory`, `WAL directory`, `--path`). */
  readonly path: string;
  readonly role: string;
  /** `/proc/mounts`: device and filesystem type, when known. */
  readonly device?: string;
  readonly fsType?: string;
  /** 8 KB writes each followed by fdatasync, per second. */
  readonly fsyncsPerSecond: number;
  /** Who measured it: `pg_test_fsync` (the server's own tool) or pgsurge's loop. */
  readonly fsyncTool: string;
  readonly seqWriteMBps: number;
  readonly seqReadMBps: number;
  /** How the caches were kept out of the figures (O_DIRECT, drop_caches, or not at all). */
  readonly cacheNote: string;
}

/** One backend's `SELECT count(*)` over a generated table. */
export interface ScanFigures {
  readonly tableBytes: number;
  readonly seconds: number;
  readonly mbPerSecond: number;
  /** Whether the table was in shared_buffers / the page cache (a second, warm scan is what is kept). */
  readonly note: string;
}

export interface ProbeFigures {
  readonly format: 'pgsurge-probe';
  readonly createdAt: string;
  readonly disks: readonly DiskFigures[];
  readonly scan?: ScanFigures;
  readonly server?: string;
}

/** Where the managed cluster keeps the latest probe's figures: beside its data, read back by reports. */
export function probeFile(dataDir: string): string {
  return path.join(dataDir, 'pgsurge-probe.json');
}

export async function saveProbe(dataDir: string, figures: ProbeFigures): Promise<string> {
  const file = probeFile(dataDir);
  await fs.writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
  return file;
}

/** The latest probe of this data directory, or undefined when there is none (or it is unreadable). */
export async function readProbe(dataDir: string): Promise<ProbeFigures | undefined> {
  try {
    const parsed = JSON.parse(await fs.readFile(probeFile(dataDir), 'utf8')) as ProbeFigures;
    return parsed.format === 'pgsurge-probe' && Array.isArray(parsed.disks) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
