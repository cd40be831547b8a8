import type { Socket } from 'node:net';
import type pg from 'pg';
import type { Chunk, SplittableRecords } from '../../core/chunk.js';
import { backendOf, endOldBackend, type Backend } from '../../core/old-backend.js';
import { backoffMs, isRetryable, sleep } from '../../core/retry.js';
import { pickedRecords, type ChunkRecords } from '../../input/chunk-split.js';
import { NO_LEDGER, type RejectedRow } from '../ledger/ledger.js';
import { commitChunk, isRowError, type ChunkOutcome, type ChunkRouter, type ChunkTransactionContext } from '../chunk-transaction.js';
import { brokenChunk } from '../count-guard.js';
import { recordBytes } from '../citus/route-records.js';
import { commitMarker, recordsOf } from '../citus/routed-chunk.js';
import { flushWal } from '../wal-flush.js';
import { canonicalInt, keyedRecords, keyHash, settledKey, type KeyedRecords, type LaneSpec } from './key-lanes.js';

/** What the lanes of an upsert share: their number, how to open one, each input's key fields, and each chunk's place. */
export interface LaneLoad {
  readonly lanes: number;
  /** Opens a lane's session (set up as a worker's: the writer's `prepare` is run on it). */
  connect(lane: number): Promise<pg.Client>;
  /** The key fields of a chunk's records, or undefined when its input is not routed to lanes. */
  specOf(chunk: Chunk): LaneSpec | undefined;
  /** The chunk's place in the input, 0, 1, 2 … in the order the queue handed the chunks out (input order). */
  placeOf(chunk: Chunk): number;
  /** How long a lane tries to get its session back after losing it. */
  readonly retryForMs: number;
  /** The load's chunk size: a lane's staging table is given local buffers to hold a part of it in memory. */
  readonly chunkBytes: number;
}

/** Lane parts as the router hands them over whose keys all differ: applied as they are, no key's last row to find. */
const DISTINCT_KEYS = new WeakSet<Chunk>();

/** A lane's part whose keys all differ. */
export function hasDistinctKeys(chunk: Chunk): boolean {
  return DISTINCT_KEYS.has(chunk);
}

/** Lane parts that repeat a key, of a table with a constraint between rows: their runs of distinct keys (`LaneSpec.inRuns`). */
const RUNS = new WeakMap<Chunk, readonly Chunk[]>();

/** A lane's part as runs of rows of distinct keys, in file order, each applied as a part of its own (undefined: applied whole). */
export function runsOf(chunk: Chunk): readonly Chunk[] | undefined {
  return RUNS.get(chunk);
}

/** One lane: its session, and the parts it applies one after another, in the order they were handed to it. */
interface Lane {
  readonly index: number;
  client: pg.Client | undefined;
  /** Its session lost since: the backend is ended (and seen gone) before the lane writes again. */
  lost: Backend | undefined;
  /** Settles when every part handed to the lane so far is done. */
  tail: Promise<void>;
  /** A part failed: the lane applies nothing more (a later part of a key before an earlier one would win). */
  failed: { readonly error: unknown } | undefined;
}

/** Waits for a counter to reach a value; `fail` rejects every waiter. */
class Turns {
  next = 0;
  private waiters: { at: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private failure: { error: unknown } | undefined;

  wait(at: number): Promise<void> {
    if (this.next >= at) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure.error);
    return new Promise((resolve, reject) => this.waiters.push({ at, resolve, reject }));
  }

  advance(past: number): void {
    if (past + 1 <= this.next) return;
    this.next = past + 1;
    const ready = this.waiters.filter((w) => w.at <= this.next);
    this.waiters = this.waiters.filter((w) => w.at > this.next);
    for (const w of ready) w.resolve();
  }

  fail(error: unknown): void {
    this.failure ??= { error };
    for (const w of this.waiters.splice(0)) w.reject(error);
  }
}

/**
 * An upsert's rows spread over lanes by key: every row of one key goes to the same lane,
 * each lane is one session applying the parts handed to it one after another, and parts
 * are handed out chunk after chunk in input order. So each key's rows reach the table in
 * file order, and the last one wins, as applied one by one, at any number of lanes,
 * without recording anything per key.
 *
 * The load's workers (two, sharing this router) take chunks in input order: while the
 * lanes apply one chunk, the other worker reads the keys of the next and hands its parts
 * out. Each lane part commits on its own; then the chunk's ledger row commits on the
 * worker's session, chunk after chunk in input order, so the chunks the ledger covers are
 * always the input's first ones. A load cut off (a crash, a kill) has applied at most
 * some parts of the chunks after those; the resume applies all of them again, in order:
 * a lane applying again, in order, parts it had applied leaves each key with the same last
 * row. docs/exactly-once.md says why in full.
 */
