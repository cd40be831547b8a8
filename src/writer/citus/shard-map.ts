import type pg from 'pg';

/** The distribution column types whose Citus hash pgsurge reproduces exactly (`pg-hash.ts`). */
export const ROUTABLE_TYPES = { 21: 'int2', 23: 'int4', 20: 'int8', 25: 'text', 1043: 'varchar' } as const;
export type RoutableType = (typeof ROUTABLE_TYPES)[keyof typeof ROUTABLE_TYPES];

/** A node that holds shards: its group (what `pg_dist_placement` names) and where to connect. */
export interface ShardNode {
  readonly groupId: number;
  readonly host: string;
  readonly port: number;
}

/** One shard of a hash-distributed table and the one node that holds it. */
export interface Shard {
  /** `pg_dist_shard.shardid`, as text (a bigint). */
  readonly id: string;
  /** Its hash range, inclusive at both ends (signed 32-bit, as Citus stores them). */
  readonly min: number;
  readonly max: number;
  readonly groupId: number;
  /** The shard table's name on its node, qualified and quoted (`shard_name()`). */
  readonly table: string;
}

/**
 * Where every row of one hash-distributed table goes, read once at the start of a load:
 * the shards sorted by hash range (which cover the int4 range without gap or overlap),
 * and the nodes that hold them.
 */
export interface ShardMap {
  readonly tableOid: number;
  readonly column: string;
  readonly type: RoutableType;
  readonly shards: readonly Shard[];
  readonly nodes: readonly ShardNode[];
}

