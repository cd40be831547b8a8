import type { ChunkWriter } from './chunk-writer.js';
import { copySkipConflictsWriter } from './copy-skip-conflicts-writer.js';
import { DEFAULT_BATCH_ROWS, insertWriter, type InsertStyle } from './insert-writer.js';
import { DEFAULT_ON_CONFLICT, ON_CONFLICT_RULES, type OnConflict } from './on-conflict.js';
import { wireCopyWriter } from './wire-writer.js';
import type { WireChoice } from '../wire/wire-report.js';

export const LOAD_MODES = ['copy', 'insert'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

/** How chunks reach the server: what `--mode`, `--insert-style`, `--batch-rows`, `--commit-every` and `--on-conflict` say. */
export interface WriterSpec {
  readonly mode: LoadMode;
  /** INSERT only; default unnest. */
  readonly style?: InsertStyle;
  /** INSERT only; default DEFAULT_BATCH_ROWS for the style. */
  readonly batchRows?: number;
  /** INSERT only; undefined = one transaction per chunk, 0 = autocommit. */
  readonly commitEvery?: number;
  readonly onConflict?: OnConflict;
  /** Plain COPY only (no --on-conflict skip): text, binary, or auto (the default). */
  readonly wire?: WireChoice;
  /** The load's connections (-w), for `--wire auto`'s rule; undefined when not known. */
  readonly workers?: number | undefined;
  /** Plain COPY only: records split into binary tuples by the WebAssembly fast path (default true; false: JavaScript only). */
  readonly wasm?: boolean | undefined;
}

export function writerFor(spec: WriterSpec): ChunkWriter {
  const onConflict = spec.onConflict ?? DEFAULT_ON_CONFLICT;
  if (spec.mode === 'copy') return ON_CONFLICT_RULES[onConflict].leavesOut ? copySkipConflictsWriter() : wireCopyWriter(spec.wire ?? 'auto', undefined, { workers: spec.workers, wasm: spec.wasm });
  const style = spec.style ?? 'unnest';
  return insertWriter({
    style,
    batchRows: spec.batchRows ?? DEFAULT_BATCH_ROWS[style],
    ...(spec.commitEvery !== undefined ? { commitEvery: spec.commitEvery } : {}),
    onConflict,
  });
}