export class LaneRouter implements ChunkRouter {
  private readonly lanes: Lane[];
  /** The workers using the router (each `open`s and `close`s it). */
  private users = 0;
  /** Chunks handed to the lanes: their parts' outcome, by place; kept until the chunk's ledger row commits (a retry of the row reuses it). */
  private readonly handedOut = new Map<number, Promise<ChunkOutcome | undefined>>();
  /** Chunks are handed out in their order, and their ledger rows committed in it. */
  private readonly handing = new Turns();
  private readonly marking = new Turns();
  /** Integer spellings the server has read (`0x10`, `1_000`): their decimal, or undefined where it refused them. */
  private readonly spelled = new Map<string, string | undefined>();
  /** Ctrl-C: the lanes apply nothing more, and retry nothing. */
  private interrupted: Error | undefined;

  constructor(private readonly load: LaneLoad) {
    this.lanes = Array.from({ length: load.lanes }, (_, index) => ({ index, client: undefined, lost: undefined, tail: Promise.resolve(), failed: undefined }));
  }

  /** A worker starts using the router. */
  open(): this {
    this.users++;
    return this;
  }

  routes(): boolean {
    return true;
  }

  /**
   * Ctrl-C: each lane's connection is cut (the server rolls its part back; a part whose
   * COMMIT got through is past the ledger, applied again by a resume), and workers waiting
   * for their chunk's turn are told the load stopped.
   */
  interrupt(): void {
    if (this.interrupted) return;
    this.interrupted = new Error('the load was interrupted');
    this.handing.fail(this.interrupted);
    this.marking.fail(this.interrupted);
    for (const lane of this.lanes) (lane.client as unknown as { connection?: { stream?: Socket } } | undefined)?.connection?.stream?.destroy();
  }

  /**
   * A worker is done with the router. Another worker may be waiting for the turn of a chunk
   * this one took and will not commit (it stopped on an error, or on the load's stop): it is
   * told the load stopped. With two workers nothing else can be waiting then: the other's
   * chunks before its own are all done.
   */
  async close(): Promise<void> {
    this.users--;
    const stopped = new Error('the load stopped');
    this.handing.fail(stopped);
    this.marking.fail(stopped);
    if (this.users > 0) return;
    await Promise.allSettled(this.lanes.map(async (lane) => lane.client?.end()));
    for (const lane of this.lanes) lane.client = undefined;
  }

  /** Its ledger row committed (all its parts before it), its reply lost: the chunks after it take their turns. */
  foundCommitted(chunk: Chunk): void {
    const place = this.load.placeOf(chunk);
    this.handedOut.delete(place);
    this.handing.advance(place);
    this.marking.advance(place);
  }

  async commit(worker: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
    const place = this.load.placeOf(chunk);
    let parts = this.handedOut.get(place);
    if (parts === undefined) {
      await this.handing.wait(place);
      // A chunk of one record pgsurge could not frame has no parts: only its reject and ledger row, in its turn.
      // Parts that could not be handed out (the server's reading of a key failed) leave the turn where it is: the
      // chunks after it wait for this worker's retry, or, if it gives up, for its `close`.
      parts = chunk.unframable !== undefined ? Promise.resolve(undefined) : (await this.handOut(worker, chunk, ctx)).outcome;
      // A failed part fails the chunk, not the process (the worker's error says which).
      parts.catch(() => undefined);
      this.handedOut.set(place, parts);
      this.handing.advance(place);
    }
    const outcome = await parts;
    await this.marking.wait(place);
    const done = outcome === undefined ? await commitChunk(worker, chunk, { ...ctx, router: undefined }) : await this.mark(worker, chunk, ctx, outcome);
    this.handedOut.delete(place);
    this.marking.advance(place);
    return done;
  }

  /** The chunk's ledger row with its parts' rejects, on the worker's session. */
  private async mark(worker: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext, outcome: ChunkOutcome): Promise<ChunkOutcome> {
    await commitMarker(worker, chunk, ctx, { loaded: outcome.loaded, skipped: outcome.skipped, rejects: outcome.rejects, refusedHere: 0 });
    // Without a ledger row (--no-ledger) no COMMIT after the parts waits for their WAL flush: the chunk counts once it is flushed.
    if (ctx.ledger === NO_LEDGER) await flushWal(worker);
    return outcome;
  }

