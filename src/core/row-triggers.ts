import type pg from 'pg';

/**
 * The BEFORE INSERT row triggers (enabled) on a table and, for a partitioned table, on its
 * partitions. Such a trigger may return NULL for a row: the server then does not store it
 * and counts it nowhere (`COPY n`, INSERT's row count), without an error. Legacy
 * trigger-based partitioning does exactly this (the parent's trigger inserts the row into a
 * child table and returns NULL). The load's count guard then counts rows the server did
 * not store as skipped by the trigger, instead of stopping on a broken chunk.
 */
export async function beforeInsertRowTriggers(client: pg.Client, tableOid: number): Promise<string[]> {
  // tgtype bits (pg_trigger.h): 1 ROW, 2 BEFORE, 4 INSERT, 64 INSTEAD.
  const r = await client.query<{ name: string }>(
    `SELECT format('%s on %s', quote_ident(t.tgname), t.tgrelid::regclass) AS name
       FROM pg_trigger t
      WHERE (t.tgrelid = $1::oid OR t.tgrelid IN (SELECT relid FROM pg_partition_tree($1::oid)))
        AND NOT t.tgisinternal AND t.tgenabled <> 'D'
        AND t.tgtype::int & (1 | 2 | 4 | 64) = (1 | 2 | 4)
      ORDER BY t.tgrelid, t.tgname`,
    [tableOid],
  );
  return r.rows.map((row) => row.name);
}
