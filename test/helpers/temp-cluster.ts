import net from 'node:net';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ManagedCluster } from '../../src/cluster/managed-cluster.js';

/** The binaries the test runner started its server from, so a test's own cluster is the same version. */
export const TEST_PG_BIN = process.env.PGSURGE_TEST_PG_BIN ?? 'embedded';

/**
 * Whether this is the runner's first phase (the embedded server), which runs every test; the
 * phases on the other installed PostgreSQL versions run again what the version can change.
 */
export const FIRST_SERVER = TEST_PG_BIN === 'embedded';

/**
 * The `skip` option of a test that runs in the first phase only: what it proves happens in
 * pgsurge (messages, refusals, files, its own bookkeeping) and reaches every version as the
 * same statements, which the file's other tests already run on each version. `why` says so.
 */
export function firstServerOnly(why: string): string | false {
  return FIRST_SERVER ? false : `runs on the first server only: ${why}`;
}

/**
 * A directory for a test's own clusters: readable by the server's account (as root the
 * server runs as `postgres`, which must be able to reach the data and WAL directories).
 */
export async function clusterTempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await fs.chmod(dir, 0o755);
  return dir;
}

export async function openCluster(dataDir: string, walDir?: string): Promise<ManagedCluster> {
  return ManagedCluster.open({ dataDir, pgBin: TEST_PG_BIN, env: process.env, ...(walDir ? { walDir } : {}) });
}

export async function clusterClient(cluster: ManagedCluster): Promise<pg.Client> {
  const client = new pg.Client(cluster.connection());
  await client.connect();
  return client;
}

/** Runs `fn` with a client on the cluster, closing it after. */
export async function withClient<T>(cluster: ManagedCluster, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = await clusterClient(cluster);
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Stops the cluster (if running) and removes its directory, whatever happened. */
export async function removeClusterDir(dir: string, ...clusters: ManagedCluster[]): Promise<void> {
  for (const c of clusters) await c.stop().catch(() => undefined);
  await fs.rm(dir, { recursive: true, force: true });
}

/** A TCP port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