/** Why a Citus table's rows go through the coordinator instead of straight to its shards. */
export type NotRoutable = { readonly reason: string };

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** The index in `map.shards` of the shard whose range holds `hash` (binary search; the ranges are checked to cover every hash). */
export function shardIndexOf(map: ShardMap, hash: number): number {
  const shards = map.shards;
  let lo = 0;
  let hi = shards.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (hash > shards[mid]!.max) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The map's identity: every shard's id, range and node (group, host, port), in order. Two
 * reads of a table's map with the same key route every row alike; a shard moved, split or
 * placed elsewhere between them changes it. Recorded at a load's start, compared at resume
 * and at the end.
 */
export function shardMapKey(map: ShardMap): string {
  const nodes = new Map(map.nodes.map((n) => [n.groupId, n]));
  return map.shards.map((s) => `${s.id}:${s.min}:${s.max}:${s.groupId}@${nodes.get(s.groupId)?.host}:${nodes.get(s.groupId)?.port}`).join(',');
}

/** Checks that sorted ranges cover [INT32_MIN, INT32_MAX] exactly once; the reason when not. */
export function rangeProblem(shards: readonly Pick<Shard, 'min' | 'max'>[]): string | undefined {
  if (shards.length === 0) return 'it has no shards';
  let next = INT32_MIN;
  for (const s of shards) {
    if (s.min !== next || s.max < s.min) return `its shards' hash ranges are not contiguous at ${next}`;
    next = s.max + 1;
  }
  return next === INT32_MAX + 1 ? undefined : `its shards' hash ranges end at ${next - 1}, not ${INT32_MAX}`;
}

interface ShardRow {
  shardid: string;
  min: string | null;
  max: string | null;
  placements: number;
  groupid: number | null;
  nodename: string | null;
  nodeport: number | null;
  shard_table: string;
}

/**
 * Reads the shard map of one Citus table from the coordinator, or says why its rows cannot
 * be routed by the client: not hash-distributed (reference, append, range, local tables
 * go through the coordinator), a distribution column of a type whose hash is not
 * reproduced here (or text under a nondeterministic collation, or a server encoding other
 * than UTF-8, which `hashtext` would hash as other bytes), a shard with more than one
 * placement (replication: one COPY per placement would have to commit together), a node
 * that is not an active primary, or ranges that do not cover the hash space.
 */
export async function readShardMap(client: pg.Client, tableOid: number): Promise<ShardMap | NotRoutable> {
  const t = await client.query<{ method: string; column: string | null; typid: number; typmod: number; deterministic: boolean | null; encoding: string }>(
    `SELECT p.partmethod AS method, column_to_column_name(p.logicalrelid, p.partkey) AS column,
            a.atttypid::int AS typid, a.atttypmod AS typmod, c.collisdeterministic AS deterministic,
            pg_encoding_to_char((SELECT encoding FROM pg_database WHERE datname = current_database())) AS encoding
       FROM pg_dist_partition p
       LEFT JOIN pg_attribute a ON a.attrelid = p.logicalrelid AND a.attname = column_to_column_name(p.logicalrelid, p.partkey)
       LEFT JOIN pg_collation c ON c.oid = a.attcollation
      WHERE p.logicalrelid = $1::oid`,
    [tableOid],
  );
  const table = t.rows[0];
  if (table === undefined) return { reason: 'it is not a Citus table' };
  if (table.method !== 'h' || table.column === null) return { reason: table.column === null && table.method === 'h' ? 'it has no distribution column (a single-shard table)' : 'it is not hash-distributed' };
  const type = ROUTABLE_TYPES[table.typid as keyof typeof ROUTABLE_TYPES];
  if (type === undefined) return { reason: `its distribution column ${table.column} is of a type (oid ${table.typid}) whose hash pgsurge does not reproduce (int2, int4, int8, text, varchar)` };
  // varchar(n) stores an over-length value whose excess is all spaces cut to n characters, and Citus hashes the stored
  // value: 'abc  ' is hashed as 'abc'. pgsurge hashes the input's bytes, so such a column goes through the coordinator.
  if (type === 'varchar' && table.typmod >= 0) return { reason: `its distribution column ${table.column} is varchar(${table.typmod - 4}) (a value cut to its length is hashed as stored)` };
  if ((type === 'text' || type === 'varchar') && table.deterministic === false) return { reason: `its distribution column ${table.column} has a nondeterministic collation` };
  if ((type === 'text' || type === 'varchar') && table.encoding !== 'UTF8') return { reason: `the database's encoding is ${table.encoding}, not UTF8` };
  const r = await client.query<ShardRow>(
    `SELECT s.shardid::text AS shardid, s.shardminvalue AS min, s.shardmaxvalue AS max,
            (SELECT count(*)::int FROM pg_dist_placement x WHERE x.shardid = s.shardid) AS placements,
            pl.groupid, n.nodename, n.nodeport,
            -- shard_name() leaves out the schema when it is public; the workers' search_path may not have it
            CASE WHEN c.relnamespace = 'public'::regnamespace THEN 'public.' ELSE '' END || shard_name(s.logicalrelid, s.shardid) AS shard_table
       FROM pg_dist_shard s
       JOIN pg_class c ON c.oid = s.logicalrelid
       LEFT JOIN pg_dist_placement pl ON pl.shardid = s.shardid
       LEFT JOIN pg_dist_node n ON n.groupid = pl.groupid AND n.noderole = 'primary' AND n.isactive
      WHERE s.logicalrelid = $1::oid
      ORDER BY s.shardminvalue::int, s.shardid`,
    [tableOid],
  );
  const shards: Shard[] = [];
  const nodes = new Map<number, ShardNode>();
  for (const row of r.rows) {
    if (row.placements !== 1) return { reason: `shard ${row.shardid} has ${row.placements} placements (pgsurge routes only tables with one placement per shard)` };
    if (row.groupid === null || row.nodename === null || row.nodeport === null) return { reason: `shard ${row.shardid}'s node is not an active primary` };
    if (row.min === null || row.max === null) return { reason: `shard ${row.shardid} has no hash range` };
    shards.push({ id: row.shardid, min: Number(row.min), max: Number(row.max), groupId: row.groupid, table: row.shard_table });
    nodes.set(row.groupid, { groupId: row.groupid, host: row.nodename, port: row.nodeport });
  }
  const problem = rangeProblem(shards);
  if (problem !== undefined) return { reason: problem };
  return { tableOid, column: table.column, type, shards, nodes: [...nodes.values()].sort((a, b) => a.groupId - b.groupId) };
}

export function isShardMap(m: ShardMap | NotRoutable): m is ShardMap {
  return (m as ShardMap).shards !== undefined;
}
