import assert from 'node:assert/strict';
import type pg from 'pg';

/** The ledger's ranges for a load tile the file: every byte once, no overlap, no gap. */
export async function assertLedgerTiles(client: pg.Client, table: string, loadId: string, size: number): Promise<void> {
  // (Rows of earlier test runs against the same server name a dropped table's oid.)
  const r = await client.query<{ s: string; e: string }>(
    `SELECT byte_start AS s, byte_end AS e FROM pgsurge.chunks WHERE load_id = $1 AND table_oid = $2::regclass ORDER BY byte_start`,
    [loadId, table],
  );
  let at = 0;
  for (const row of r.rows) {
    assert.equal(Number(row.s), at, `ledger of ${loadId}: a gap or an overlap at byte ${at}`);
    at = Number(row.e);
  }
  assert.equal(at, size, `ledger of ${loadId} ends at ${at}, the file at ${size}`);
}

/**
 * In one snapshot, the table holds exactly the rows the ledger says were committed (a
 * killed loader's backend may still be finishing a COMMIT: one statement sees both or neither).
 */
export async function assertNoHalfChunk(client: pg.Client, table: string, loadId: string): Promise<number> {
  const r = await client.query(`SELECT (SELECT count(*) FROM ${table})::int AS t, (SELECT coalesce(sum(rows_loaded), 0) FROM pgsurge.chunks WHERE load_id = $1 AND table_oid = $2::regclass)::int AS l`, [loadId, table]);
  assert.equal(r.rows[0].t, r.rows[0].l, 'the ledger counts exactly the rows in the table: no chunk half in');
  return r.rows[0].t as number;
}
