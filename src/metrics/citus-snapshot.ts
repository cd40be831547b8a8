import type pg from 'pg';
import { applyCitusSettings } from '../writer/citus/citus.js';
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

/**
 * Reads one snapshot of the server for the sampler: plain PostgreSQL, or a Citus cluster
 * through its coordinator. `fresh`: the figures must be current (the baseline, the last
 * sample); otherwise a reader may give counters that are costly to read as last read.
 */
export interface SnapshotReader {
  (client: pg.Client, tables: readonly string[], fresh?: boolean): Promise<ServerSnapshot>;
  /** Some figures of a sample not asked `fresh` may be an earlier sample's. */
  readonly reuses?: boolean;
}

/**
 * How often, at most, a sample reads every node's WAL and checkpoint counters. Citus's
 * `run_command_on_all_nodes` opens a new connection to every node for each call (it does
 * not use the connections Citus caches): measured at ~65 ms of CPU on each node and
 * ~0.4 s per call on a coordinator and two workers sharing 2 cores, which sampled every
 * second was a load's largest cost after its rows (bench/citus.ts: 31.6 µs of CPU per row
 * with it, 18.4 with `--sample-every off`). The samples between reuse the last counters;
 * the baseline and the last sample always read them, so the summary's WAL is exact.
 */
export const NODE_COUNTERS_EVERY_MS = 10_000;

/** The reader for this server: Citus's when the extension is there (`citus`, as the sampler read it), else the plain one. */
export async function snapshotReaderFor(client: pg.Client, versionNum: number, citus: boolean, now: () => number = () => performance.now()): Promise<SnapshotReader> {
  if (!citus) return (c, tables) => readServerSnapshot(c, tables, versionNum);
  const counters = new ThrottledRead((c: pg.Client) => readNodeCounters(c, versionNum), NODE_COUNTERS_EVERY_MS, now);
  // The load's Citus session settings on the sampler's connection too (a new one after a
  // reconnect as well): `citus_table_size` over many shards then goes through one cached
  // connection per node instead of opening more each sample and closing them after.
  // Applied now as well: the sampler's first query, the rows already in the tables, counts
  // over every shard and would open connections of its own.
  const configured = new WeakSet<pg.Client>();
  await applyCitusSettings(client);
  configured.add(client);
  const read = async (c: pg.Client, tables: readonly string[], fresh = false): Promise<ServerSnapshot> => {
    if (!configured.has(c)) {
      await applyCitusSettings(c);
      configured.add(c);
    }
    return readCitusSnapshot(c, tables, versionNum, (cc) => counters.read(cc, fresh));
  };
  return Object.assign(read, { reuses: true });
}

/**
 * A costly read done at most every `everyMs`: between, the last value is given again,
 * unless `fresh` asks for a new one.
 */
export class ThrottledRead<C, T> {
  private last: { value: T; at: number } | undefined;

  constructor(
    private readonly readNow: (client: C) => Promise<T>,
    private readonly everyMs: number,
    private readonly now: () => number,
  ) {}

  async read(client: C, fresh: boolean): Promise<T> {
    const at = this.now();
    if (!fresh && this.last !== undefined && at - this.last.at < this.everyMs) return this.last.value;
    const value = await this.readNow(client);
    this.last = { value, at };
    return value;
  }
}

/**
 * Sizes of Citus tables from `citus_table_size` (heap, TOAST, FSM, VM over all shards) and
 * `citus_total_relation_size` (with indexes); a table Citus does not manage is measured
 * as on any server. WAL and checkpoints: the sums over every node. Buffer counters stay
 * the coordinator's (Citus has no cluster-wide view of them).
 */
export async function readCitusSnapshot(
  client: pg.Client,
  tables: readonly string[],
  versionNum: number,
  nodeCounters: (client: pg.Client) => Promise<CitusNodeCounters[]> = (c) => readNodeCounters(c, versionNum),
): Promise<ServerSnapshot> {
  const [plain, sizes, nodes] = await Promise.all([
    readServerSnapshot(client, tables, versionNum),
    client.query<{ heap: string; total: string; plain_heap: string; plain_idx: string }>(
      `SELECT coalesce(sum(citus_table_size(t.oid)) FILTER (WHERE p.logicalrelid IS NOT NULL), 0)::text AS heap,
              coalesce(sum(citus_total_relation_size(t.oid)) FILTER (WHERE p.logicalrelid IS NOT NULL), 0)::text AS total,
              coalesce(sum(pg_table_size(t.oid)) FILTER (WHERE p.logicalrelid IS NULL), 0)::text AS plain_heap,
              coalesce(sum(pg_indexes_size(t.oid)) FILTER (WHERE p.logicalrelid IS NULL), 0)::text AS plain_idx
         FROM unnest($1::regclass[]) AS t(oid) LEFT JOIN pg_dist_partition p ON p.logicalrelid = t.oid`,
      [tables],
    ),
    nodeCounters(client),
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
