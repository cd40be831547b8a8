import type pg from 'pg';
import { inputBytesOf, type Chunk } from '../core/chunk.js';
import type { ChunkQueue } from '../input/chunk-queue.js';
import type { TableProgress } from '../input/table-progress.js';
import { connect, type Target } from '../cluster/target.js';
import { LoadError } from '../core/load-error.js';
import { brokenChunk } from '../writer/count-guard.js';
import { DEFAULT_RETRY_FOR_MS } from '../core/retry.js';
import { unloggedTableReset, type ChunkLedger, type RejectedRow } from '../writer/ledger/ledger.js';
import { LoadWorker, type WorkerContext } from './load-worker.js';
import { sharedFlusher } from '../writer/wal-flusher.js';
import type { LoadCounters, LoadReporter } from '../metrics/load-counters.js';
import { DEFAULT_MAX_REJECTS, RejectBudget } from '../writer/rejects/reject-budget.js';
import { readOnce } from '../input/file-blocks.js';
import { LineIndex } from '../input/line-index.js';
import { lineByte } from '../input/line-ends.js';
import type { ChunkWriter } from '../writer/chunk-writer.js';
import type { ChunkRouter } from '../writer/chunk-transaction.js';
import type { LoadOptions } from './load-options.js';
import { DEFAULT_ON_CONFLICT, ON_CONFLICT_RULES } from '../writer/on-conflict.js';
import type { LoadPlan } from './load-plan.js';

/** Where a committed chunk's rejected rows go (the load's reject files). */
interface RejectSink {
  append(file: string, rows: readonly RejectedRow[]): Promise<void>;
}

/** Flushes the WAL of commits that did not wait for it, on a session of its own. */
interface CommitFlusher {
  /** A commit returned before its flush: flush soon. */
  request(): void;
  release(): Promise<void>;
}

/** What the workers run on, and the pieces they are handed. */
export interface WorkerRun {
  /** One open session per worker. */
  readonly clients: readonly pg.Client[];
  readonly queue: ChunkQueue;
  /** How a chunk reaches the server (with Citus's session settings when its tables are Citus's). */
  readonly writer: ChunkWriter;
  readonly signal: AbortSignal;
  /** Exactly once: each chunk's ledger row commits with it; asked after a lost connection. */
  readonly ledger: ChunkLedger;
  readonly rejects: RejectSink;
  /** Rows already rejected by earlier runs of this load (they count against `--max-rejects`). */
  readonly earlierRejects: number;
  /** Citus: routes a chunk's rows to their shards' nodes. */
  readonly router: (() => ChunkRouter) | undefined;
  readonly counters: LoadCounters;
  readonly progress: TableProgress;
}

/**
 * Runs the workers on the queue until the input ends or the load stops (the signal, the
 * first error). Returns that first error (undefined when none); the queue is closed.
 */
export async function runWorkers(run: WorkerRun, plan: LoadPlan, options: LoadOptions, target: Target, reporter: LoadReporter): Promise<unknown> {
  const { clients, queue, signal } = run;
  let firstError: unknown;
  const stopping = (): boolean => firstError !== undefined || signal.aborted;
  const flusher = walFlusher(plan, options, target);
  const context = workerContext(run, plan, options, target, reporter, { stopping, flusher });
  const workers = clients.map((client) => new LoadWorker(client, context));
  const onAbort = (): void => {
    void queue.close();
    for (const w of workers) w.interrupt();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(
      workers.map((w) =>
        w.run().then(
          () => {
            if (w.left) options.shrink?.released();
          },
          async (error: unknown) => {
            if (!signal.aborted) firstError ??= error;
            await queue.close();
          },
        ),
      ),
    );
  } finally {
    signal.removeEventListener('abort', onAbort);
    await queue.close();
    await flusher?.release();
  }
  return firstError;
}

