import pg from 'pg';
import { ManagedCluster, type ManagedClusterOptions } from '../cluster/managed-cluster.js';
import { restoreAfterUnsafe } from '../durability/unsafe-marker.js';

const PG_ENV = ['PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE', 'PGPASSWORD', 'PGSERVICE'] as const;

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
  return options.db === undefined && !PG_ENV.some((name) => env[name] !== undefined && env[name] !== '');
}

/** `--db`, else the PG* environment when any of it is set, else the managed cluster. */
export async function openTarget(options: TargetOptions, env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  if (options.db !== undefined) {
    return { config: { connectionString: options.db }, description: redactUrl(options.db), managed: undefined, release: async () => {} };
  }
  if (PG_ENV.some((name) => env[name] !== undefined && env[name] !== '')) {
    const host = env.PGHOST ?? 'localhost';
    const desc = `${env.PGUSER ?? ''}${env.PGUSER ? '@' : ''}${host}:${env.PGPORT ?? '5432'}/${env.PGDATABASE ?? env.PGUSER ?? ''} (from PG* environment)`;
    return { config: {}, description: desc, managed: undefined, release: async () => {} };
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

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`; also `password=` in key/value strings. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    return u.toString();
  } catch {
    // Not a WHATWG URL (libpq's `postgresql://user:pw@/db?host=/socket` has an empty host): mask by pattern.
    return url.replace(/(password\s*=\s*)('[^']*'|[^\s&]+)/gi, '$1***').replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*):[^@/?#\s]*@/i, '$1:***@');
  }
}

/** `applicationName` tags the connection in pg_stat_activity (workers: `pgsurge <load id> w<n>`). */
export async function connect(config: pg.ClientConfig, applicationName = 'pgsurge'): Promise<pg.Client> {
  const client = new pg.Client({ ...config, application_name: applicationName });
  // A connection error after connect() surfaces on the next query; do not crash on the event.
  client.on('error', () => {});
  await client.connect();
  return client;
}
