import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ManagedCluster } from '../../cluster/managed-cluster.js';

/**
 * `--durability unsafe` runs the managed cluster with fsync=off. If pgsurge dies before
 * it restores the settings (kill -9, a second Ctrl-C), the cluster would stay that way;
 * so the settings to restore are written to a marker in the data directory first, removed
 * once they are back, and the next command that opens the managed cluster restores them.
 */
const MARKER = 'pgsurge-unsafe.json';

interface Marker {
  /** The pgsurge that set the unsafe settings: while it runs, its load is still going. */
  readonly pid: number;
  /** The `-c` settings the cluster ran with before. */
  readonly restore: Record<string, string>;
}

export async function markUnsafe(cluster: ManagedCluster, restore: Record<string, string>): Promise<void> {
  const marker: Marker = { pid: process.pid, restore };
  await fs.writeFile(path.join(cluster.dataDir, MARKER), JSON.stringify(marker));
}

export async function clearUnsafe(cluster: ManagedCluster): Promise<void> {
  await fs.rm(path.join(cluster.dataDir, MARKER), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A marker left by a pgsurge that is gone: restart the cluster with the settings it had
 * before (and `extra`, this command's own), and say so. Returns the warning, or undefined.
 */
export async function restoreAfterUnsafe(cluster: ManagedCluster, extra: Readonly<Record<string, string>> = {}): Promise<string | undefined> {
  let marker: Marker;
  try {
    marker = JSON.parse(await fs.readFile(path.join(cluster.dataDir, MARKER), 'utf8')) as Marker;
  } catch {
    return undefined;
  }
  if (marker.pid !== process.pid && alive(marker.pid)) return undefined; // its load is still running
  await cluster.stop();
  await cluster.start({ ...marker.restore, ...extra });
  await clearUnsafe(cluster);
  return `the managed cluster ${cluster.dataDir} was left with --durability unsafe's settings (fsync=off, full_page_writes=off) by a pgsurge that stopped before restoring them (pid ${marker.pid}); restarted it with its normal settings. A crash while it ran so could have corrupted it: if in doubt, remove its data directory and load again`;
}
