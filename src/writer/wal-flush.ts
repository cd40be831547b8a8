import type pg from 'pg';
import { sleep } from '../core/retry.js';

/**
 * A chunk's COMMIT need not wait for its WAL to reach disk, as long as the chunk is not
 * counted (nor its buffers let go) before it has. These are the server's answers a
 * worker needs for that: where WAL is inserted and flushed, and a way to flush it now.
 * Functions any role may call; no setting of the server is changed.
 */

/** A COMMIT that need not wait for its WAL flush. */
export interface Deferral {
  /**
   * An earlier commit that did not wait either (a `pg_lsn`): this one then waits after all
   * unless WAL is already flushed past it, so either way that earlier one is on disk when
   * this COMMIT returns.
   */
  readonly after?: string;
}

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
 * Flushes all WAL inserted so far, by any session, and returns once it is on disk.
 *
 * A transaction's COMMIT waits for the flush only if the transaction wrote WAL of its own
 * (`RecordTransactionCommit`: `wrote_xlog`): taking a transaction id is not enough (a
 * `SELECT txid_current()` transaction commits without flushing, measured: the flush
 * position stayed before an earlier commit that had not waited). So the transaction
 * writes one record and commits with `synchronous_commit = local`: the commit flushes WAL
 * up to its own record, past everything inserted before, and waits for no standby (the
 * local flush is what `canDeferFlush` and `commitModeStatement` reason about). The record:
 * an empty transactional logical message (`pg_logical_emit_message`: any role, any
 * wal_level; a logical decoder that shows messages shows one with the prefix `pgsurge`);
 * where that function is revoked, a temporary table made and dropped in the transaction
 * (its catalog rows are WAL-logged; the TEMP privilege, PUBLIC's by default); where that is
 * refused too, it waits for the server to flush that far by itself (`flushedPast`). The
 * way that worked is remembered per session, so a refused one is not tried (and logged by
 * the server) again.
 *
 * Only between transactions: inside one, its COMMIT would commit the caller's work.
 */
export async function flushWal(client: pg.Client): Promise<FlushWay> {
  const status = client.getTransactionStatus();
  if (status !== null && status !== 'I') throw new Error(`internal: flushWal called inside a transaction (status ${status})`);
  for (;;) {
    const way = flushWays.get(client) ?? 'message';
    if (way === 'wait') {
      const target = (await client.query<{ lsn: string }>('SELECT pg_catalog.pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
      await flushedPast(client, target);
      return way;
    }
    const write = way === 'message' ? "SELECT pg_catalog.pg_logical_emit_message(true, 'pgsurge', '')" : 'CREATE TEMPORARY TABLE pgsurge_wal_flush () ON COMMIT DROP';
    try {
      await client.query(`BEGIN; SET LOCAL synchronous_commit TO local; ${write}; COMMIT`);
      return way;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      const code = (error as { code?: string }).code;
      if (code !== INSUFFICIENT_PRIVILEGE && code !== UNDEFINED_FUNCTION) throw error;
      flushWays.set(client, way === 'message' ? 'temp' : 'wait');
    }
  }
}

/** How `flushWal` flushes on a session: by a WAL record it writes (`message`, `temp`), or by waiting (`wait`). */
export type FlushWay = 'message' | 'temp' | 'wait';

const flushWays = new WeakMap<pg.Client, FlushWay>();
const UNDEFINED_FUNCTION = '42883';

/**
 * Waits until the server's WAL flush position reaches `lsn` (a `pg_lsn`). The walwriter
 * flushes the commits that did not wait within about two `wal_writer_delay`s (200 ms by
 * default), and WAL past the last commit when more is written; `timeoutMs` bounds the
 * wait (a server whose flushes stall is an error, not a hang).
 */
export async function flushedPast(client: pg.Client, lsn: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(100, wait * 2)) {
    const r = await client.query<{ done: boolean }>('SELECT pg_catalog.pg_current_wal_flush_lsn() >= $1::pg_lsn AS done', [lsn]);
    if (r.rows[0]?.done === true) return;
    if (Date.now() > deadline) throw new Error(`the server's WAL flush did not reach ${lsn} within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`);
    await sleep(wait);
  }
}
