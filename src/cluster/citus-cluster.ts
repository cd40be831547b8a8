import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ManagedCluster } from './managed-cluster.js';

/** Debian's PostgreSQL 15, the one scripts/citus-build.sh builds Citus for. */
export const CITUS_PG_BIN = '/usr/lib/postgresql/15/bin';

/** Citus is installed for the PostgreSQL in `pgBin` (`citus.so` in its pkglibdir, `../lib` on Debian). */
export function citusInstalled(pgBin: string = CITUS_PG_BIN): boolean {
  return existsSync(path.join(pgBin, '..', 'lib', 'citus.so'));
}

/** Every node's settings: Citus itself, and prepared transactions for its two-phase commits. */
export const CITUS_NODE_SETTINGS: Readonly<Record<string, string>> = { shared_preload_libraries: 'citus', max_prepared_transactions: '100' };

export interface CitusClusterOptions {
  /** An empty directory for the nodes' data directories. */
  readonly dir: string;
  readonly workers: number;
  readonly pgBin?: string;
  /** The coordinator's port; worker n gets `basePort + n` (each node's socket is named by its port). */
  readonly basePort?: number;
  /** Extra `-c` settings for every node. */
  readonly settings?: Readonly<Record<string, string>>;
  /** The environment the nodes' programs run in (`runAs`). */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * A Citus coordinator and its workers on this machine: managed clusters with
 * `shared_preload_libraries = citus`, each on its own port and socket directory. The nodes
 * reach each other through those sockets (a node's name is its socket directory, which
 * libpq takes as a host), so nothing listens on TCP.
 */
export class CitusCluster {
  private constructor(
    readonly coordinator: ManagedCluster,
    readonly workers: readonly ManagedCluster[],
  ) {}

  get nodes(): readonly ManagedCluster[] {
    return [this.coordinator, ...this.workers];
  }

  static async start(options: CitusClusterOptions): Promise<CitusCluster> {
    const nodes = await openNodes(options);
    const cluster = new CitusCluster(nodes[0]!, nodes.slice(1));
    try {
      // The servers run as `postgres` when we are root: they must reach their data directories.
      await fs.mkdir(options.dir, { recursive: true });
      await fs.chmod(options.dir, 0o755);
      // Each node's own settings; the workers start first so the coordinator can add them.
      await Promise.all(nodes.map((node) => node.start({ ...CITUS_NODE_SETTINGS, ...options.settings })));
      for (const node of nodes) await withClient(node.url(), (c) => c.query('CREATE EXTENSION IF NOT EXISTS citus'));
      await withClient(cluster.coordinator.url(), async (c) => {
        await c.query('SELECT citus_set_coordinator_host($1, $2)', [cluster.coordinator.socketDir, cluster.coordinator.port]);
        for (const w of cluster.workers) await c.query('SELECT citus_add_node($1, $2)', [w.socketDir, w.port]);
      });
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** The coordinator's URL: where loads and queries go. */
  url(database = 'postgres'): string {
    return this.coordinator.url(database);
  }

  /**
   * Stops the nodes of the cluster `start` makes in `options.dir` that are running, whether
   * or not `start` has returned: a test run stopped by a signal while its cluster starts
   * (the nodes that are up by then are stopped; one whose postmaster has not begun yet is not).
   */
  static async stopIn(options: CitusClusterOptions): Promise<void> {
    await stopNodes(await openNodes(options));
  }

  /** Stops every node; a node that will not stop is reported, the others still stop. */
  async stop(): Promise<void> {
    await stopNodes(this.nodes);
  }
}

/** Stops the nodes that run, all at once; a node that will not stop is reported, the others still stop. */
async function stopNodes(nodes: readonly ManagedCluster[]): Promise<void> {
  const results = await Promise.allSettled(nodes.map((n) => n.stop()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** The coordinator (port `basePort`) and the workers (the ports after it), each in its folder of `dir`; nothing created. */
async function openNodes(options: CitusClusterOptions): Promise<ManagedCluster[]> {
  const basePort = options.basePort ?? 5600;
  const pgBin = options.pgBin ?? CITUS_PG_BIN;
  const nodes: ManagedCluster[] = [];
  for (let n = 0; n <= options.workers; n++) {
    nodes.push(await ManagedCluster.open({ dataDir: path.join(options.dir, n === 0 ? 'coordinator' : `worker${n}`), pgBin, port: basePort + n, env: options.env }));
  }
  return nodes;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
