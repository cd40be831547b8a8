import type pg from 'pg';
import type { Chunk } from '../../core/chunk.js';
import { createOnce } from '../../core/create-once.js';
import { LoadError } from '../../core/load-error.js';
import { fromRejectRecord, LEDGER_SCHEMA, REJECT_COLUMNS, REJECT_ROW_COLUMNS, type ChunkLedger, type LedgerInput, type RejectRecord, type RejectedRow } from '../ledger/ledger.js';

/**
 * The ledger of a routed load on one Citus node: which (chunk, node) parts that node
 * committed, in the part's own transaction with its rows, and the rows it refused. It
 * lives on the node itself (schema `pgsurge`, which Citus creates on every node when the
 * coordinator's ledger creates it), because a part's rows and its ledger row must commit
 * in one local transaction: no transaction spans two nodes here.
 *
 * A part row says: every record of the chunk's byte range [byte_start, byte_end) that
 * routes to this node (`group_id`) and was not in an earlier part row of this node is now
 * in the node's shards (rows_loaded) or in node_rejects (rows_rejected). So the union of a
 * node's part ranges is exactly the set of input positions whose node-bound records are
 * done, whatever the chunk boundaries of the run that resumes.
 */
const NODE_DDL = [
  `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.node_parts (
     load_id text NOT NULL,
     file text NOT NULL,
     table_oid oid NOT NULL,
     group_id int NOT NULL,
     byte_start bigint NOT NULL,
     byte_end bigint NOT NULL,
     rows_loaded bigint NOT NULL,
     rows_rejected bigint NOT NULL,
     shard_map text NOT NULL,
     generation text NOT NULL,
     committed_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  `CREATE INDEX IF NOT EXISTS node_parts_by_range ON ${LEDGER_SCHEMA}.node_parts (load_id, generation, group_id, byte_start)`,
  `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.node_rejects (
     load_id text NOT NULL,
     file text NOT NULL,
     table_oid oid NOT NULL,
     group_id int NOT NULL,
     generation text NOT NULL,
     ${REJECT_ROW_COLUMNS})`,
  `CREATE INDEX IF NOT EXISTS node_rejects_by_load ON ${LEDGER_SCHEMA}.node_rejects (load_id, generation, group_id, byte_offset)`,
];

/**
 * Creates the node's ledger tables when missing, under the creation lock of the node itself
 * (src/core/create-once.ts), so the processes of a load's parts starting at once make them
 * once. The schema must be there: Citus refuses CREATE SCHEMA on a worker, and creates it
 * on every node when the coordinator's ledger creates it.
 */
export async function ensureNodeLedger(client: pg.Client, where: string): Promise<void> {
  let schemaThere = true;
  await createOnce(client, 'node ledger', {
    async missing(c) {
      const have = await c.query<{ schema: boolean; tables: boolean }>(
        `SELECT to_regnamespace('${LEDGER_SCHEMA}') IS NOT NULL AS schema,
                to_regclass('${LEDGER_SCHEMA}.node_parts') IS NOT NULL AND to_regclass('${LEDGER_SCHEMA}.node_rejects') IS NOT NULL
                AND to_regclass('${LEDGER_SCHEMA}.node_parts_by_range') IS NOT NULL AND to_regclass('${LEDGER_SCHEMA}.node_rejects_by_load') IS NOT NULL AS tables`,
      );
      schemaThere = have.rows[0]?.schema === true;
      return schemaThere && have.rows[0]?.tables !== true;
    },
    async create(c) {
      for (const sql of NODE_DDL) await c.query(sql);
    },
  });
  if (!schemaThere) {
    throw new LoadError('bad-option', `the Citus node ${where} has no schema ${LEDGER_SCHEMA} for the routed load's ledger (Citus creates it on every node when the coordinator creates it, unless DDL propagation was off then)`, {
      hint: `create it through the coordinator with DDL propagation on (DROP SCHEMA ${LEDGER_SCHEMA} CASCADE on the coordinator drops the ledger), or load through the coordinator: --citus-route coordinator`,
    });
  }
}

/** A part row of a node that overlaps a chunk: what an earlier run (or try) of this load committed there. */
export interface NodePart {
  readonly start: number;
  readonly end: number;
  readonly shardMap: string;
}

