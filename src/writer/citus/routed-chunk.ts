import { createHash } from 'node:crypto';
import type pg from 'pg';
import { chunkSource, type Chunk } from '../../core/chunk.js';
import { ChunkRecords, pickedRecords } from '../../input/chunk-split.js';
import type { SplittableRecords } from '../../core/chunk.js';
import { quoteIdent } from '../../core/identifiers.js';
import { copyLineFromWhere, LoadError } from '../../core/load-error.js';
import { backendOf, endOldBackend, type Backend } from '../../core/old-backend.js';
import { isRetryable } from '../../core/retry.js';
import { sourceFramer } from '../../input/framer-for.js';
import { NO_LEDGER, type ChunkLedger, type LedgerInput, type RejectedRow } from '../ledger/ledger.js';
import { commitChunk, commitTakingRejects, isRowError, type ChunkOutcome, type ChunkTransactionContext } from '../chunk-transaction.js';
import type { ChunkWriter } from '../chunk-writer.js';
import { streamCopy } from '../copy-writer.js';
import { brokenChunk } from '../count-guard.js';
import { copyOptions, wireFormat } from '../../wire/wire-format.js';
import type { ChunkRouter } from '../chunk-transaction.js';
import { NodeLedger, nodePartsOverlapping } from './node-ledger.js';
import { hashOfCanonical, NULL_KEY, recordBytes, routeRecords, type RouteSpec, type RoutedRecords } from './route-records.js';
import { shardIndexOf, type ShardMap, type ShardNode } from './shard-map.js';
import type { CitusFaults } from './citus-faults.js';

/** One table of the load whose rows pgsurge sends straight to its shards. */
export interface RoutedTable {
  readonly map: ShardMap;
  /** `shardMapKey(map)`, hashed: what every part row of the table records, and what must not change under the load. */
  readonly mapHash: string;
  /**
   * This load's record of the input on the coordinator (`pgsurge.routed_files.generation`),
   * made afresh when the ledger forgets the table (--truncate): part rows of another
   * generation describe rows that are gone.
   */
  generation: string;
  readonly spec: RouteSpec;
  /**
   * How a record's distribution value is found, hashed (format, delimiter, null marker,
   * column list, field index): recorded with the map in routed_files, and a resume that
   * reads the input another way (--columns reordered, another --null) is refused, since
   * the nodes' part rows cover the records as the first run routed them.
   */
  readonly specHash: string;
  /** The table as psql would name it, for messages. */
  readonly tableName: string;
  /** The input's ledger entry (absolute path, table oid). */
  readonly input: LedgerInput;
}

/** A short, stable digest of a shard map key. */
export function mapHashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** What every session of a routed load shares. */
export interface RoutedLoad {
  readonly loadId: string | undefined;
  /** Input path as the chunk's target names it → its routed table. */
  readonly tables: ReadonlyMap<string, RoutedTable>;
  readonly nodes: ReadonlyMap<number, ShardNode>;
  /** A fresh connection to a node (the user's credentials, the node's host and port), named as the load's workers are. */
  connect(node: ShardNode): Promise<pg.Client>;
  /** Sends one shard's records (`COPY … FROM STDIN`) and returns the server's count: `streamCopy`, or a test's (fault injection). */
  readonly shardCopy?: ShardCopy;
  /** A test's faults; none when absent. */
  readonly faults?: CitusFaults;
}

/** One COPY of a shard's records: the server's count of the rows it stored. */
export type ShardCopy = (client: pg.Client, sql: string, data: Buffer) => Promise<number>;

/** How a routed part knows which shard each of its records goes to (the writer reads it back). */
interface PartRecords {
  /** `ends[i]`: record i's end in the part's data. */
  readonly ends: readonly number[];
  readonly shards: Int32Array;
}

const PARTS = new WeakMap<Chunk, PartRecords>();

/** What one node's part of a chunk came to: `skipped`, rows a BEFORE INSERT trigger of the table kept out. */
interface NodePartOutcome {
  readonly loaded: number;
  readonly skipped: number;
  readonly rejects: RejectedRow[];
}

async function oneAfterAnother<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const out: PromiseSettledResult<R>[] = [];
  for (const item of items) out.push(...(await Promise.allSettled([fn(item)])));
  return out;
}

/** SQLSTATE null_value_not_allowed, as Citus refuses a NULL distribution value. */
const NULL_NOT_ALLOWED = '22004';

