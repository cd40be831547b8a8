import pg from 'pg';
import { ManagedCluster, type ManagedClusterOptions } from './managed-cluster.js';
import { maskConninfo } from '../core/conninfo.js';
import { PG_TARGET_ENV, resolveConnection } from '../core/connection-settings.js';
import { restoreAfterUnsafe } from '../writer/durability/unsafe-marker.js';

/** Where a command's rows go, and how to reach it. */
export interface Target {
  readonly config: pg.ClientConfig;
  /** For messages and reports: the server, with any password removed. */
  readonly description: string;
  /** Set when the target is pgsurge's managed cluster. */
  readonly managed: ManagedCluster | undefined;
  /** Stops the managed cluster if this command started it. */
  release(): Promise<void>;
}

export interface TargetOptions extends ManagedClusterOptions {
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
  const cluster = await ManagedCluster.open(options);
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

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`; also `password=` in key/value strings, malformed or not. */
export function redactUrl(url: string): string {
  return maskConninfo(url);
}

/**
 * `applicationName` tags the connection in pg_stat_activity (workers: `pgsurge <load id> w<n>`);
 * without one, the user's application_name (PGAPPNAME), else `pgsurge`.
 */
export async function connect(config: pg.ClientConfig, applicationName?: string): Promise<pg.Client> {
  const client = new pg.Client({ ...config, application_name: applicationName ?? config.application_name ?? 'pgsurge' });
  // A connection error after connect() surfaces on the next query; do not crash on the event.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    // A refused connection can leave its socket open (until the server's authentication_timeout, 60 s): close it.
    await client.end().catch(() => undefined);
    const e = error as Error;
    // node-postgres's words for psql's "fe_sendauth: no password supplied".
    if (/client password must be a string/.test(e.message ?? '')) e.message = 'no password supplied (the server asks for one)';
    throw error;
  }
  return client;
}