/** What every worker is handed: one context, shared. */
function workerContext(run: WorkerRun, plan: LoadPlan, options: LoadOptions, target: Target, reporter: LoadReporter, how: { stopping(): boolean; flusher: CommitFlusher | undefined }): WorkerContext {
  const { ledger, writer, clients } = run;
  const lineIndex = new LineIndex();
  const budget = new RejectBudget(options.maxRejects ?? DEFAULT_MAX_REJECTS, run.earlierRejects, plan.withLedger);
  const { unlogged, serverStart, rowTriggers } = plan;
  let nextWorker = clients.length;
  // Workers not (yet) given back by `shrink`.
  let staying = clients.length;
  const flusher = how.flusher;
  return {
    queue: run.queue,
    ledger,
    transaction: {
      writer,
      ledger,
      budget,
      // A JSON array's chunks have element numbers, not lines.
      firstLineOf: async (chunk) => (readOnce(chunk.location.file) || chunk.location.firstRecord !== undefined ? undefined : lineIndex.lineAt(chunk.location.file, chunk.location.byteOffset, lineByte(chunk.target.lineEnd)).catch(() => undefined)),
      triggers: (chunk) => rowTriggers.get(chunk.target.file),
      ...(options.dryRun ? { dryRun: true } : {}),
      stopAtConflict: ON_CONFLICT_RULES[options.onConflict ?? DEFAULT_ON_CONFLICT].stops,
    },
    sessions: {
      connect: () => connect(target.config, `${plan.workerPrefix}${nextWorker++}`),
      // The server restarted under the load: if it crashed, recovery emptied the unlogged tables, rows the ledger counts included.
      reconnected: unlogged.size === 0 ? undefined : (c) => checkUnloggedKept(c, serverStart, unlogged),
      retryForMs: options.retryForMs ?? DEFAULT_RETRY_FOR_MS,
    },
    stop: {
      signal: run.signal,
      stopping: how.stopping,
      leave: () => staying > 1 && options.shrink?.take() === true && staying-- > 0,
    },
    flush: {
      // Commits may return before their WAL flush (the ledger says what a crash took back); not routed Citus loads'.
      deferFlush: deferFlush(plan),
      ...(flusher ? { deferredCommit: () => flusher.request() } : {}),
    },
    events: {
      now: () => run.counters.now(),
      retrying: (chunk, error, attempt, waitMs) => reporter.retrying?.({ chunk, error, attempt, waitMs }),
      reloading: (chunk) => reporter.note?.(`${chunk.location.file} at byte ${chunk.location.byteOffset}: a chunk whose WAL had not reached disk yet was lost with the server; loading it again`),
      committed: (chunk, outcome, startedAt, endedAt) => countCommitted(run, lineIndex, reporter, { chunk, outcome, startedAt, endedAt }),
    },
    ...(run.router ? { router: run.router } : {}),
  };
}

function deferFlush(plan: LoadPlan): boolean {
  return plan.withLedger && plan.citus === undefined;
}

/**
 * Flushes the WAL of commits that did not wait, on a session of its own: `pgsurge <load id> flush`, not under the
 * workers' prefix, so the wait sampler does not count its idle backend as one waiting for pgsurge.
 * `walFlusher: false` leaves the flushes to the walwriter (for measuring).
 * One per process and server (`sharedFlusher`: dbt3 load's tables share it).
 */
function walFlusher(plan: LoadPlan, options: LoadOptions, target: Target): CommitFlusher | undefined {
  if (!deferFlush(plan) || options.walFlusher === false) return undefined;
  const flusherName = `${plan.workerPrefix.slice(0, -1)}flush`;
  const { host, port, database, user } = target.config;
  const use = sharedFlusher(JSON.stringify([host, port, database, user]), () => connect(target.config, flusherName));
  return { request: () => use.flusher.request(), release: () => use.release() };
}

/** A committed chunk, counted: read = loaded + rejected + skipped, its line numbers remembered, its rejects written, the reporter told. */
async function countCommitted(
  run: WorkerRun,
  lineIndex: LineIndex,
  reporter: LoadReporter,
  { chunk, outcome, startedAt, endedAt }: { chunk: Chunk; outcome: Parameters<WorkerContext['events']['committed']>[1]; startedAt: number; endedAt: number },
): Promise<void> {
  const { counters } = run;
  const rejected = outcome.rejects.length;
  // Read = loaded + rejected + skipped, chunk by chunk: a chunk that does not add up stops the load, named.
  if (outcome.loaded + rejected + outcome.skipped !== chunk.records) {
    throw brokenChunk(chunk, chunk.location.firstLine, `it came to ${outcome.loaded} loaded + ${rejected} rejected + ${outcome.skipped} skipped, not the ${chunk.records} records read${outcome.fromLedger ? ' (as the ledger holds it)' : ''}`, 'committed');
  }
  counters.add(chunk.target.table, chunk.target.file, outcome.loaded, inputBytesOf(chunk.location), startedAt, endedAt, {
    read: chunk.records,
    rejected,
    skipped: outcome.skipped,
    triggerSkipped: outcome.triggerSkipped ?? 0,
  });
  if (chunk.location.firstLine !== undefined && chunk.location.file !== '-') {
    lineIndex.remember(chunk.location.file, chunk.location.byteOffset + chunk.location.byteLength, chunk.location.firstLine + chunk.lines);
  }
  await run.rejects.append(chunk.target.file, outcome.rejects);
  reporter.chunkLoaded?.({ chunk, rows: outcome.loaded, result: { loaded: outcome.loaded, skipped: outcome.skipped }, seconds: (endedAt - startedAt) / 1000, counters });
  run.progress.counted(chunk.target.table);
}

/** After a reconnect: an unlogged table this load writes to must not have been emptied by a crash recovery since the load began. */
async function checkUnloggedKept(client: pg.Client, serverStart: string, unlogged: ReadonlyMap<number, string>): Promise<void> {
  const now = (await client.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t')).rows[0]!.t;
  if (now === serverStart) return;
  for (const [oid, name] of unlogged) {
    const lost = await unloggedTableReset(client, oid, name);
    if (lost > 0) {
      throw new LoadError('server-lost', `the server restarted and its crash recovery emptied the unlogged table ${name}: the ${lost} rows committed to it are gone`, {
        hint: 'run the same command again: pgsurge sees the table emptied and loads every row again (an unlogged table keeps nothing through a crash)',
      });
    }
  }
}
