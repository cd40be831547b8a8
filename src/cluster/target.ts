import pg from 'pg';
import type { ManagedCluster } from './managed-cluster.js';
import { maskConninfo } from '../core/conninfo.js';

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
