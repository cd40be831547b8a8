import type pg from 'pg';
import type { ChunkWriter } from '../writer/chunk-writer.js';
import { connect, type Target } from '../cluster/target.js';
import { connectionFailure, LoadError } from '../core/load-error.js';
import { asServerKeeps } from '../core/old-backend.js';

/**
 * Workers are `pgsurge <load id> w<n>` in pg_stat_activity (application_name holds 63
 * bytes), a part's `pgsurge <load id> p<K/N> w<n>`: a part waits for its own earlier
 * run's connections, never for its sibling parts'.
 */
export function workerNamePrefix(loadId: string, part?: string): string {
  const tag = part === undefined ? '' : ` p${part}`;
  return `pgsurge ${loadId}`.slice(0, 56 - tag.length) + tag + ' w';
}

/**
 * A killed run's backends may still be finishing a COMMIT when the same load starts
 * again; reading the ledger before they end could load a chunk twice. Wait for them
 * (they end as soon as they see their client gone), then end any that linger.
 */
export async function waitForEarlierRun(client: pg.Client, namePrefix: string): Promise<void> {
  // A long load id or part tag: the server keeps an application_name's first 63 bytes.
  const prefix = asServerKeeps(namePrefix);
  const alive = async (): Promise<number> =>
    (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE left(application_name, length($1)) = $1 AND pid <> pg_backend_pid()', [prefix])).rows[0]?.n ?? 0;
  for (let waited = 0; (await alive()) > 0; waited += 100) {
    if (waited >= 5000) {
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE left(application_name, length($1)) = $1 AND pid <> pg_backend_pid()', [prefix]);
    }
    if (waited >= 15_000) throw new LoadError('bad-option', 'connections of an earlier run of this load are still open on the server and would not end', { hint: 'end them (pg_terminate_backend) or use another --load-id' });
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs `fn` on the control connection, or on a fresh one if the server restarted under it. */
export async function withLiveClient<T>(control: pg.Client, target: Target, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  try {
    return await fn(control);
  } catch {
    const fresh = await connect(target.config);
    try {
      return await fn(fresh);
    } finally {
      await fresh.end().catch(() => undefined);
    }
  }
}

/** The workers' sessions, `appName(i)` each; one that cannot connect ends the others and fails the load. */
export async function openClients(target: Target, n: number, appName: (i: number) => string): Promise<pg.Client[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, (_, i) => connect(target.config, appName(i))));
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.allSettled(clients.map((c) => c.end()));
    throw connectionFailure(failed.reason, target.description);
  }
  return clients;
}

/** A session of an upsert's key lanes: a worker's, set up by the writer as a worker's is. */
export async function laneSession(target: Target, appName: string, writer: ChunkWriter): Promise<pg.Client> {
  const [client] = await openClients(target, 1, () => appName);
  try {
    await writer.prepare?.(client!);
  } catch (error) {
    await client!.end().catch(() => undefined);
    throw error;
  }
  return client!;
}
