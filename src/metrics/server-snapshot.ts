import type pg from 'pg';

/** What the server says about the tables being loaded, at one moment; absolute counters. */
export interface ServerSnapshot {
  readonly heapBytes: number;
  readonly indexBytes: number;
  /** `pg_current_wal_lsn()` as a byte position. */
  readonly walPosition: number;
  readonly checkpointsTimed: number;
  readonly checkpointsRequested: number;
  readonly heapBlocksRead: number;
  readonly heapBlocksHit: number;
  readonly indexBlocksRead: number;
  readonly indexBlocksHit: number;
}

/** The settings a load's speed depends on, as the server shows them (`SHOW`). */
export const REPORTED_SETTINGS = ['shared_buffers', 'wal_level', 'synchronous_commit', 'fsync', 'full_page_writes', 'max_wal_size', 'checkpoint_timeout', 'wal_buffers', 'maintenance_work_mem'] as const;

export interface ServerFacts {
  /** `version()`. */
  readonly version: string;
  /** `server_version_num`, e.g. 180001. */
  readonly versionNum: number;
  readonly settings: Readonly<Record<string, string>>;
  readonly sharedBuffersBytes: number;
}

/** What the sampler reads once, as it opens: the server's facts, whether Citus is there, its own backend's pid. */
export interface ServerStart {
  readonly facts: ServerFacts;
  readonly citus: boolean;
  readonly backendPid: number;
}

/**
 * The settings as text, one statement (no parameters: it goes in one simple query with the
 * session's SET). The names are the constants above.
 */
const START_SQL = `SELECT version() AS version, current_setting('server_version_num') AS num, pg_backend_pid() AS pid,
       EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus,
       (SELECT json_agg(json_build_array(name, current_setting(name),
               CASE unit WHEN 'B' THEN setting::numeric WHEN 'kB' THEN setting::numeric * 1024
                         WHEN '8kB' THEN setting::numeric * 8192 WHEN 'MB' THEN setting::numeric * 1048576 END::text))
          FROM pg_settings WHERE name IN (${REPORTED_SETTINGS.map((n) => `'${n}'`).join(', ')})) AS settings`;

type StartRow = { version: string; num: string; pid: number; citus: boolean; settings: [string, string, string | null][] | null };

/**
 * The server's facts, whether Citus is installed, and this session's backend pid, in one
 * round trip; `before` (statements without parameters, e.g. the session's SETs) goes first
 * in the same simple query.
 */
export async function readServerStart(client: pg.Client, before = ''): Promise<ServerStart> {
  const sql = before === '' ? START_SQL : `${before}; ${START_SQL}`;
  const results = (await client.query<StartRow>(sql)) as unknown as pg.QueryResult<StartRow> | pg.QueryResult<StartRow>[];
  const row = (Array.isArray(results) ? results.at(-1)! : results).rows[0];
  const settings: Record<string, string> = {};
  let sharedBuffersBytes = 0;
  for (const name of REPORTED_SETTINGS) {
    const found = row?.settings?.find((s) => s[0] === name);
    if (found === undefined) continue;
    settings[name] = found[1];
    if (name === 'shared_buffers') sharedBuffersBytes = Number(found[2] ?? 0);
  }
  return {
    facts: { version: row?.version ?? '', versionNum: Number(row?.num ?? 0), settings, sharedBuffersBytes },
    citus: row?.citus === true,
    backendPid: row?.pid ?? 0,
  };
}

/** Checkpoint counters moved from pg_stat_bgwriter to pg_stat_checkpointer in PostgreSQL 17. */
export function checkpointSql(versionNum: number): string {
  return versionNum >= 170000
    ? 'SELECT num_timed::text AS timed, num_requested::text AS requested FROM pg_stat_checkpointer'
    : 'SELECT checkpoints_timed::text AS timed, checkpoints_req::text AS requested FROM pg_stat_bgwriter';
}

/**
 * The tables' leaves, as `oid`: a plain table is its own leaf (`pg_partition_tree` gives no
 * row for it); a partitioned table's are its partitions with storage, at every level
 * (`pg_partition_tree`, PostgreSQL 12+: the root of a partitioned table has no storage, its size is 0). Each once, a table named
 * twice or with one of its partitions included.
 */
const LEAVES_SQL = `SELECT DISTINCT coalesce(p.relid, t.oid) AS oid
  FROM unnest($1::regclass[]) AS t(oid) LEFT JOIN LATERAL pg_partition_tree(t.oid) AS p ON true
 WHERE coalesce(p.isleaf, true)`;

