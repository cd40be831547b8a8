/**
 * Opening the command's target: here in cli/, as it reads the environment (PG*) and says on
 * stderr what the user must know (a connection warning, a cluster left with fsync=off).
 */
import { ManagedCluster, type ManagedClusterOptions } from '../cluster/managed-cluster.js';
import type { Target } from '../cluster/target.js';
import { defaultDataDir } from '../cluster/default-home.js';
import { PG_TARGET_ENV, resolveConnection } from '../core/connection-settings.js';
import { restoreAfterUnsafe } from '../writer/durability/unsafe-marker.js';

export interface TargetOptions extends Omit<ManagedClusterOptions, 'dataDir' | 'env'> {
  /** The managed cluster's data directory; default `defaultDataDir`. */
  readonly dataDir?: string;
  readonly db?: string;
  /** Leave a managed cluster that this command started running (`cluster start`). */
  readonly keepRunning?: boolean;
  /** Extra server settings for a managed cluster this command starts. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** True when `openTarget` would use the managed cluster: no `--db`, no PG* environment. */
export function usesManagedCluster(options: { readonly db?: string }, env: NodeJS.ProcessEnv = process.env): boolean {
  return options.db === undefined && !PG_TARGET_ENV.some((name) => env[name] !== undefined && env[name] !== '');
}

/**
 * `--db` (a URL or libpq key=value string, completed as libpq does from its service file,
 * the PG* environment and ~/.pgpass), else the PG* environment when it names a server,
 * else the managed cluster.
 */
export async function openTarget(options: TargetOptions, env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  if (!usesManagedCluster(options, env)) {
    const { config, description } = resolveConnection(options.db, env, (line) => process.stderr.write(`pgsurge: warning: ${line}\n`));
    return { config, description, managed: undefined, release: async () => {} };
  }
  const cluster = await ManagedCluster.open({ ...options, dataDir: options.dataDir ?? defaultDataDir(env), env });
  const started = await cluster.start(options.settings);
  // Loud on purpose, wherever the cluster is opened: a cluster left with fsync=off by a killed `--durability unsafe` load.
  const restored = await restoreAfterUnsafe(cluster, options.settings);
  if (restored !== undefined) process.stderr.write(`pgsurge: WARNING: ${restored}\n`);
  return {
    config: cluster.connection(),
    description: `managed cluster ${cluster.dataDir} (${cluster.binaries.version}, ${cluster.binaries.source})`,
    managed: cluster,
    release: async () => {
      if (started && !options.keepRunning) await cluster.stop();
    },
  };
}
