import type pg from 'pg';
import { checkpointSql, readServerSnapshot, type ServerSnapshot } from './server-snapshot.js';

/**
 * On a Citus coordinator the loaded tables' rows are in shards on the worker nodes: the
 * coordinator's own table is an empty shell and its WAL is only the ledger's. So sizes
 * come from Citus's functions (summed over the shards), and WAL and checkpoints are
 * summed over every node (`run_command_on_all_nodes`, the coordinator included).
 */
export interface CitusNodeCounters {
  readonly walPosition: number;
  readonly checkpointsTimed: number;
  readonly checkpointsRequested: number;
}

/** Reads one snapshot of the server for the sampler: plain PostgreSQL, or a Citus cluster through its coordinator. */
export type SnapshotReader = (client: pg.Client, tables: readonly string[]) => Promise<ServerSnapshot>;

/** The reader for this server: Citus's when the extension is there, else the plain one. Asked once per sampler. */
export async function snapshotReaderFor(client: pg.Client, versionNum: number): Promise<SnapshotReader> {
  const r = await client.query<{ ok: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS ok");
  if (r.rows[0]?.ok !== true) return (c, tables) => readServerSnapshot(c, tables, versionNum);
  return (c, tables) => readCitusSnapshot(c, tables, versionNum);
}

/**
 * Sizes of Citus tables from `citus_table_size` (heap, TOAST, FSM, VM over all shards) and
 * `citus_total_relation_size` (with indexes); a table Citus does not manage is measured
 * as on any server. WAL and checkpoints: the sums over every node. Buffer counters stay
 * the coordinator's (Citus has no cluster-wide view of them).
 */
export async function readCitusSnapshot(client: pg.Client, tables: readonly string[], versionNum: number): Promise<ServerSnapshot> {
  const [plain, sizes, nodes] = await Promise.all([
    readServerSnapshot(client, tables, versionNum),
    client.query<{ heap: string; total: string; plain_heap: string; plain_idx: string }>(
      `SELECT coalesce(sum(citus_table_size(t.oid)) FILTER (WHERE p.logicalrelid IS NOT NULL), 0)::text AS heap,
              coalesce(sum(citus_total_relation_size(t.oid)) FILTER (WHERE p.logicalrelid IS NOT NULL), 0)::text AS total,
              coalesce(sum(pg_relation_size(t.oid)) FILTER (WHERE p.logicalrelid IS NULL), 0)::text AS plain_heap,
              coalesce(sum(pg_indexes_size(t.oid)) FILTER (WHERE p.logicalrelid IS NULL), 0)::text AS plain_idx
         FROM unnest($1::regclass[]) AS t(oid) LEFT JOIN pg_dist_partition p ON p.logicalrelid = t.oid`,
      [tables],
    ),
    readNodeCounters(client, versionNum),
  ]);
  const s = sizes.rows[0];
  const heap = Number(s?.heap ?? 0);
  return {
    ...plain,
    heapBytes: heap + Number(s?.plain_heap ?? 0),
    indexBytes: Number(s?.total ?? 0) - heap + Number(s?.plain_idx ?? 0),
    walPosition: nodes.reduce((a, n) => a + n.walPosition, 0),
    checkpointsTimed: nodes.reduce((a, n) => a + n.checkpointsTimed, 0),
    checkpointsRequested: nodes.reduce((a, n) => a + n.checkpointsRequested, 0),
  };
}

/** WAL position and checkpoint counters of every node, one entry per node (coordinator first). */
export async function readNodeCounters(client: pg.Client, versionNum: number): Promise<CitusNodeCounters[]> {
  // All nodes run the same major version as the coordinator (Citus requires it).
  const sql = `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text || ' ' || c.timed || ' ' || c.requested FROM (${checkpointSql(versionNum)}) c`;
  const r = await client.query<{ nodeid: number; success: boolean; result: string }>('SELECT nodeid, success, result FROM run_command_on_all_nodes($1) ORDER BY nodeid', [sql]);
  return r.rows.map((row) => {
    if (!row.success) throw new Error(`Citus node ${row.nodeid} did not answer the sample: ${row.result}`);
    const [wal, timed, requested] = row.result.split(' ').map(Number);
    return { walPosition: wal ?? 0, checkpointsTimed: timed ?? 0, checkpointsRequested: requested ?? 0 };
  });
}
