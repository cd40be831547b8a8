import type pg from 'pg';

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

/** Right after a COMMIT returned: a WAL position (a `pg_lsn`, as text) at or past its commit record. */
export async function insertedLsn(client: pg.Client): Promise<string> {
  const r = await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  return r.rows[0]!.lsn;
}

/** Whether WAL is on disk up to `lsn` (compared by the server, as `pg_lsn`). */
export async function flushedPast(client: pg.Client, lsn: string): Promise<boolean> {
  const r = await client.query<{ past: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS past', [lsn]);
  return r.rows[0]!.past;
}

/**
 * Flushes all WAL inserted so far, by any session: a transaction that takes a transaction
 * id commits synchronously, and its commit waits for the WAL up to its own record.
 */
export async function flushWal(client: pg.Client): Promise<void> {
  await client.query("BEGIN; SET LOCAL synchronous_commit TO on; SELECT txid_current(); COMMIT");
}
