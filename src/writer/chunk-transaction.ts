import type pg from 'pg';
import { chunkSource, type Chunk } from '../core/chunk.js';
import { ChunkRecords } from '../input/chunk-split.js';
import { copyColumnFromWhere, isServerError } from '../core/load-error.js';
import { sourceFramer } from '../input/framer-for.js';
import type { Unframable } from '../core/chunk.js';
import type { ChunkLedger, RejectedRow } from './ledger/ledger.js';
import type { RejectBudget } from './rejects/reject-budget.js';
import { conflictStop } from './on-conflict.js';
import type { ChunkResult, ChunkWriter } from './chunk-writer.js';
import { RedoAsText } from './chunk-writer.js';
import { commitModeStatement, INSERTED_LSN, type Deferral } from './wal-flush.js';
import { brokenChunk, checkCount, CountMismatch, type CheckedResult, type RowDroppingTriggers } from './count-guard.js';

/** What one chunk came to, once committed. */
export interface ChunkOutcome {
  readonly loaded: number;
  readonly skipped: number;
  /** Of `skipped`, the rows a BEFORE INSERT row trigger of the table kept out (it returned NULL: trigger-based partitioning). */
  readonly triggerSkipped?: number;
  readonly rejects: readonly RejectedRow[];
  /**
   * Set when the COMMIT returned without waiting for its WAL flush: the chunk is durable
   * once WAL is flushed up to here, and must not be counted before.
   */
  readonly durableAt?: string;
}

/**
 * Commits the chunks of some tables another way than one COPY on the worker's connection
 * (a Citus table's rows routed to its shards' nodes: `citus/routed-chunk.ts`). One per load
 * worker (its own connections); `commitChunk` hands it the chunks it `routes`.
 */