/**
 * Sizes, WAL position, checkpoint and buffer counters summed over the tables' leaves
 * (qualified names, quoted): the table's size is `pg_table_size` (heap, TOAST, free space
 * and visibility maps), the indexes' `pg_indexes_size`, so the two add up to
 * `pg_total_relation_size`. One statement, prepared once per session (a sample is then
 * one Bind/Execute, not a parse and plan each time: the server's core is the load's).
 */
export function snapshotSql(versionNum: number): string {
  return `
WITH leaf AS (${LEAVES_SQL}), cp AS (${checkpointSql(versionNum)})
SELECT coalesce(sum(pg_table_size(leaf.oid)), 0)::text AS heap,
       coalesce(sum(pg_indexes_size(leaf.oid)), 0)::text AS idx,
       pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal,
       (SELECT timed FROM cp) AS timed,
       (SELECT requested FROM cp) AS requested,
       coalesce(sum(s.heap_blks_read), 0)::text AS heap_read,
       coalesce(sum(s.heap_blks_hit), 0)::text AS heap_hit,
       coalesce(sum(s.idx_blks_read), 0)::text AS idx_read,
       coalesce(sum(s.idx_blks_hit), 0)::text AS idx_hit
  FROM leaf
  LEFT JOIN pg_statio_user_tables s ON s.relid = leaf.oid`;
}

export async function readServerSnapshot(client: pg.Client, tables: readonly string[], versionNum: number): Promise<ServerSnapshot> {
  const r = await client.query<Record<'heap' | 'idx' | 'wal' | 'timed' | 'requested' | 'heap_read' | 'heap_hit' | 'idx_read' | 'idx_hit', string>>({
    name: 'pgsurge-snapshot',
    text: snapshotSql(versionNum),
    values: [tables],
  });
  const row = r.rows[0];
  return {
    heapBytes: Number(row?.heap ?? 0),
    indexBytes: Number(row?.idx ?? 0),
    walPosition: Number(row?.wal ?? 0),
    checkpointsTimed: Number(row?.timed ?? 0),
    checkpointsRequested: Number(row?.requested ?? 0),
    heapBlocksRead: Number(row?.heap_read ?? 0),
    heapBlocksHit: Number(row?.heap_hit ?? 0),
    indexBlocksRead: Number(row?.idx_read ?? 0),
    indexBlocksHit: Number(row?.idx_hit ?? 0),
  };
}

/** The tables' sizes alone, as a sample reads them (a partitioned table's summed over its partitions). */
export async function readTableSizes(client: pg.Client, tables: readonly string[]): Promise<{ heapBytes: number; indexBytes: number }> {
  const r = await client.query<{ heap: string; idx: string }>(
    `SELECT coalesce(sum(pg_table_size(leaf.oid)), 0)::text AS heap, coalesce(sum(pg_indexes_size(leaf.oid)), 0)::text AS idx FROM (${LEAVES_SQL}) leaf`,
    [tables],
  );
  return { heapBytes: Number(r.rows[0]?.heap ?? 0), indexBytes: Number(r.rows[0]?.idx ?? 0) };
}

/**
 * Rows in the tables before a load: an exact count for tables up to `exactUpTo` bytes
 * (a partitioned table's: its leaves'), else the planner's estimate (`reltuples`), so
 * sampling never scans a big table.
 */
export async function countRowsBefore(client: pg.Client, tables: readonly string[], exactUpTo = 256 * 1024 * 1024): Promise<{ rows: number; estimated: boolean }> {
  let rows = 0;
  let estimated = false;
  for (const table of tables) {
    // A partitioned table's rows are in its leaves: their heaps and the planner's estimates, summed. The exact
    // count is a subquery the server runs only when its CASE arm is taken (an InitPlan is evaluated on first use):
    // one round trip per table, and a big table is never scanned.
    const r = await client.query<{ bytes: string; est: string; n: string | null }>(
      `SELECT s.bytes::text AS bytes, s.est::text AS est, CASE WHEN s.bytes > 0 AND s.bytes <= $2::bigint THEN (SELECT count(*) FROM ${table}) END::text AS n
         FROM (SELECT coalesce(sum(pg_relation_size(c.oid)), 0) AS bytes, coalesce(sum(greatest(c.reltuples, 0)), 0)::bigint AS est
                 FROM (${LEAVES_SQL}) leaf JOIN pg_class c ON c.oid = leaf.oid) s`,
      [[table], exactUpTo],
    );
    const row = r.rows[0];
    const bytes = Number(row?.bytes ?? 0);
    if (bytes === 0) continue;
    if (row?.n !== null && row?.n !== undefined) {
      rows += Number(row.n);
    } else {
      rows += Number(row?.est ?? 0);
      estimated = true;
    }
  }
  return { rows, estimated };
}
