import type pg from 'pg';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import type { TableWire, WireChoice } from '../wire/wire-report.js';

/** What the server confirmed for one chunk. */
export interface ChunkResult {
  /** Rows the server says it stored (`COPY n` / INSERT's row count). */
  readonly loaded: number;
  /** Rows left out on purpose (e.g. `--on-conflict skip`). */
  readonly skipped: number;
}

/**
 * Sends one chunk's rows to the server. The transaction is NOT the writer's: the caller
 * (`src/writer/chunk-transaction.ts`) opens it, has `writeRows` send the rows, adds the
 * chunk's ledger row, and commits, so rows and ledger row are in together or not at all;
 * on a bad row it rolls back and calls `writeRows` again on parts of the chunk inside
 * savepoints. So `writeRows` must never BEGIN, COMMIT or ROLLBACK itself, and must work on
 * any chunk, including one record cut out of a bigger one (`ChunkRecords.slice`).
 *
 * `prepare` runs once per connection before its first chunk (prepared statements, session
 * settings), and again on the fresh connection after a lost one.
 */
export interface ChunkWriter {
  readonly name: string;
  prepare?(client: pg.Client): Promise<void>;
  writeRows(client: pg.Client, chunk: Chunk): Promise<ChunkResult>;
  /**
   * `BEGIN` and `writeRows` in one round trip, when the writer can send BEGIN along with
   * its statement (`BEGIN; COPY …` as one query): the caller's transaction all the same.
   * Without it, the caller sends BEGIN first and waits for its reply.
   */
  beginAndWriteRows?(client: pg.Client, chunk: Chunk): Promise<ChunkResult>;
  /**
   * The 1-based record of `chunk` that the server's error names, when the error says
   * (COPY's `line N` context). Without it a refused chunk is bisected to find its bad rows.
   */
  failedRecord?(error: unknown, chunk: Chunk): number | undefined;
  /**
   * The writer commits on its own (`--commit-every`, autocommit): `writeRows` runs outside
   * any transaction of the caller, so there is no ledger row and no reject isolation. The
   * load allows such a writer only without the ledger (`--no-ledger`).
   */
  readonly ownsTransactions?: boolean;
  /**
   * The writer that loads the parts of a chunk the server refused, when it is not this one
   * (the binary wire: a refused binary chunk is loaded again through text COPY, so its bad
   * rows are isolated and rejected with the messages text gives). The refused first try
   * then says nothing about the parts, and the isolation starts from the whole chunk.
   */
  readonly refusedWriter?: ChunkWriter;
  /**
   * The writer's options that change what a row does to the table (an upsert's `--key` and
   * `--update-columns`): part of how each input is read, so a rerun that changes them is
   * told apart from a resume (src/load/load-rerun.ts).
   */
  readonly readsBy?: Readonly<Record<string, string | undefined>>;
  /** The wire asked for (`--wire`), where the writer is COPY's wire writer. */
  readonly wire?: WireChoice;
  /** Which wire each table's chunks went through (COPY's binary wire), for the summary. */
  wireReport?(): readonly TableWire[];
  /**
   * Runs once on the load's control connection before any chunk, for a writer that must
   * decide things per load (an upsert's key and its order table); may refuse the load.
   */
  planLoad?(client: pg.Client, load: WriterLoad): Promise<void>;
  /** Runs once when the load ends (`completed`: every input read to its end), to drop what `planLoad` made. */
  endLoad?(client: pg.Client, completed: boolean): Promise<void>;
}

/** What `ChunkWriter.planLoad` is told of the load. */
export interface WriterLoad {
  readonly loadId: string;
  /** The inputs with their column plans, in the order they were named. */
  readonly inputs: readonly LoadTarget[];
  readonly withLedger: boolean;
  /** No earlier run of this load committed any of the input. */
  fresh(input: LoadTarget): boolean;
  /** A part of a split load (`--part K/N`). */
  readonly part: boolean;
  /** Into a Citus cluster. */
  readonly citus: boolean;
}

/**
 * Thrown by a writer that gave up on a chunk part way through sending it (the binary
 * wire met a value it cannot encode exactly after earlier pieces had gone out, and failed
 * the COPY): the caller rolls the transaction back and loads the chunk again through the
 * writer's `refusedWriter`, as for a chunk the server refused.
 */
export class RedoAsText extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'RedoAsText';
  }
}
