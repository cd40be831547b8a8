import type pg from 'pg';
import { LEDGER_SCHEMA } from '../writer/ledger/ledger.js';

/** One part of a load as the ledger and the server's locks show it; `part` is undefined for a whole (unsplit) load's run. */
export interface PartStatus {
  readonly part: string | undefined;
  /** `completed` when its committed chunks cover all the input it owns, else `running` or `stopped`. */
  readonly state: 'completed' | 'running' | 'stopped';
  readonly running: boolean;
  readonly chunks: number;
  readonly rowsLoaded: number;
  readonly rowsRejected: number;
  readonly rowsSkipped: number;
  /** Input bytes whose chunks committed. */
  readonly bytesDone: number;
  /** Input bytes the part owns (its shares of the inputs; for a whole load, the sizes of its files); undefined when not known (stdin, a pipe). */
  readonly bytesTotal: number | undefined;
  readonly lastCommit: Date | undefined;
}

/**
 * Every part of a load: what its ledger rows say (rows, byte ranges, last commit) and
 * whether it is running, which is whether some session holds its advisory lock (the
 * part's pgsurge holds it on its control connection for as long as it runs).
 * Undefined when the ledger has no such load.
 */
export async function loadStatus(client: pg.Client, loadId: string): Promise<PartStatus[] | undefined> {
  const exists = await client.query<{ ok: boolean }>(`SELECT to_regclass('${LEDGER_SCHEMA}.load_parts') IS NOT NULL AS ok`);
  if (exists.rows[0]?.ok !== true) return undefined;
  const known = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${LEDGER_SCHEMA}.load_files WHERE load_id = $1`, [loadId]);
  if ((known.rows[0]?.n ?? 0) === 0) return undefined;
  const r = await client.query<{ part: string | null; chunks: string; loaded: string; rejected: string; skipped: string; bytes_done: string; bytes_total: string | null; last_commit: Date | null; running: boolean }>(
    `WITH parts AS (
       SELECT part FROM ${LEDGER_SCHEMA}.load_parts WHERE load_id = $1
       UNION SELECT part FROM ${LEDGER_SCHEMA}.chunks WHERE load_id = $1
     ),
     -- pg_locks shows an advisory lock's two int4 keys as the oids of their unsigned values.
     held AS (
       SELECT classid, objid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND mode = 'ExclusiveLock'
     )
     SELECT p.part,
            count(c.*)::text AS chunks,
            coalesce(sum(c.rows_loaded), 0)::text AS loaded,
            coalesce(sum(c.rows_rejected), 0)::text AS rejected,
            coalesce(sum(c.rows_skipped), 0)::text AS skipped,
            coalesce(sum(c.byte_end - c.byte_start), 0)::text AS bytes_done,
            CASE WHEN p.part IS NULL
                 -- a whole load owns all of its files: their sizes are the first field of their identities (none for stdin or a pipe)
                 THEN (SELECT CASE WHEN count(*) = count(lf.file_identity) THEN sum(split_part(lf.file_identity, ':', 1)::int8)::text END
                         FROM ${LEDGER_SCHEMA}.load_files lf WHERE lf.load_id = $1)
                 ELSE (SELECT lp.bytes_total::text FROM ${LEDGER_SCHEMA}.load_parts lp WHERE lp.load_id = $1 AND lp.part = p.part)
            END AS bytes_total,
            max(c.committed_at) AS last_commit,
            EXISTS (SELECT 1 FROM held h
                     WHERE (p.part IS NULL AND h.classid = (hashtext('pgsurge')::int8 & 4294967295)::oid AND h.objid = (hashtext($1)::int8 & 4294967295)::oid)
                        OR (p.part IS NOT NULL AND h.classid = (hashtext('pgsurge part')::int8 & 4294967295)::oid AND h.objid = (hashtext($1 || ' ' || p.part)::int8 & 4294967295)::oid)) AS running
       FROM parts p
       LEFT JOIN ${LEDGER_SCHEMA}.chunks c ON c.load_id = $1 AND c.part IS NOT DISTINCT FROM p.part
      GROUP BY p.part
      ORDER BY split_part(p.part, '/', 1)::int NULLS FIRST`,
    [loadId],
  );
  return r.rows.map((row) => ({
    part: row.part ?? undefined,
    state: row.running ? 'running' : row.bytes_total !== null && Number(row.bytes_done) >= Number(row.bytes_total) ? 'completed' : 'stopped',
    running: row.running,
    chunks: Number(row.chunks),
    rowsLoaded: Number(row.loaded),
    rowsRejected: Number(row.rejected),
    rowsSkipped: Number(row.skipped),
    bytesDone: Number(row.bytes_done),
    bytesTotal: row.bytes_total === null ? undefined : Number(row.bytes_total),
    lastCommit: row.last_commit ?? undefined,
  }));
}
