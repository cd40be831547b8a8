import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName, quoteIdent } from '../core/identifiers.js';
import { connectionFailure, LoadError } from '../core/load-error.js';
import { connect, type Target } from '../cluster/target.js';
import { load } from '../load/load.js';
import type { LoadOptions } from '../load/load-options.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import type { LoadSummary } from '../metrics/load-counters.js';
import { readTableSizes } from '../metrics/server-snapshot.js';
import { writerFor } from '../writer/writer-for.js';
import type { ChunkWriter } from '../writer/chunk-writer.js';
import type { WireChoice } from '../wire/wire-report.js';
import { DECAY_COLUMNS, writeNarrowRows, type NarrowKeys } from './narrow-rows.js';

/**
 * `pgsurge decay`: the classic experiment. Narrow rows (~45 bytes) with a unique key,
 * loaded into a fresh table until it holds `rows`, sampled every `bucket` rows, to see
 * where the rate falls off as the table and its index outgrow shared_buffers.
 */

export const DECAY_INDEX = ['before', 'after', 'none'] as const;
export type DecayIndex = (typeof DECAY_INDEX)[number];
export const DECAY_MODES = ['copy', 'insert'] as const;
export type DecayMode = (typeof DECAY_MODES)[number];

export interface DecayOptions {
  readonly rows: number;
  readonly keys: NarrowKeys;
  readonly index: DecayIndex;
  readonly mode: DecayMode;
  /** COPY's wire (`--wire`); auto when absent. */
  readonly wire?: WireChoice;
  /** COPY's records split by the WebAssembly fast path (`WriterSpec.wasm`; default true). */
  readonly wasm?: boolean;
  readonly workers: number;
  readonly chunkBytes: number;
  readonly seed: number;
  readonly table: string;
  readonly schema: string | undefined;
  /**
   * A folder to keep the generated rows in (`narrow-<rows>-<keys>-<seed>.txt`), reused by
   * the next run with the same rows, keys and seed; a temporary file, removed afterwards, when not given.
   */
  readonly dataDir?: string;
  /** Settings the load takes (for measuring; the CLI's, from the environment). */
  readonly settings?: Pick<LoadOptions, 'walFlusher' | 'citusSettings' | 'parquet'>;
}

export interface DecayPhase {
  readonly phase: string;
  readonly seconds: number;
}

export interface DecayResult {
  readonly summary: LoadSummary;
  readonly phases: readonly DecayPhase[];
  /** Table and index size at the very end (after `--index after` built the key). */
  readonly finalSizes: { readonly heapBytes: number; readonly indexBytes: number };
  readonly dataBytes: number;
}

/** Steps the caller watches: the load itself (through `reporter`), and when the load is over. */
export interface DecayWatch {
  readonly reporter: LoadReporter;
  /** Called after the last row is loaded and before any index is built (stop sampling here). */
  loaded?(): Promise<void>;
  /** Called with each phase as it starts (for progress messages). */
  phase?(name: string): void;
}

/** The writer for `--mode`: COPY (through `--wire`), or batched INSERT (unnest, the best an application does). */
export async function decayWriter(mode: DecayMode, wire?: WireChoice, workers?: number, wasm?: boolean): Promise<ChunkWriter | undefined> {
  return mode === 'copy' ? writerFor({ mode: 'copy', workers, wasm, ...(wire !== undefined ? { wire } : {}) }) : writerFor({ mode: 'insert', style: 'unnest' });
}

export function decayTableSql(table: string, schema: string | undefined, index: DecayIndex): string {
  const cols = DECAY_COLUMNS.map(([name, type]) => `${quoteIdent(name)} ${type}${name === 'id' && index === 'before' ? ' PRIMARY KEY' : ''}`).join(', ');
  return `CREATE TABLE ${qualifiedName(table, schema)} (${cols})`;
}

export async function runDecay(options: DecayOptions, target: Target, watch: DecayWatch): Promise<DecayResult> {
  const writer = await decayWriter(options.mode, options.wire, options.workers, options.wasm);
  const name = qualifiedName(options.table, options.schema);
  const phases: DecayPhase[] = [];
  const timed = async <T>(phase: string, fn: () => Promise<T>): Promise<T> => {
    watch.phase?.(phase);
    const started = performance.now();
    const value = await fn();
    phases.push({ phase, seconds: (performance.now() - started) / 1000 });
    return value;
  };

  const tempDir = options.dataDir === undefined ? await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-decay-')) : undefined;
  const dataFile = options.dataDir !== undefined ? path.join(options.dataDir, `narrow-${options.rows}-${options.keys}-${options.seed}.txt`) : path.join(tempDir!, 'narrow.txt');
  try {
    const kept = options.dataDir !== undefined && (await fs.stat(dataFile).then((s) => s.isFile() && s.size > 0, () => false));
    if (!kept) {
      if (options.dataDir !== undefined) await fs.mkdir(options.dataDir, { recursive: true });
      await timed('generate rows', async () => {
        // write under a temporary name, so an interrupted run never leaves a short file to reuse
        await writeNarrowRows({ rows: options.rows, keys: options.keys, seed: options.seed, out: `${dataFile}.part` });
        await fs.rename(`${dataFile}.part`, dataFile);
      });
    }
    const dataBytes = (await fs.stat(dataFile)).size;

    const client = await connect(target.config).catch((e: unknown) => {
      throw connectionFailure(e, target.description);
    });
    try {
      await timed('create table', async () => {
        await client.query(`DROP TABLE IF EXISTS ${name}`);
        await client.query(decayTableSql(options.table, options.schema, options.index));
      });
    } finally {
      await client.end();
    }

    const input: LoadTarget = { file: dataFile, format: 'text', table: options.table, schema: options.schema };
    const summary = await timed('load', () =>
      // A fresh table per experiment, measured once: no ledger rows to write or resume from.
      load([input], { workers: options.workers, chunkBytes: options.chunkBytes, create: false, truncate: false, ledger: false, ...options.settings, ...(writer ? { writer } : {}) }, target, watch.reporter),
    );
    await watch.loaded?.();

    const after = await connect(target.config).catch((e: unknown) => {
      throw connectionFailure(e, target.description);
    });
    try {
      if (options.index === 'after') await timed('build unique key', () => after.query(`ALTER TABLE ${name} ADD PRIMARY KEY (${quoteIdent('id')})`));
      // measured as the samples measure it, so the last point of the curve and the final size agree
      return { summary, phases, finalSizes: await readTableSizes(after, [name]), dataBytes };
    } finally {
      await after.end();
    }
  } finally {
    if (tempDir) await fs.rm(tempDir, { recursive: true, force: true });
  }
}
