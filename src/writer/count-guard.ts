import type { Chunk } from '../core/chunk.js';
import { LoadError } from '../core/load-error.js';
import type { ChunkResult } from './chunk-writer.js';

/**
 * The count guard: a chunk (or a part of one) counts only when the server's count of
 * the rows it stored, plus those it left out on purpose (`--on-conflict skip`), equals
 * the records pgsurge sent. A COPY the server ended early (an end-of-data marker `\.` in
 * text COPY data), a record the server read as two rows, a writer that lost a batch:
 * each shows here as a count that differs, and the chunk's transaction is rolled back
 * instead of committed with its ledger row. A comparison of numbers already at hand.
 */

/** A target's BEFORE INSERT row triggers (they may return NULL: the server then stores fewer rows than it was sent, legitimately). */
export type RowDroppingTriggers = (chunk: Chunk) => readonly string[] | undefined;

/** The server's count for a chunk or part differs from the records sent, without an error. */
export class CountMismatch extends Error {
  constructor(
    readonly sent: number,
    /** Rows the server stored (`COPY n`, the INSERTs' row counts). */
    readonly stored: number,
    /** Rows left out on purpose (`--on-conflict skip`). */
    readonly skipped: number,
    /** The writer streamed COPY text: a short count is most likely an end-of-data marker in the data. */
    copyText: boolean,
  ) {
    super(mismatchMessage(sent, stored, skipped, copyText));
    this.name = 'CountMismatch';
  }
}

function mismatchMessage(sent: number, stored: number, skipped: number, copyText: boolean): string {
  const accounted = stored + skipped;
  const kept = skipped > 0 ? `${stored} rows and skipped ${skipped}` : `${stored} row${stored === 1 ? '' : 's'}`;
  const what = sent === 1 ? `the server stored ${kept} for this record` : `the server stored ${kept} for the ${sent} records pgsurge sent`;
  const why = accounted < sent && copyText ? ' (COPY stopped early: an end-of-data marker \\. in the data?)' : '';
  return `${what}, without an error${why}`;
}

/** A chunk's result once checked: `triggerSkipped` of its `skipped` are rows a BEFORE INSERT trigger of the table kept out. */
export interface CheckedResult extends ChunkResult {
  readonly triggerSkipped: number;
}

/**
 * Checks a writer's result against the records of `chunk` it was sent. Returns the result,
 * with any shortfall counted as skipped by the table's trigger when the table has BEFORE
 * INSERT row triggers (`triggers`); throws a CountMismatch otherwise.
 */
export function checkCount(chunk: Chunk, result: ChunkResult, triggers: readonly string[] | undefined, copyText: boolean): CheckedResult {
  const sent = chunk.records;
  const accounted = result.loaded + result.skipped;
  if (accounted === sent) return { ...result, triggerSkipped: 0 };
  if (accounted < sent && triggers !== undefined && triggers.length > 0) {
    const triggerSkipped = sent - accounted;
    return { loaded: result.loaded, skipped: result.skipped + triggerSkipped, triggerSkipped };
  }
  throw new CountMismatch(sent, result.loaded, result.skipped, copyText);
}

/**
 * Where a chunk is, for a message: file, byte offset (a Parquet chunk's row group and
 * rows), its first line when known, its records.
 */
export function describeChunk(chunk: Chunk, firstLine: number | undefined): string {
  const { location } = chunk;
  const where =
    location.rowGroup !== undefined
      ? `${location.file} (row group ${location.rowGroup}, rows ${location.byteOffset + 1}–${location.byteOffset + location.byteLength})`
      : `${location.file} at byte ${location.byteOffset} (bytes ${location.byteOffset}–${location.byteOffset + location.byteLength}${firstLine === undefined || location.rowGroup !== undefined ? '' : `, first line ${firstLine}`})`;
  return `the chunk of ${chunk.records} record${chunk.records === 1 ? '' : 's'} in ${where}`;
}

/** Where a broken chunk's rows are: rolled back (the ledger does not count it), committed by the writer itself (`--commit-every`), or committed with its ledger row. */
export type BrokenChunkState = 'rolled-back' | 'committed-by-writer' | 'committed';

const BROKEN_HINTS: Readonly<Record<BrokenChunkState, string>> = {
  'rolled-back': 'nothing of this chunk was committed and the ledger does not count it as done; the chunks committed before it stay, and a resume loads it again',
  'committed-by-writer': 'its rows are committed already (the writer commits on its own: --commit-every, so nothing could be rolled back): check the table against the input; the chunks before it are in',
  committed: 'the chunk is committed: check the table against the input (count(*)); the chunks committed before it stay',
};

/**
 * The load stops on a chunk whose count cannot be made to add up: never recorded as done
 * in the ledger (its transaction rolled back), or, where it committed already, said to be wrong.
 */
export function brokenChunk(chunk: Chunk, firstLine: number | undefined, why: string, state: BrokenChunkState): LoadError {
  return new LoadError('chunk-failed', `the load stopped on ${describeChunk(chunk, firstLine)}: ${why}`, { hint: BROKEN_HINTS[state], location: chunk.location });
}