  /** Reads the chunk's keys, hands each lane its part, and returns what the parts come to. */
  private async handOut(worker: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext): Promise<{ readonly outcome: Promise<ChunkOutcome> }> {
    const spec = this.load.specOf(chunk);
    if (spec === undefined) throw new Error(`internal: no key lanes for ${chunk.target.file}`);
    const keyed = keyedRecords(chunk.data, spec);
    if (keyed.ends.length !== chunk.records) throw new Error(`internal: the key lanes found ${keyed.ends.length} records in a chunk of ${chunk.records}`);
    const keys = await settledKeys(worker, keyed, spec, this.spelled);
    const count = this.lanes.length;
    const byLane: number[][] = Array.from({ length: count }, () => []);
    // A record without a key (NULL, missing, refused) can equal no other: any lane; the server refuses it there.
    const hashes = new Uint32Array(keys.length);
    keys.forEach((key, i) => {
      if (key === undefined) byLane[i % count]!.push(i);
      else byLane[(hashes[i] = keyHash(key)) % count]!.push(i);
    });
    let sourceRecords: Promise<ChunkRecords> | undefined;
    const records = (): Promise<ChunkRecords> => (sourceRecords ??= recordsOf(chunk));
    const parts = byLane.flatMap((idx, lane) => (idx.length === 0 ? [] : [this.enqueue(this.lanes[lane]!, laneChunk(chunk, { ...keyed, keys, hashes, inRuns: spec.inRuns === true }, idx, records), ctx)]));
    return { outcome: this.sum(chunk, ctx, parts) };
  }

  private async sum(chunk: Chunk, ctx: ChunkTransactionContext, parts: readonly Promise<ChunkOutcome>[]): Promise<ChunkOutcome> {
    const settled = await Promise.allSettled(parts);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    let loaded = 0;
    let skipped = 0;
    const rejects: RejectedRow[] = [];
    for (const s of settled as PromiseFulfilledResult<ChunkOutcome>[]) {
      loaded += s.value.loaded;
      skipped += s.value.skipped;
      rejects.push(...s.value.rejects);
    }
    rejects.sort((a, b) => a.byteOffset - b.byteOffset);
    if (loaded + skipped + rejects.length !== chunk.records) {
      const firstLine = chunk.location.firstLine ?? (await ctx.firstLineOf(chunk));
      throw brokenChunk(chunk, firstLine, `its rows over ${parts.length} key lanes came to ${loaded} applied + ${rejects.length} rejected + ${skipped} skipped, not the ${chunk.records} records read`, 'rolled-back');
    }
    return { loaded, skipped, rejects };
  }

  /** Hands `part` to `lane`, after the parts handed to it before. */
  private enqueue(lane: Lane, part: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
    const run = lane.tail.then(async () => {
      if (lane.failed) throw lane.failed.error;
      if (this.interrupted) throw this.interrupted;
      return this.apply(lane, part, ctx);
    });
    lane.tail = run.then(
      () => undefined,
      (error: unknown) => {
        lane.failed ??= { error };
      },
    );
    return run;
  }

  /** One lane's part, in one transaction on the lane's session, without a ledger row; on a lost session, again on a new one. */
  private async apply(lane: Lane, part: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
    let failingSince: number | undefined;
    for (let tries = 0; ; tries++) {
      try {
        const client = await this.laneClient(lane);
        return await commitChunk(client, part, { writer: ctx.writer, ledger: NO_LEDGER, budget: ctx.budget, firstLineOf: ctx.firstLineOf, ...(ctx.triggers ? { triggers: ctx.triggers } : {}) });
      } catch (error) {
        if (!isRetryable(error) || this.interrupted) throw error;
        this.drop(lane);
        failingSince ??= Date.now();
        if (Date.now() - failingSince > this.load.retryForMs) throw error;
        await sleep(backoffMs(tries));
      }
    }
  }

  private async laneClient(lane: Lane): Promise<pg.Client> {
    if (lane.client) return lane.client;
    const client = await this.load.connect(lane.index);
    // A part's COMMIT need not wait for its WAL flush: the chunk's ledger row commits after every part of it, on a session
    // whose COMMIT waits, and a flush covers the WAL written before it. A crash before that row loses at most parts of
    // chunks the ledger does not cover, and each lane keeps the parts it committed first: a resume applies them again.
    // Its staging table in memory (temp_buffers, 8 MB by default, is set before the session's first temporary table).
    const tempKb = Math.max(8192, Math.ceil((2 * this.load.chunkBytes) / 1024));
    await client.query(`SELECT set_config('synchronous_commit', 'off', false), set_config('temp_buffers', '${tempKb}kB', false)`).catch(async (error: unknown) => {
      await client.end().catch(() => undefined);
      throw error;
    });
    if (lane.lost) {
      // Its transaction must be over (committed or not) before the part is applied again, and the parts after it.
      await endOldBackend(client, lane.lost).catch(async (error: unknown) => {
        await client.end().catch(() => undefined);
        throw error;
      });
      lane.lost = undefined;
    }
    lane.client = client;
    return client;
  }

