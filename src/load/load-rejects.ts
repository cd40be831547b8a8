import type pg from 'pg';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import { LoadError } from '../core/load-error.js';
import { formatCount } from '../core/format-count.js';
import type { ChunkLedger, RejectedRow } from '../writer/ledger/ledger.js';
import { RejectFile } from '../writer/rejects/reject-file.js';

/**
 * The load's reject files, one per path (inputs may share one): committed chunks' rejected
 * rows are appended as they come, and each file is rewritten from the ledger, in input
 * order, as the load opens and as it ends, so a crash between a chunk's COMMIT and the
 * file write loses nothing.
 */
export class LoadRejects {
  private readonly files = new Map<string, RejectFile>();
  private readonly fileOf = new Map<string, RejectFile>();

  constructor(
    private readonly inputs: readonly LoadTarget[],
    paths: ReadonlyMap<string, string>,
    loadId: string,
    private readonly ledger: ChunkLedger,
    private readonly withLedger: boolean,
  ) {
    for (const input of inputs) {
      const p = paths.get(input.file)!;
      if (!this.files.has(p)) this.files.set(p, new RejectFile(p, loadId));
      this.fileOf.set(input.file, this.files.get(p)!);
    }
  }

  /** Writes each reject file afresh from the ledger's rejected rows, in input order; returns how many there are. */
  async rewrite(client: pg.Client): Promise<number> {
    // Read everything first: if the server is gone, the files written so far stay as they are.
    const rows: RejectedRow[][] = [];
    for (const input of this.inputs) rows.push((await this.ledger.earlierRejects(client, input.file)).map((r) => ({ ...r, file: input.file })));
    for (const f of this.files.values()) await f.clear();
    this.inputs.forEach((input, i) => void this.fileOf.get(input.file)!.append(rows[i]!));
    await Promise.all([...this.files.values()].map((f) => f.close()));
    return rows.reduce((n, r) => n + r.length, 0);
  }

  /** A committed chunk's rejected rows, to the reject file of its input. */
  append(file: string, rows: readonly RejectedRow[]): Promise<void> {
    return this.fileOf.get(file)!.append(rows);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.files.values()].map((f) => f.close()));
  }

  /** The files that hold rows, for the summary. */
  written(): { path: string; rows: number }[] {
    return [...this.files.values()].filter((f) => f.written > 0).map((f) => ({ path: f.path, rows: f.written }));
  }

  /** The load's error when a reject file could not be written in full, else undefined. */
  failure(loaded: () => number): LoadError | undefined {
    const incomplete = [...this.files.values()].find((f) => f.failed !== undefined);
    return incomplete && rejectFileFailed(incomplete, this.withLedger, loaded());
  }

  /** `--max-rejects` stopped the load: `error`, saying where the rejected rows are (`lanes`: its chunk's parts committed on their own). */
  overLimit(error: LoadError, cause: unknown, lanes: boolean): LoadError {
    return whereRejectsAre(error, [...this.files.values()], cause, this.withLedger, lanes);
  }
}

/**
 * `--max-rejects` stopped the load: the chunk that went over was rolled back (by key lanes:
 * not recorded, its parts maybe applied), so its rejected rows are nowhere yet; say that,
 * and where the rows rejected before it are (or that none are).
 */
function whereRejectsAre(error: LoadError, files: readonly RejectFile[], cause: unknown, withLedger: boolean, lanes: boolean): LoadError {
  const location = (cause as { pgsurgeLocation?: Chunk['location'] }).pgsurgeLocation;
  const chunk = location ? `the chunk at ${location.file} bytes ${location.byteOffset}–${location.byteOffset + location.byteLength}` : 'the chunk that went over the limit';
  const written = files.filter((f) => f.written > 0);
  const where =
    written.length > 0
      ? `the ${written.reduce((n, f) => n + f.written, 0)} rows rejected by chunks that committed are in ${written.map((f) => f.path).join(', ')} (why: .log beside it)`
      : 'no reject file was written: no chunk with rejected rows committed before it';
  const again = withLedger ? 'a resume finds them again' : 'without the ledger nothing keeps them: loading the input again finds them';
  // The hint points only at files that exist.
  const look = written.length > 0 ? `look at ${written.map((f) => f.path).join(', ')} and its .log` : 'no reject file holds them yet (their main cause is named above)';
  const next = withLedger
    ? 'fix the input or raise --max-rejects, then resume'
    : 'without the ledger the load cannot be resumed: fix the input or raise --max-rejects, then load it again with --truncate (without it the rows committed so far would go in twice)';
  return new LoadError(error.code, `${error.message}; ${chunk} was ${lanes ? 'not recorded as loaded' : 'rolled back'}, so its rejected rows are not in any reject file (${again}); ${where}`, { ...error.details, hint: `${look}; ${next}` });
}

/** A reject file that could not be written in full (a full disk): the load fails, and says what is where. */
function rejectFileFailed(file: RejectFile, withLedger: boolean, loaded: number): LoadError {
  const why = file.failed!.message;
  const rows = (n: number): string => `${formatCount(n)} row${n === 1 ? '' : 's'}`;
  const holds = `it holds ${file.written} of the ${rows(file.wanted)} rejected${file.endsCut ? ', then part of the next' : ''}${file.logged < file.written ? `; its .log gives the reason for ${file.logged} of them` : ''}`;
  return new LoadError(
    'chunk-failed',
    `could not write the reject file ${file.path}: ${why}; the reject file is INCOMPLETE (${holds}); the load stopped there: the ${rows(loaded)} loaded by committed chunks stay in the table, the chunks in flight were rolled back`,
    {
      hint: withLedger
        ? 'free space there (or give --reject-file elsewhere), then resume: every rejected row is kept in the ledger (pgsurge.rejects) and the reject file is written again in full'
        : `without the ledger the ${rows(file.wanted - file.written)} missing from the file are kept nowhere, and the load cannot be resumed: free space there, then load the input again with --truncate (without it the rows loaded would go in twice)`,
      cause: file.failed,
    },
  );
}