/**
 * COPY of a part's records into their shard tables on one node, one COPY per shard, in
 * the caller's transaction (`commitChunk`'s). A refused row's COPY says `line N` of that
 * shard's COPY: `failedRecord` maps it back to the part's record.
 */
export function shardCopyWriter(table: RoutedTable, copy: ShardCopy = streamCopy): ChunkWriter {
  const write = async (client: pg.Client, chunk: Chunk, begin: boolean): Promise<{ loaded: number; skipped: number }> => {
    const part = PARTS.get(chunk);
    if (part === undefined) throw new Error('internal: a routed part without its shards');
    const columns = chunk.target.columns && chunk.target.columns.length > 0 ? ` (${chunk.target.columns.map(quoteIdent).join(', ')})` : '';
    const options = copyOptions(wireFormat(chunk.target));
    let loaded = 0;
    let first = begin;
    // The part's records are grouped by shard (partChunk): each run is one COPY of a slice, no copying.
    for (let from = 0; from < part.shards.length; ) {
      const s = part.shards[from]!;
      let to = from + 1;
      while (to < part.shards.length && part.shards[to] === s) to++;
      const sql = `${first ? 'BEGIN; ' : ''}COPY ${table.map.shards[s]!.table}${columns} FROM STDIN (${options})`;
      first = false;
      try {
        loaded += await copy(client, sql, chunk.data.subarray(from === 0 ? 0 : part.ends[from - 1]!, part.ends[to - 1]!));
      } catch (error) {
        const line = copyLineFromWhere((error as { where?: string }).where);
        if (line !== undefined && line >= 1 && from + line <= to && error instanceof Error) Object.assign(error, { pgsurgeRecord: from + line });
        throw error;
      }
      from = to;
    }
    if (first) await client.query('BEGIN');
    return { loaded, skipped: 0 };
  };
  return {
    name: 'copy',
    writeRows: (client, chunk) => write(client, chunk, false),
    beginAndWriteRows: (client, chunk) => write(client, chunk, true),
    failedRecord: (error) => (error as { pgsurgeRecord?: number } | undefined)?.pgsurgeRecord,
  };
}

/** The refusal when a shard map differs from the one the load recorded. */
export function shardMapChanged(table: string, loadId: string | undefined, when: string): LoadError {
  return new LoadError('bad-option', `the shards of ${table} moved ${when} (a rebalance, a shard move or split changed where its rows live): pgsurge routes rows to the shards it saw when load ${loadId ?? ''} began, and going on could lose or double rows`, {
    hint: `check the table against the input (count(*)); to be sure, load it again with --truncate, and keep the shards where they are while pgsurge routes rows to them (or load through the coordinator: --citus-route coordinator)`,
  });
}

/**
 * One load worker's routing: its own connection to each node, and the commit of a chunk
 * as one transaction per node it routes to (see docs/citus.md, "Client-side routing",
 * for the invariants). The worker's coordinator connection commits the chunk's ledger row
 * last, once every node's part is in.
 */
export class RouterSession implements ChunkRouter {
  private readonly clients = new Map<number, pg.Client>();
  /** A node connection lost since: its backend is ended (and seen gone) before that node's ledger is read again. */
  private readonly lost = new Map<number, Backend>();
  private readonly writers = new Map<string, ChunkWriter>();
  /** Per node, the buffer its parts' records are gathered in. */
  private readonly scratch = new Map<number, Buffer>();

  constructor(private readonly load: RoutedLoad) {}

