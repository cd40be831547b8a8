import type pg from 'pg';
import type { ChunkWriter } from '../chunk-writer.js';

/** How Citus holds one table (`pg_dist_partition.partmethod` / `repmodel`). */
export type CitusTableKind = 'distributed' | 'reference' | 'citus-local';

export interface CitusTable {
  readonly oid: number;
  readonly kind: CitusTableKind;
  readonly shards: number;
}

/** A Citus coordinator as a load sees it: read once per load. */
export interface CitusTarget {
  /** `pg_extension.extversion` of citus. */
  readonly version: string;
  /** Active primary nodes, the coordinator included when it is in the metadata. */
  readonly nodes: number;
  /** The load's tables that Citus manages (a plain table on the coordinator is not here). */
  readonly tables: ReadonlyMap<number, CitusTable>;
}

/** Whether the target has Citus and which of `tableOids` it distributes; undefined without the extension. */
export async function detectCitus(client: pg.Client, tableOids: readonly number[]): Promise<CitusTarget | undefined> {
  const ext = await client.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'citus'");
  const version = ext.rows[0]?.v;
  if (version === undefined) return undefined;
  const nodes = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_dist_node WHERE isactive AND noderole = 'primary'");
  const t = await client.query<{ oid: string; method: string; repmodel: string; shards: number }>(
    `SELECT p.logicalrelid::oid::int8::text AS oid, p.partmethod AS method, p.repmodel,
            (SELECT count(*)::int FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) AS shards
       FROM pg_dist_partition p WHERE p.logicalrelid::oid = ANY($1::oid[])`,
    [tableOids],
  );
  const tables = new Map<number, CitusTable>();
  for (const row of t.rows) {
    const kind: CitusTableKind = row.method === 'h' ? 'distributed' : row.repmodel === 't' ? 'reference' : 'citus-local';
    tables.set(Number(row.oid), { oid: Number(row.oid), kind, shards: row.shards });
  }
  return { version, nodes: nodes.rows[0]?.n ?? 0, tables };
}

/**
 * Session settings for a loader's connections to a Citus coordinator, each for a reason
 * measured on a coordinator and two workers (docs/citus.md has the figures):
 *
 * - `citus.max_adaptive_executor_pool_size = 1`: one connection per worker node for the
 *   session's COPY, which Citus keeps open between transactions. With the default (16),
 *   a multi-shard COPY opens several per node and, after each chunk's transaction, Citus
 *   closes all but `max_cached_conns_per_worker` of them, so every chunk paid for opening
 *   connections again. pgsurge's parallelism is its own workers, one session each.
 * - `citus.max_cached_conns_per_worker`: keep what the session opened cached all the same.
 */
export const CITUS_SESSION_SETTINGS: readonly (readonly [string, string])[] = [
  ['citus.max_adaptive_executor_pool_size', '1'],
  ['citus.max_cached_conns_per_worker', '4'],
];

/** Sets `settings` for the rest of `client`'s session. */
export async function applyCitusSettings(client: pg.Client, settings: readonly (readonly [string, string])[] = CITUS_SESSION_SETTINGS): Promise<void> {
  for (const [name, value] of settings) await client.query('SELECT set_config($1, $2, false)', [name, value]);
}

/** `writer` with the Citus session settings applied to each connection before its own `prepare`. */
export function citusSessionWriter(writer: ChunkWriter, settings: readonly (readonly [string, string])[] = CITUS_SESSION_SETTINGS): ChunkWriter {
  const inner = writer.prepare?.bind(writer);
  return Object.assign(Object.create(writer) as ChunkWriter, {
    async prepare(client: pg.Client): Promise<void> {
      await applyCitusSettings(client, settings);
      await inner?.(client);
    },
  });
}

/** "Citus cluster: 3 nodes, 32 shards" for the load's distributed and reference tables. */
export function describeCitus(citus: CitusTarget): string {
  const shards = [...citus.tables.values()].reduce((a, t) => a + t.shards, 0);
  return `Citus ${citus.version} cluster: ${citus.nodes} node${citus.nodes === 1 ? '' : 's'}, ${shards} shard${shards === 1 ? '' : 's'}`;
}
