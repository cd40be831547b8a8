import type { Readable } from 'node:stream';
import type { ShardCopy } from '../writer/citus/routed-chunk.js';
import type { LoadPart } from '../input/load-part.js';
import type { ChunkWriter } from '../writer/chunk-writer.js';
import type { CitusRoute } from '../writer/citus/plan-routing.js';
import { LoadError } from '../core/load-error.js';
import type { ParquetSettings } from '../input/input-format.js';
import type { CitusSettings } from '../writer/citus/citus-load.js';
import type { CitusFaults } from '../writer/citus/citus-faults.js';
import type { OnConflict } from '../writer/on-conflict.js';

export interface LoadOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  readonly create: boolean;
  readonly truncate: boolean;
  /** `--create` of a table pgsurge has no DDL for: how many records of a text or JSON file to sniff its types from (`all`: the whole file). */
  readonly sample?: number | 'all';
  /** Citus: a table `--create` makes is distributed on this column. */
  readonly distributeBy?: string;
  /**
   * `--dry-run`: the whole input read and sent, each chunk's transaction rolled back
   * instead of committed; no ledger, and a missing table made as a temporary one in each
   * session. The summary and the reject file say what a load would do.
   */
  readonly dryRun?: boolean;
  readonly stdin?: Readable;
  /** How a chunk reaches the server; COPY unless told otherwise. */
  readonly writer?: ChunkWriter;
  /** Citus: whether pgsurge routes a hash-distributed table's rows to its shards' nodes itself (`--citus-route`; default auto). */
  readonly citusRoute?: CitusRoute;
  /** How rows routed to a Citus shard are sent (`COPY … FROM STDIN`); handed in by tests only (fault injection). */
  readonly shardCopy?: ShardCopy;
  /** The ledger's id for this load; default: derived from the tables, the files' identities and how they are read, so rerunning the same command resumes. */
  readonly loadId?: string;
  /** Require an earlier run of this load to resume. */
  readonly resume?: boolean;
  /** `--again`: a new load of files loaded before, on top of the rows already there (a fresh load id). */
  readonly again?: boolean;
  /** `--on-conflict`: what a row that violates a unique key does (src/writer/on-conflict.ts); part of how the input is read. */
  readonly onConflict?: OnConflict;
  /** Keep the ledger (default). Without it rejects still work, but nothing can be resumed and exactly-once is lost. */
  readonly ledger?: boolean;
  /** Rows a load may reject in all before it stops (default 1000). */
  readonly maxRejects?: number;
  readonly rejectFile?: string;
  readonly rejectDir?: string;
  /** How long to keep retrying a chunk whose connection or server went away (default 30 s). */
  readonly retryForMs?: number;
  /** Aborting stops the load: no more reading, in-flight chunks rolled back. */
  readonly signal?: AbortSignal;
  /** `--part K/N`: load only the K-th of N shares of every input, under the load id all N parts share. */
  readonly part?: LoadPart;
  /**
   * Lets the caller take workers back while the load runs (`dbt3 load` gives their slots to
   * key builds once a table is in): each worker asks `take()` before its next chunk and, on
   * true, ends once its chunks are counted, then `released()` is called. The last worker never leaves.
   */
  readonly shrink?: { take(): boolean; released(): void };
  /**
   * false: commits that did not wait for their WAL flush are left to the walwriter, without the
   * load's own flusher (for measuring; a crash test's window). Default true.
   */
  readonly walFlusher?: boolean;
  /** Citus: the session settings of the load's connections (default: pgsurge's, `CITUS_SESSION_SETTINGS`). */
  readonly citusSettings?: CitusSettings;
  /** How Parquet inputs are decoded (for measuring); default: the rule, with the WebAssembly kernels. */
  readonly parquet?: ParquetSettings;
  /** Faults a test makes in a routed Citus load; handed in by tests only. */
  readonly faults?: CitusFaults;
}


/**
 * Options that cannot work with (or without) the ledger, refused before anything is
 * changed; callers that wrap the writer or prepare tables first (the durability presets)
 * call it themselves before they do.
 */
export function checkLedgerOptions(options: Pick<LoadOptions, 'ledger' | 'writer' | 'resume' | 'loadId' | 'again' | 'part'>): void {
  const withLedger = options.ledger !== false;
  if (withLedger && options.writer?.ownsTransactions) {
    throw new LoadError('bad-option', '--commit-every splits a chunk into several transactions, which the ledger cannot account for exactly once', {
      hint: 'add --no-ledger (the load then cannot be resumed, and a bad row stops it), or drop --commit-every',
    });
  }
  if (!withLedger && (options.resume || options.loadId !== undefined)) {
    throw new LoadError('bad-option', '--resume and --load-id need the ledger', { hint: 'drop --no-ledger' });
  }
  if (options.again && (options.resume || options.loadId !== undefined || options.part !== undefined)) {
    throw new LoadError('bad-option', `--again starts a new load with an id of its own, which ${options.resume ? '--resume' : options.loadId !== undefined ? '--load-id' : '--part (its parts must share one id)'} cannot have`, {
      hint: options.part !== undefined ? 'give every part the same new --load-id instead of --again' : 'drop --again to resume a load; drop --resume and --load-id to load again',
    });
  }
}
