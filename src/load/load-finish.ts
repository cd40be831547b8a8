import type pg from 'pg';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import type { Target } from '../cluster/target.js';
import { copyColumnFromWhere, copyLineFromWhere, isServerError, LoadError } from '../core/load-error.js';
import { LoadStopped } from './load-stopped.js';
import { serverTrouble, withTimeout } from '../core/retry.js';
import { ledgerTotals, markCompleted } from '../writer/ledger/ledger.js';
import { LoadCounters, type LoadSummary } from '../metrics/load-counters.js';
import type { ChunkWriter } from '../writer/chunk-writer.js';
import type { RoutingPlan } from '../writer/citus/plan-routing.js';
import type { TableWire } from '../wire/wire-report.js';
import type { LoadRejects } from './load-rejects.js';
import type { LoadPlan } from './load-plan.js';
import type { OpenedReaders } from './load-open.js';
import { withLiveClient } from './load-sessions.js';

/** How the workers' run ended. */
export interface RunOutcome {
  /** The first worker's error, if any. */
  readonly firstError: unknown;
  readonly signal: AbortSignal;
  readonly workers: number;
  readonly writer: ChunkWriter;
  readonly rejects: LoadRejects;
  readonly routing: RoutingPlan | undefined;
  /** An upsert by key lanes: a chunk's parts commit each on its lane, before the chunk is recorded. */
  readonly lanes?: boolean;
}

/**
 * The summary, or the first error that stops the load (a reject file not written in full,
 * a stop, the first worker's error, a Citus shard moved meanwhile), thrown as LoadStopped
 * with the summary of what the ledger holds.
 */
export async function finishLoad(
  control: pg.Client,
  target: Target,
  load: { readonly inputs: readonly LoadTarget[]; readonly plan: LoadPlan; readonly readers: OpenedReaders },
  run: RunOutcome,
): Promise<LoadSummary> {
  const { plan, inputs } = load;
  const { withLedger, loadId } = plan;
  const { firstError, rejects, routing } = run;
  const summary = (): LoadSummary =>
    load.readers.counters.summary(run.workers, plan.where, {
      ...(withLedger ? { loadId } : {}),
      rejectFiles: rejects.written(),
      ...wireOf(run.writer, inputs),
      ...(run.writer.name === 'delete' ? { deletes: true } : {}),
    });
  // A stopped load's summary says what the ledger holds: this run's counters miss chunks whose commit it could not confirm.
  const stopped = async (stop: LoadError): Promise<LoadStopped> => {
    const error = run.lanes ? withLanesNote(stop, withLedger) : stop;
    const ledgerHolds = withLedger ? await withTimeout(withLiveClient(control, target, (c) => ledgerTotals(c, loadId)), 5000).catch(() => null) : undefined;
    return new LoadStopped(error, { ...summary(), ...(ledgerHolds !== undefined ? { ledger: ledgerHolds } : {}) }, withLedger ? loadId : undefined);
  };
  const incomplete = rejects.failure(() => summary().total.loaded);
  if (incomplete) throw await stopped(incomplete);
  if (run.signal.aborted) {
    throw await stopped(new LoadError('interrupted', `interrupted: the chunks in flight were ${run.lanes ? 'not recorded as loaded' : 'rolled back'}; the chunks committed before stay in the table`));
  }
  if (firstError !== undefined) {
    const error = firstError instanceof LoadError ? firstError : await describeFailure(firstError);
    throw await stopped(error.code === 'too-many-rejects' ? rejects.overLimit(error, firstError, run.lanes === true) : error);
  }
  // Rows sent straight to shards that moved meanwhile may be lost or doubled: said, not summed up as a success.
  if (routing) await withLiveClient(control, target, (c) => routing.checkUnmoved(c)).catch(async (error: unknown) => {
    throw await stopped(error instanceof LoadError ? error : await describeFailure(error));
  });
  // Every input read to its end: a rerun of the same command says so and loads nothing (a part is not the whole load).
  if (withLedger && !plan.part) await withLiveClient(control, target, (c) => markCompleted(c, loadId, [...plan.ledgerInputs.values()].map((i) => i.file))).catch(() => undefined);
  return { ...summary(), ...(routing && routing.routes.length > 0 ? { citusRoutes: routing.routes } : {}), ...(plan.appended.length > 0 ? { appended: plan.appended } : {}) };
}

/**
 * A stop of a load by key lanes: what was in flight is not all rolled back (each lane commits
 * its part of a chunk on its own, ahead of the chunk's record), so the message says so.
 */
function withLanesNote(error: LoadError, withLedger: boolean): LoadError {
  const after = withLedger ? 'a resume applies those chunks again, in order, and the table ends as one run leaves it' : 'without the ledger only loading the input again (--truncate) makes the table exact';
  return new LoadError(error.code, `${error.message}; by key lanes each lane commits its part of a chunk on its own, so rows of the chunks not recorded may be applied already: ${after}`, error.details);
}

/** A rerun of a load that completed: nothing read, nothing loaded; the summary says when it completed and what its runs committed. */
export function alreadyLoaded(inputs: readonly LoadTarget[], plan: LoadPlan): LoadSummary {
  const counters = new LoadCounters();
  const total = { loaded: 0, rejected: 0, skipped: 0 };
  for (const input of inputs) {
    const covered = plan.coveredOf(input);
    counters.expect(input.table, input.file);
    counters.earlier(input.table, input.file, covered);
    total.loaded += covered.loaded;
    total.rejected += covered.rejected;
    total.skipped += covered.skipped;
  }
  return { ...counters.summary(0, plan.where, { loadId: plan.loadId }), completed: { at: plan.completed!.at, ...total } };
}

/** The binary wire's account of this load's tables, when the writer has one. */
function wireOf(writer: ChunkWriter, inputs: readonly LoadTarget[]): { wire?: readonly TableWire[] } {
  const tables = new Set(inputs.map((i) => i.table));
  const wire = writer.wireReport?.().filter((w) => tables.has(w.table));
  return wire === undefined || wire.length === 0 ? {} : { wire };
}

/** Names the server's message, the file and the place for an error no retry or reject could handle. */
async function describeFailure(error: unknown): Promise<LoadError> {
  const location = (error as { pgsurgeLocation?: Chunk['location'] }).pgsurgeLocation;
  // "loading lineitem.tbl (bytes …)", or "the load" for an error outside any chunk (a decoding thread that would not start)
  const where = !location
    ? 'the load'
    : 'loading ' + (location.rowGroup !== undefined
      ? `${location.file} (row group ${location.rowGroup}, rows ${location.byteOffset + 1}–${location.byteOffset + location.byteLength})`
      : `${location.file} (bytes ${location.byteOffset}–${location.byteOffset + location.byteLength})`);
  if (!isServerError(error)) {
    return new LoadError('chunk-failed', `${where} failed: ${(error as Error).message}`, { cause: error });
  }
  const trouble = serverTrouble(error.code);
  const columnName = error.column ?? copyColumnFromWhere(error.where);
  const column = columnName ? ` (column ${columnName})` : '';
  const line = copyLineFromWhere(error.where);
  return new LoadError(trouble ? 'server-error' : 'chunk-failed', `${trouble ? `${trouble}: ` : ''}${where}${line ? ` (record ${line} of the chunk)` : ''}: ${error.message}${column} [SQLSTATE ${error.code}]`, {
    server: error,
    hint: error.hint ?? (trouble ? 'fix the server, then resume: nothing of the failed chunk was committed' : 'the chunks committed before the error stay; resume loads the rest'),
    cause: error,
  });
}
