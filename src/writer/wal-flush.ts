import type pg from 'pg';
import type { Deferral } from './chunk-transaction.js';

/**
 * A chunk's COMMIT need not wait for its WAL to reach disk, as long as the chunk is not
 * counted (nor its buffers let go) before it has. These are the server's answers a
 * worker needs for that: where WAL is inserted and flushed, and a way to flush it now.
 * Functions any role may call; no setting of the server is changed.
 */

/**
 * True when this session's commits wait for the WAL flush (synchronous_commit is not off)
 * and no synchronous standby waits for them: then a commit without waiting, confirmed
 * later by the local flush position, is exactly as durable. With a synchronous standby,
 * every chunk waits for it, as the server is configured to.
 */
export async function canDeferFlush(client: pg.Client): Promise<boolean> {
  const r = await client
    .query<{ sc: string; ssn: string }>(
      // The WAL positions are asked for too: a server that revoked them from this role keeps commits that wait.
      "SELECT current_setting('synchronous_commit') AS sc, current_setting('synchronous_standby_names') AS ssn, pg_current_wal_insert_lsn(), pg_current_wal_flush_lsn()",
    )
    .catch((error: unknown) => {
      if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) return undefined;
      throw error;
    });
  const row = r?.rows[0];
  return row !== undefined && row.sc !== 'off' && row.ssn.trim() === '';
}

const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Sets how the open transaction's COMMIT waits, and answers it as `commit_mode`: `off`
 * (returns before its WAL flush) unless an earlier commit that did not wait (`after`) is
 * not flushed yet; then as the session says, so that COMMIT's flush covers the earlier one.
 * The server compares the positions (`pg_lsn`).
 */
export function commitModeStatement(client: pg.Client, deferral: Deferral): string {
  const mode = deferral.after === undefined ? "'off'" : `CASE WHEN pg_current_wal_flush_lsn() >= ${client.escapeLiteral(deferral.after)}::pg_lsn THEN 'off' ELSE current_setting('synchronous_commit') END`;
  return `SELECT set_config('synchronous_commit', ${mode}, true) AS commit_mode`;
}

/** Right after a COMMIT that did not wait: a WAL position (a `pg_lsn`, as text) at or past its commit record. */
export const INSERTED_LSN = 'SELECT pg_current_wal_insert_lsn()::text AS lsn';

/**
 * Flushes all WAL inserted so far, by any session: a transaction that takes a transaction
 * id commits synchronously, and its commit waits for the WAL up to its own record.
 */
export async function flushWal(client: pg.Client): Promise<void> {
  await client.query("BEGIN; SET LOCAL synchronous_commit TO on; SELECT txid_current(); COMMIT");
}