  routes(chunk: Chunk): boolean {
    return chunk.unframable === undefined && this.load.tables.has(chunk.target.file);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.clients.values()].map((c) => c.end()));
    this.clients.clear();
  }

  async commit(coordinator: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
    const table = this.load.tables.get(chunk.target.file)!;
    const routed = routeRecords(chunk.data, table.spec);
    if (routed.ends.length !== chunk.records) throw new Error(`internal: routing found ${routed.ends.length} records in a chunk of ${chunk.records}`);
    const shards = Int32Array.from(routed.shards);
    // Rows no shard can take: refused here, as Citus would refuse them, committed with the chunk's ledger row.
    const refused = new Map<number, { sqlstate: string; message: string }>();
    shards.forEach((s, i) => {
      if (s === NULL_KEY) refused.set(i, { sqlstate: NULL_NOT_ALLOWED, message: `the distribution column ${table.map.column} of ${table.tableName} cannot be NULL` });
    });
    const cast = table.map.type === 'varchar' ? 'text' : table.map.type;
    for (const [i, value] of routed.unsure) {
      // The server reads the value (any syntax its version takes); what it refuses, the row's COPY would refuse too.
      try {
        const r = await coordinator.query<{ v: string }>(`SELECT $1::${cast}::text AS v`, [value]);
        shards[i] = shardIndexOf(table.map, hashOfCanonical(table.map.type, r.rows[0]!.v));
      } catch (error) {
        if (!isRowError(error)) throw error;
        const e = error as { code: string; message: string };
        refused.set(i, { sqlstate: e.code, message: e.message });
      }
    }
    const byNode = new Map<number, number[]>();
    shards.forEach((s, i) => {
      if (s < 0 || refused.has(i)) return;
      const g = table.map.shards[s]!.groupId;
      let list = byNode.get(g);
      if (!list) byNode.set(g, (list = []));
      list.push(i);
    });
    let sourceRecords: Promise<ChunkRecords> | undefined;
    const records = (): Promise<ChunkRecords> => (sourceRecords ??= recordsOf(chunk));

    // Each node's part in parallel, each on its own connection; all settle before any error is thrown.
    const commitPart = ([g, idx]: [number, number[]]): Promise<NodePartOutcome> => this.commitPart(g, chunk, table, routed, shards, idx, records, ctx);
    const settled = this.load.faults?.partCommitted === undefined ? await Promise.allSettled([...byNode].map(commitPart)) : await oneAfterAnother([...byNode], commitPart);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    let loaded = 0;
    let skipped = 0;
    const rejects: RejectedRow[] = [];
    for (const s of settled as PromiseFulfilledResult<NodePartOutcome>[]) {
      loaded += s.value.loaded;
      skipped += s.value.skipped;
      rejects.push(...s.value.rejects);
    }
    if (refused.size > 0) {
      const recs = await records();
      const firstLine = chunk.location.firstLine ?? (await ctx.firstLineOf(chunk));
      for (const [i, why] of refused) {
        rejects.push({
          file: chunk.location.file,
          line: firstLine === undefined ? undefined : firstLine + recs.linesBefore(i),
          byteOffset: chunk.location.byteOffset + recs.start(i),
          sqlstate: why.sqlstate,
          column: table.map.column,
          message: why.message,
          record: Buffer.from(recs.sourceOf(i)),
        });
      }
    }
    rejects.sort((a, b) => a.byteOffset - b.byteOffset);
    // The count guard over the nodes: each node's part was checked before it committed; the
    // sum over the nodes (and the rows refused here) must be the records routed, else the
    // chunk's ledger row is not written and the load stops on it.
    if (loaded + skipped + rejects.length !== chunk.records) {
      const firstLine = chunk.location.firstLine ?? (await ctx.firstLineOf(chunk));
      throw brokenChunk(chunk, firstLine, `its rows routed to the shards came to ${loaded} loaded + ${rejects.length} rejected + ${skipped} skipped over ${byNode.size} node${byNode.size === 1 ? '' : 's'}, not the ${chunk.records} records routed (the nodes' parts that committed stay, each recorded in its node's ledger)`, 'rolled-back');
    }
    await commitMarker(coordinator, chunk, ctx, { loaded, skipped, rejects, refusedHere: refused.size });
    return { loaded, skipped, rejects, ...(skipped > 0 ? { triggerSkipped: skipped } : {}) };
  }

  /**
   * One node's part of a chunk: the node's ledger says which of its records an earlier run
   * (or try) committed; the rest are loaded with the part's ledger row in one transaction
   * on the node. Returns the node's rows of the chunk, earlier ones included.
   */
  private async commitPart(
    groupId: number,
    chunk: Chunk,
    table: RoutedTable,
    routed: RoutedRecords,
    shards: Int32Array,
    idx: readonly number[],
    records: () => Promise<ChunkRecords>,
    ctx: ChunkTransactionContext,
  ): Promise<NodePartOutcome> {
    const client = await this.nodeClient(groupId);
    try {
      let pending: number[] = [...idx];
      let earlierLoaded = 0;
      const earlierRejects: RejectedRow[] = [];
      const withLedger = ctx.ledger !== NO_LEDGER && this.load.loadId !== undefined;
      if (withLedger) {
        const start = chunk.location.byteOffset;
        const end = start + chunk.location.byteLength;
        const earlier = await nodePartsOverlapping(client, { loadId: this.load.loadId!, groupId, generation: table.generation }, start, end);
        if (earlier.parts.some((p) => p.shardMap !== table.mapHash)) throw shardMapChanged(table.tableName, this.load.loadId, 'since an earlier run of this load committed rows to them');
        if (earlier.parts.length > 0) {
          const recs = await records();
          pending = [];
          for (const i of idx) {
            const at = start + recs.start(i);
            if (!earlier.parts.some((p) => at >= p.start && at < p.end)) {
              pending.push(i);
              continue;
            }
            const r = earlier.rejects.get(at);
            if (r) earlierRejects.push({ file: chunk.location.file, ...r });
            else earlierLoaded++;
          }
        }
      }
      if (pending.length === 0) return { loaded: earlierLoaded, skipped: 0, rejects: earlierRejects };
      // The node's buffer of this session, reused: nothing reads a part's data once its commit returns.
      const part = partChunk(chunk, routed, shards, pending, records, this.scratchFor(groupId, chunk.data.length));
      const ledger: ChunkLedger = withLedger ? new NodeLedger(this.load.loadId!, table.input, groupId, table.mapHash, table.generation) : NO_LEDGER;
      // The count guard checks the part on its node (its records against the shards' COPY counts) before it commits.
      const outcome = await commitChunk(client, part, { writer: this.writerOf(table), ledger, budget: ctx.budget, firstLineOf: ctx.firstLineOf, ...(ctx.onCommit ? { onCommit: ctx.onCommit } : {}), ...(ctx.triggers ? { triggers: ctx.triggers } : {}) });
      this.load.faults?.partCommitted?.();
      return { loaded: earlierLoaded + outcome.loaded, skipped: outcome.skipped, rejects: [...earlierRejects, ...outcome.rejects] };
    } catch (error) {
      if (isRetryable(error)) this.drop(groupId);
      throw error;
    }
  }

  private scratchFor(groupId: number, atMost: number): Buffer {
    let b = this.scratch.get(groupId);
    if (b === undefined || b.length < atMost) this.scratch.set(groupId, (b = Buffer.allocUnsafe(atMost)));
    return b;
  }

  private writerOf(table: RoutedTable): ChunkWriter {
    let w = this.writers.get(table.input.file);
    if (!w) this.writers.set(table.input.file, (w = shardCopyWriter(table, this.load.shardCopy)));
    return w;
  }

  private async nodeClient(groupId: number): Promise<pg.Client> {
    const have = this.clients.get(groupId);
    if (have) return have;
    const node = this.load.nodes.get(groupId);
    if (node === undefined) throw new Error(`internal: no node of group ${groupId}`);
    const client = await this.load.connect(node);
    try {
      // The node must be the one the shard map names: a host name that means another server from here (localhost)
      // would not hold these shards.
      const says = await prepareNodeSession(client);
      if (says !== groupId) {
        throw new LoadError('bad-option', `pgsurge connected to ${node.host}:${node.port} for the Citus node of group ${groupId} (pg_dist_node), but that server says it is ${says === undefined ? 'no Citus node' : `group ${says}`}`, {
          hint: 'the node names in pg_dist_node must reach the nodes from this machine too; else load through the coordinator: --citus-route coordinator',
        });
      }
      const lost = this.lost.get(groupId);
      if (lost) {
        await endOldBackend(client, lost);
        this.lost.delete(groupId);
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.clients.set(groupId, client);
    return client;
  }

  private drop(groupId: number): void {
    const client = this.clients.get(groupId);
    if (client === undefined) return;
    this.clients.delete(groupId);
    const backend = backendOf(client);
    if (backend && !this.lost.has(groupId)) this.lost.set(groupId, backend);
    void client.end().catch(() => undefined);
  }
}

/**
 * Sets up a node session for parts and returns the node's Citus group (pg_dist_local_group).
 * Shard writes are meant (citus.enable_manual_changes_to_shards: Citus refuses some changes
 * to shards without it). And a part's COMMIT must be durable when it returns, as the
 * coordinator's chunk row that follows it is: a node whose synchronous_commit is off or
 * local (its server, ALTER ROLE/DATABASE SET) would answer before its WAL is flushed (or
 * replicated), and a node crash would lose rows the coordinator counts; the session is set
 * back to on (remote_write/remote_apply, stronger, are kept).
 */
export async function prepareNodeSession(client: pg.Client): Promise<number | undefined> {
  const r = await client.query<{ groupid: number | null }>(
    `SELECT set_config('citus.enable_manual_changes_to_shards', 'on', false),
            CASE WHEN current_setting('synchronous_commit') IN ('off', 'local') THEN set_config('synchronous_commit', 'on', false) END,
            (SELECT groupid FROM pg_dist_local_group) AS groupid`,
  );
  return r.rows[0]?.groupid ?? undefined;
}

/** The chunk's records in its source, for offsets, lines and the bytes of rejected rows. */
export async function recordsOf(chunk: Chunk): Promise<ChunkRecords> {
  const records = new ChunkRecords(chunk, sourceFramer(chunk.target), await chunkSource(chunk));
  if (records.count !== chunk.records) throw new Error(`internal: the chunk's source frames into ${records.count} records, its data into ${chunk.records}`);
  return records;
}

/**
 * The records `records0` of `chunk` that go to one node, as a chunk of their own: the whole
 * chunk's location (so its ledger row names the chunk's range, and its rejects their own
 * offsets and lines), and its records one by one for isolating a bad row.
 */
function partChunk(chunk: Chunk, routed: RoutedRecords, shards: Int32Array, records0: readonly number[], records: () => Promise<ChunkRecords>, into?: Buffer): Chunk {
  // By shard, in input order within each: the writer sends each shard's records as one slice.
  const idx = byShard(records0, shards);
  const ends = new Array<number>(idx.length);
  const partShards = new Int32Array(idx.length);
  let at = 0;
  for (let k = 0; k < idx.length; k++) {
    const i = idx[k]!;
    at += routed.ends[i]! - (i === 0 ? 0 : routed.ends[i - 1]!);
    ends[k] = at;
    partShards[k] = shards[i]!;
  }
  const part: Chunk = {
    location: chunk.location,
    data: recordBytes(chunk.data, routed, idx, into),
    records: idx.length,
    lines: idx.length,
    target: chunk.target,
    splitRecords: async (): Promise<SplittableRecords> => pickedRecords(await records(), idx, (from, to) => partChunk(chunk, routed, shards, idx.slice(from, to), records)),
  };
  PARTS.set(part, { ends, shards: partShards });
  return part;
}

/** `records` (in input order) grouped by their shard, in input order within each group: a counting sort. */
function byShard(records: readonly number[], shards: Int32Array): number[] {
  let top = 0;
  for (const r of records) if (shards[r]! > top) top = shards[r]!;
  const starts = new Int32Array(top + 2);
  for (const r of records) starts[shards[r]! + 1]!++;
  for (let s = 1; s < starts.length; s++) starts[s]! += starts[s - 1]!;
  const out = new Array<number>(records.length);
  for (const r of records) out[starts[shards[r]!]!++] = r;
  return out;
}

/**
 * The chunk's row in the coordinator's ledger, after every node's part is in: what makes
 * the chunk covered for a resume (its byte range is then not read again), with the
 * chunk's rejects (the nodes' and those refused here) for the reject file.
 */
export async function commitMarker(coordinator: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext, outcome: { loaded: number; skipped: number; rejects: readonly RejectedRow[]; refusedHere: number }): Promise<void> {
  const { budget } = ctx;
  if (outcome.rejects.length === 0) {
    const statement = ctx.ledger.recordStatement(coordinator, chunk, { loaded: outcome.loaded, skipped: outcome.skipped });
    if (statement === '') return;
    ctx.onCommit?.();
    await coordinator.query(`BEGIN; ${statement}; COMMIT`).catch(async (error: unknown) => {
      await coordinator.query('ROLLBACK').catch(() => undefined);
      throw error;
    });
    return;
  }
  if (!budget.fits(outcome.refusedHere)) throw budget.exceeded();
  await coordinator.query('BEGIN');
  try {
    await ctx.ledger.record(coordinator, chunk, { loaded: outcome.loaded, rejected: outcome.rejects.length, skipped: outcome.skipped }, outcome.rejects);
    await commitTakingRejects(coordinator, ctx, outcome.refusedHere);
  } catch (error) {
    await coordinator.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