export interface ChunkRouter {
  routes(chunk: Chunk): boolean;
  /** The chunk, exactly once, its ledger row on `client` (the coordinator) last. */
  commit(client: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome>;
  close(): Promise<void>;
  /** Ctrl-C: the load stops; what the router's own sessions are doing is cut short (a chunk without its ledger row is loaded again by a resume). */
  interrupt?(): void;
  /** A chunk it routes was found in the ledger after a lost connection (its COMMIT's reply was lost): done, without `commit`. */
  foundCommitted?(chunk: Chunk): void;
}

export interface ChunkTransactionContext {
  readonly writer: ChunkWriter;
  readonly ledger: ChunkLedger;
  readonly budget: RejectBudget;
  /** The 1-based line of a chunk's first record, when the chunk does not know it (a byte range mid-file). */
  firstLineOf(chunk: Chunk): Promise<number | undefined>;
  /** Called just before COMMIT is sent: from then on, Ctrl-C waits for the reply instead of cutting the connection. */
  onCommit?(): void;
  /**
   * For a chunk's COMMIT (one transaction per chunk, no rejects): commit without waiting
   * for the WAL flush, and the outcome says where it must reach. Without it, the COMMIT
   * waits as the session's synchronous_commit says.
   */
  readonly deferral?: Deferral;
  /**
   * A dry run: each chunk's transaction is rolled back where it would commit (its deferred
   * constraints checked first), so the outcome says what a load would do and nothing stays.
   */
  readonly dryRun?: boolean;
  /** Commits the chunks it routes its own way (a Citus table's rows straight to its shards' nodes); the load worker's own. */
  readonly router?: ChunkRouter;
  /**
   * The BEFORE INSERT row triggers of a chunk's table (found before the load): with them,
   * the server may store fewer rows than it was sent, and the difference is counted as
   * skipped by the trigger. Without them, any difference is a broken chunk.
   */
  readonly triggers?: RowDroppingTriggers;
  /** `--on-conflict error`: a row that violates a unique key stops the load instead of being rejected. */
  readonly stopAtConflict?: boolean;
}

/**
 * Errors that a row of the input causes (bad data, a violated constraint): the chunk is
 * split and the row rejected. Anything else (a lost connection, a full disk) fails the
 * whole chunk and is the caller's to retry or report.
 */
export function isRowError(error: unknown): boolean {
  return isServerError(error) && (error.code.startsWith('22') || error.code.startsWith('23'));
}

/** How a chunk's transaction ends: COMMIT, or in a dry run its deferred constraints checked and ROLLBACK. */
function endStatements(ctx: ChunkTransactionContext): string[] {
  return ctx.dryRun ? ['SET CONSTRAINTS ALL IMMEDIATE', 'ROLLBACK'] : ['COMMIT'];
}

/** The count guard (`count-guard.ts`) for one result of `writer` on `chunk`. */
function checked(ctx: ChunkTransactionContext, writer: ChunkWriter, chunk: Chunk, r: ChunkResult): CheckedResult {
  return checkCount(chunk, r, ctx.triggers?.(chunk), writer.name === 'copy');
}

/** A chunk's outcome with its trigger skips, when there are any. */
function outcomeOf(r: CheckedResult, rejects: readonly RejectedRow[]): ChunkOutcome {
  return { loaded: r.loaded, skipped: r.skipped, rejects, ...(r.triggerSkipped > 0 ? { triggerSkipped: r.triggerSkipped } : {}) };
}

/**
 * Loads a chunk exactly once: its rows and its ledger row in one transaction. If the
 * server refuses a row, the transaction is rolled back and the chunk loaded again in
 * parts, each in a savepoint: split around the record the error names (rows before it,
 * the bad row, rows after it), or bisected when the error names none (a foreign key, a
 * deferred constraint), until every bad row stands alone and is rejected. The good rows,
 * the ledger row and the rejected rows then commit together.
 *
 * The count guard: the chunk commits only when the server's count of its rows equals the
 * records sent (`checkCount`). When it differs, the transaction is rolled back and the
 * chunk bisected like a refused one: each part's count is checked in its savepoint, and
 * a record whose count still differs alone is rejected with what the server did.
 */
export async function commitChunk(client: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
  // A router that takes unframable chunks keeps them in its order (key lanes: each chunk's ledger row in input order).
  if (ctx.router?.routes(chunk)) return ctx.router.commit(client, chunk, ctx);
  if (chunk.unframable !== undefined) return commitUnframable(client, chunk, chunk.unframable, ctx);
  if (ctx.writer.ownsTransactions) {
    // --commit-every / autocommit: the writer's own transactions, no ledger, a bad row stops the load.
    // A count that differs cannot be rolled back (its rows are committed): it stops the load too.
    const r = await ctx.writer.writeRows(client, chunk);
    try {
      return outcomeOf(checked(ctx, ctx.writer, chunk, r), []);
    } catch (error) {
      if (!(error instanceof CountMismatch)) throw error;
      throw brokenChunk(chunk, chunk.location.firstLine ?? (await ctx.firstLineOf(chunk)), error.message, 'committed-by-writer');
    }
  }
  let refused: unknown;
  try {
    const { writer } = ctx;
    let sent: ChunkResult;
    if (writer.beginAndWriteRows) sent = await writer.beginAndWriteRows(client, chunk);
    else {
      await client.query('BEGIN');
      sent = await writer.writeRows(client, chunk);
    }
    // Before the ledger row: a chunk whose count differs is rolled back and split below.
    const r = checked(ctx, writer, chunk, sent);
    const { deferral } = ctx;
    ctx.onCommit?.();
    // The ledger row, the commit mode and the COMMIT go in one round trip (the server
    // waits on the client between chunks, so each round trip is lost loading time). A
    // deferral comes only with the ledger: its row gives the transaction an id, so a COMMIT
    // that waits flushes WAL up to its own record, past any earlier commit.
    const statements = [ctx.ledger.recordStatement(client, chunk, r), deferral && commitModeStatement(client, deferral), ...endStatements(ctx)];
    if (deferral) statements.push(INSERTED_LSN);
    const replies = [await client.query(statements.filter(Boolean).join('; '))].flat();
    // Committed, whatever happens next: if the connection dies before this answer, the
    // worker's retry finds the chunk in the ledger (after flushing WAL).
    let durableAt: string | undefined;
    if (deferral) {
      const mode = replies.find((reply) => reply.fields[0]?.name === 'commit_mode')?.rows[0] as { commit_mode: string } | undefined;
      const lsn = (replies.at(-1)?.rows[0] as { lsn?: string } | undefined)?.lsn;
      // Counting a commit that did not wait as if it had would count it before it is on disk.
      if (mode === undefined || lsn === undefined) throw new Error('internal: the commit query did not say how it committed');
      if (mode.commit_mode === 'off') durableAt = lsn;
    }
    return { ...outcomeOf(r, []), ...(durableAt === undefined ? {} : { durableAt }) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (!isRowError(error) && !(error instanceof RedoAsText) && !(error instanceof CountMismatch)) throw error;
    refused = error;
  }
  // A refused first try through another writer (binary COPY) says nothing about how the parts fare through this one.
  return isolateRejects(client, chunk, ctx.writer.refusedWriter ? undefined : refused, ctx);
}

/**
 * Sends the COMMIT of a chunk's transaction that rejects `rejected` rows, taken from the
 * reject budget first (the caller has checked they fit) and given back when the COMMIT
 * fails; `onCommit` just before it.
 */
export async function commitTakingRejects(client: pg.Client, ctx: ChunkTransactionContext, rejected: number, rows: readonly RejectedRow[] = []): Promise<void> {
  ctx.budget.take(rejected, rows);
  try {
    ctx.onCommit?.();
    await client.query(endStatements(ctx).join('; '));
  } catch (error) {
    ctx.budget.giveBack(rejected, rows);
    throw error;
  }
}

/**
 * A record the framer could not frame (a malformed NDJSON line, a text record COPY would
 * read otherwise alone than in the whole file): rejected like a row the server refuses,
 * verbatim, and its chunk's ledger row committed with the reject, so a resume neither
 * loads nor rejects it twice. The end-of-data marker at the end of the input is counted as
 * skipped the same way.
 */
async function commitUnframable(client: pg.Client, chunk: Chunk, why: Unframable, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
  const { budget } = ctx;
  if (why.skip) {
    // The end-of-data marker at the end of the input: read, neither loaded nor rejected.
    await client.query('BEGIN');
    try {
      await ctx.ledger.record(client, chunk, { loaded: 0, rejected: 0, skipped: 1 }, []);
      ctx.onCommit?.();
      await client.query(endStatements(ctx).join('; '));
      return { loaded: 0, skipped: 1, rejects: [] };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
  const line = chunk.location.firstLine ?? (await ctx.firstLineOf(chunk));
  const reject: RejectedRow = {
    file: chunk.location.file,
    line,
    byteOffset: chunk.location.byteOffset,
    sqlstate: undefined,
    column: undefined,
    message: chunk.target.format === 'ndjson' ? `cannot be read as an NDJSON line${why.character !== undefined ? ` (at character ${why.character})` : ''}: ${why.message}` : why.message,
    record: await chunkSource(chunk),
  };
  if (!budget.fits(1)) throw budget.exceeded([reject]);
  await client.query('BEGIN');
  try {
    await ctx.ledger.record(client, chunk, { loaded: 0, rejected: 1, skipped: 0 }, [reject]);
    await commitTakingRejects(client, ctx, 1, [reject]);
    return { loaded: 0, skipped: 0, rejects: [reject] };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

interface Part {
  readonly from: number;
  readonly to: number;
  /** The error this part is already known to fail with (the whole chunk's first attempt). */
  readonly error?: unknown;
  readonly chunk?: Chunk;
}

async function isolateRejects(client: pg.Client, chunk: Chunk, refused: unknown, ctx: ChunkTransactionContext): Promise<ChunkOutcome> {
  const { budget } = ctx;
  const writer = ctx.writer.refusedWriter ?? ctx.writer;
  const records = chunk.splitRecords ? await chunk.splitRecords() : new ChunkRecords(chunk, sourceFramer(chunk.target), await chunkSource(chunk));
  const firstLine = chunk.location.firstLine ?? (await ctx.firstLineOf(chunk));
  const rejects: RejectedRow[] = [];
  let loaded = 0;
  let skipped = 0;
  let triggerSkipped = 0;
  // The parts are cut from the records framed again from the source: they must be the records that were sent.
  if (records.count !== chunk.records) {
    throw brokenChunk(chunk, firstLine, `its records cannot be told apart to find the one the server ${refused instanceof CountMismatch ? 'miscounted' : 'refused'} (framed again, its source holds ${records.count} records, not ${chunk.records}): ${(refused as Error | undefined)?.message ?? 'refused'}`, 'rolled-back');
  }

  const reject = (i: number, error: unknown): void => {
    const e = error as Error & { code?: string; where?: string; column?: string; detail?: string };
    const line = firstLine === undefined ? undefined : firstLine + records.linesBefore(i);
    const byteOffset = chunk.location.byteOffset + records.start(i);
    const stop = ctx.stopAtConflict ? conflictStop(error, `${chunk.location.file}${line === undefined ? '' : ` line ${line}`} (byte ${byteOffset})`) : undefined;
    if (stop) throw stop;
    rejects.push({
      file: chunk.location.file,
      line,
      byteOffset,
      sqlstate: isServerError(error) ? error.code : undefined,
      column: e.column ?? copyColumnFromWhere(e.where),
      message: e.detail ? `${e.message} (${e.detail})` : e.message,
      record: Buffer.from(records.sourceOf(i)),
    });
    if (!budget.fits(rejects.length)) throw budget.exceeded(rejects);
  };

  await client.query('BEGIN');
  try {
    // Deferred constraints would fail at COMMIT, where no savepoint can catch them: check them per part.
    await client.query('SET CONSTRAINTS ALL IMMEDIATE');
    // Depth first, in input order: a stack with the later part pushed first.
    const work: Part[] = [{ from: 0, to: records.count, error: refused, chunk }];
    while (work.length > 0) {
      const part = work.pop()!;
      const partChunk = part.chunk ?? records.slice(part.from, part.to);
      let error = part.error;
      if (error === undefined) {
        await client.query('SAVEPOINT pgsurge_part');
        try {
          const r = checked(ctx, writer, partChunk, await writer.writeRows(client, partChunk));
          await client.query('RELEASE SAVEPOINT pgsurge_part');
          loaded += r.loaded;
          skipped += r.skipped;
          triggerSkipped += r.triggerSkipped;
          continue;
        } catch (e) {
          if (!isRowError(e) && !(e instanceof CountMismatch)) throw e;
          await client.query('ROLLBACK TO SAVEPOINT pgsurge_part');
          error = e;
        }
      }
      const n = part.to - part.from;
      if (n === 1) {
        reject(part.from, error);
        continue;
      }
      const named = writer.failedRecord?.(error, partChunk);
      if (named !== undefined && named >= 1 && named <= n) {
        // Rows before the named one, then the named one alone (it may load there: a
        // duplicate of a row in the same part fails again, a misread line number does
        // not reject a good row), then the rows after it.
        const bad = part.from + named - 1;
        if (bad + 1 < part.to) work.push({ from: bad + 1, to: part.to });
        work.push(part.from === bad && part.to === bad + 1 ? { from: bad, to: bad + 1, error } : { from: bad, to: bad + 1 });
        if (part.from < bad) work.push({ from: part.from, to: bad });
      } else {
        const mid = part.from + Math.floor(n / 2);
        work.push({ from: mid, to: part.to }, { from: part.from, to: mid });
      }
    }
    rejects.sort((a, b) => a.byteOffset - b.byteOffset);
    // Every record sent is loaded, rejected or skipped, once: else the chunk is not recorded as done.
    if (loaded + rejects.length + skipped !== chunk.records) {
      throw brokenChunk(chunk, firstLine, `its parts came to ${loaded} loaded + ${rejects.length} rejected + ${skipped} skipped, not the ${chunk.records} records read`, 'rolled-back');
    }
    await ctx.ledger.record(client, chunk, { loaded, rejected: rejects.length, skipped }, rejects);
    if (!budget.fits(rejects.length)) throw budget.exceeded(rejects);
    await commitTakingRejects(client, ctx, rejects.length, rejects);
    return { loaded, skipped, rejects, ...(triggerSkipped > 0 ? { triggerSkipped } : {}) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