/** The node's part rows overlapping [start, end) of `file`, and its rejects in that range by byte offset. */
export async function nodePartsOverlapping(
  client: pg.Client,
  /** The input by its generation (`pgsurge.routed_files` on the coordinator), not its path: a renamed file keeps it. */
  key: { loadId: string; groupId: number; generation: string },
  start: number,
  end: number,
): Promise<{ parts: NodePart[]; rejects: Map<number, Omit<RejectedRow, 'file'>> }> {
  const r = await client.query<{ byte_start: string; byte_end: string; shard_map: string; rows_rejected: string }>(
    `SELECT byte_start, byte_end, shard_map, rows_rejected FROM ${LEDGER_SCHEMA}.node_parts
      WHERE load_id = $1 AND generation = $2 AND group_id = $3 AND byte_start < $5 AND byte_end > $4`,
    [key.loadId, key.generation, key.groupId, start, end],
  );
  const parts = r.rows.map((row) => ({ start: Number(row.byte_start), end: Number(row.byte_end), shardMap: row.shard_map }));
  const rejects = new Map<number, Omit<RejectedRow, 'file'>>();
  if (r.rows.some((row) => Number(row.rows_rejected) > 0)) {
    const rr = await client.query<RejectRecord>(
      `SELECT ${REJECT_COLUMNS} FROM ${LEDGER_SCHEMA}.node_rejects
        WHERE load_id = $1 AND generation = $2 AND group_id = $3 AND byte_offset >= $4 AND byte_offset < $5`,
      [key.loadId, key.generation, key.groupId, start, end],
    );
    for (const row of rr.rows) rejects.set(Number(row.byte_offset), fromRejectRecord(row));
  }
  return { parts, rejects };
}

/**
 * The `ChunkLedger` that `commitChunk` writes a (chunk, node) part's row through, on the
 * node's connection: the part's chunk has the whole chunk's location, so the row names
 * the chunk's byte range.
 */
export class NodeLedger implements ChunkLedger {
  constructor(
    private readonly loadId: string,
    private readonly input: LedgerInput,
    private readonly groupId: number,
    private readonly shardMap: string,
    /** The coordinator's generation of this load's record of the input (`pgsurge.routed_files`): a new one after --truncate. */
    private readonly generation: string,
  ) {}

  private values(chunk: Chunk, loaded: number, rejected: number): (string | number)[] {
    const { byteOffset, byteLength } = chunk.location;
    return [this.loadId, this.input.file, this.input.tableOid, this.groupId, byteOffset, byteOffset + byteLength, loaded, rejected, this.shardMap, this.generation];
  }

  recordStatement(client: pg.Client, chunk: Chunk, counts: { loaded: number; skipped: number }): string {
    const v = this.values(chunk, counts.loaded, 0).map((x) => (typeof x === 'number' ? String(x) : client.escapeLiteral(x)));
    return `INSERT INTO ${LEDGER_SCHEMA}.node_parts (load_id, file, table_oid, group_id, byte_start, byte_end, rows_loaded, rows_rejected, shard_map, generation) VALUES (${v.join(', ')})`;
  }

  async record(client: pg.Client, chunk: Chunk, counts: { loaded: number; rejected: number; skipped: number }, rejects: readonly RejectedRow[]): Promise<void> {
    await client.query(
      `INSERT INTO ${LEDGER_SCHEMA}.node_parts (load_id, file, table_oid, group_id, byte_start, byte_end, rows_loaded, rows_rejected, shard_map, generation) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      this.values(chunk, counts.loaded, counts.rejected),
    );
    for (const r of rejects) {
      await client.query(
        `INSERT INTO ${LEDGER_SCHEMA}.node_rejects (load_id, file, table_oid, group_id, generation, line, byte_offset, sqlstate, column_name, message, record) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [this.loadId, this.input.file, this.input.tableOid, this.groupId, this.generation, r.line ?? null, r.byteOffset, r.sqlstate ?? null, r.column ?? null, r.message, r.record],
      );
    }
  }

  // A part is asked about by range (nodePartsOverlapping), never through these: the load's
  // workers ask the coordinator's ledger, whose row for a routed chunk comes last.
  async committed(): Promise<undefined> {
    return undefined;
  }

  async rejectsOf(): Promise<RejectedRow[]> {
    return [];
  }

  async earlierRejects(): Promise<Omit<RejectedRow, 'file'>[]> {
    return [];
  }
}
