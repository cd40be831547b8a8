import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManagedCluster } from '../../src/cluster/managed-cluster.js';

/** A fresh folder for a bench's data, readable by the `postgres` user (the server runs as it when the bench runs as root). */
export async function benchWorkDir(prefix: string): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await fs.chmod(work, 0o755);
  return work;
}

/** A bench's folder and a managed cluster in it (`<work>/data`), not yet started. */
export async function openBenchCluster(prefix: string, pgBin: string): Promise<{ work: string; cluster: ManagedCluster }> {
  const work = await benchWorkDir(prefix);
  return { work, cluster: await ManagedCluster.open({ dataDir: path.join(work, 'data'), pgBin, env: process.env }) };
}

/** `# bench/<name>: <the command line that ran it>`, the first line of every bench's output. */
export function benchCommandLine(name: string): string {
  return `# bench/${name}: ${process.argv.slice(1).map((a) => path.relative(process.cwd(), a) || a).join(' ')}`;
}

/** A bench's `--name value` flags: `flag('--rows', '1000000')` is the value after `--rows`, or the fallback. */
export function benchFlags(args: readonly string[] = process.argv.slice(2)): { args: readonly string[]; flag: (name: string, fallback: string) => string } {
  return {
    args,
    flag: (name, fallback) => {
      const i = args.indexOf(name);
      return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
    },
  };
}