  private drop(lane: Lane): void {
    const client = lane.client;
    if (client === undefined) return;
    lane.client = undefined;
    lane.lost ??= backendOf(client);
    void client.end().catch(() => undefined);
  }
}

/** A chunk's records' keys and their hashes (`keyHash`; 0 where there is no key). */
interface KeysOf {
  readonly keys: readonly (string | undefined)[];
  readonly hashes: Uint32Array;
}

/**
 * Whether two of the records `idx` have one key: their hashes in an open-addressing table,
 * the keys themselves compared only where two hashes are equal (most parts repeat no key,
 * and this costs far less than a map of the keys).
 */
function repeatsKey({ keys, hashes }: KeysOf, idx: readonly number[]): boolean {
  let size = 16;
  while (size < 2 * idx.length) size *= 2;
  const table = new Int32Array(size).fill(-1);
  const mask = size - 1;
  for (const i of idx) {
    const key = keys[i];
    if (key === undefined) continue;
    const h = hashes[i]!;
    let slot = h & mask;
    for (let j = table[slot]!; j !== -1; j = table[slot]!) {
      if (hashes[j] === h && keys[j] === key) return true;
      slot = (slot + 1) & mask;
    }
    table[slot] = i;
  }
  return false;
}

/**
 * The records' keys, with the integer spellings only the server reads (`0x10`, `1_000`)
 * asked of it, each once per load (`spelled` keeps the answers: the decimal, or undefined
 * where the server refused the value, and so will refuse the row).
 */
export async function settledKeys(client: pg.Client, keyed: KeyedRecords, spec: LaneSpec, spelled: Map<string, string | undefined>): Promise<(string | undefined)[]> {
  if (keyed.unsure.size === 0) return keyed.keys;
  const keys = [...keyed.keys];
  for (const [record, values] of keyed.unsure) {
    const read = new Map<number, string | undefined>();
    for (const { column, value } of values) {
      const type = spec.types[column]!;
      const asked = `${type}\u0000${value}`;
      if (!spelled.has(asked)) {
        try {
          const r = await client.query<{ v: string }>(`SELECT $1::${type}::text AS v`, [value]);
          spelled.set(asked, canonicalInt(r.rows[0]!.v));
        } catch (error) {
          if (!isRowError(error)) throw error;
          spelled.set(asked, undefined);
        }
      }
      read.set(column, spelled.get(asked));
    }
    keys[record] = settledKey(keys, record, read);
  }
  return keys;
}

/** A chunk's records, with their keys, as the lanes cut it. */
interface LaneRecords extends KeysOf, Pick<KeyedRecords, 'ends'> {
  readonly inRuns: boolean;
}

/**
 * A lane's part of `chunk`, the records `idx` (in input order), as a chunk of its own: the
 * whole chunk's location (its rejects keep their own offsets and lines), and its records
 * one by one for isolating a bad row (`splitRecords`: a refused part is split, so an
 * earlier row of a key whose last row is bad is applied, as one by one). All its rows are
 * sent: the server reads every one (one it cannot read is rejected, as one by one, though
 * a later row of its key writes over it). A part whose keys all differ is marked so, and
 * applied as it is; else its last row of each key is applied (the earlier ones counted as
 * skipped by the apply's row count), or, where the table has a constraint between rows,
 * its runs of distinct keys one after another.
 */
function laneChunk(chunk: Chunk, of: LaneRecords, idx: readonly number[], records: () => Promise<ChunkRecords>): Chunk {
  const part: Chunk = {
    location: chunk.location,
    data: recordBytes(chunk.data, of, idx),
    records: idx.length,
    lines: idx.length,
    target: chunk.target,
    splitRecords: async (): Promise<SplittableRecords> => pickedRecords(await records(), idx, (from, to) => laneChunk(chunk, of, idx.slice(from, to), records)),
  };
  if (!repeatsKey(of, idx)) DISTINCT_KEYS.add(part);
  else if (of.inRuns) RUNS.set(part, distinctRuns(of, idx).map((run) => laneChunk(chunk, of, run, records)));
  return part;
}

/** The records `idx` cut, in order, into runs without a repeated key: a run ends before the record whose key it holds. */
function distinctRuns({ keys }: KeysOf, idx: readonly number[]): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  let seen = new Set<string>();
  for (const i of idx) {
    const key = keys[i];
    if (key !== undefined && seen.has(key)) {
      runs.push(run);
      run = [];
      seen = new Set();
    }
    if (key !== undefined) seen.add(key);
    run.push(i);
  }
  runs.push(run);
  return runs;
}
