import type { ChunkWriter } from './chunk-writer.js';
import { copySkipConflictsWriter } from './copy-skip-conflicts-writer.js';
import { DEFAULT_BATCH_ROWS, insertWriter, type InsertStyle } from './insert-writer.js';
import { DEFAULT_ON_CONFLICT, ON_CONFLICT_RULES, type OnConflict } from './on-conflict.js';
import { wireCopyWriter } from './wire-writer.js';
import { keyedWriter } from './keyed/keyed-writer.js';
import { LoadError } from '../core/load-error.js';
import type { WireChoice } from '../wire/wire-report.js';

export const LOAD_MODES = ['copy', 'insert'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

/** `load --mode`: how rows reach the server, or `delete`: each row's key is deleted. */
export const LOAD_COMMAND_MODES = [...LOAD_MODES, 'delete'] as const;
export type LoadCommandMode = (typeof LOAD_COMMAND_MODES)[number];


/** How chunks reach the server: what `--mode`, `--insert-style`, `--batch-rows`, `--commit-every` and `--on-conflict` say. */
export interface WriterSpec {
  readonly mode: LoadCommandMode;
  /** INSERT only; default unnest. */
  readonly style?: InsertStyle;
  /** INSERT only; default DEFAULT_BATCH_ROWS for the style. */
  readonly batchRows?: number;
  /** INSERT only; undefined = one transaction per chunk, 0 = autocommit. */
  readonly commitEvery?: number;
  readonly onConflict?: OnConflict;
  /** `--on-conflict update` and `--mode delete`: the unique key rows are matched by (default: the primary key, else the only unique key). */
  readonly key?: readonly string[] | undefined;
  /** `--on-conflict update`: the columns it sets (default: every file column but the key). */
  readonly updateColumns?: readonly string[] | undefined;
  /** Plain COPY only (no --on-conflict skip): text, binary, or auto (the default). */
  readonly wire?: WireChoice;
  /** The load's connections (-w), for `--wire auto`'s rule; undefined when not known. */
  readonly workers?: number | undefined;
  /** Plain COPY only: records split into binary tuples by the WebAssembly fast path (default true; false: JavaScript only). */
  readonly wasm?: boolean | undefined;
}

export function writerFor(spec: WriterSpec): ChunkWriter {
  const onConflict = spec.onConflict ?? DEFAULT_ON_CONFLICT;
  if (spec.mode === 'delete' || onConflict === 'update') {
    if (spec.mode === 'insert') throw new LoadError('bad-option', '`--on-conflict update` loads through COPY into a staging table', { hint: 'drop --mode insert' });
    return keyedWriter({ action: spec.mode === 'delete' ? 'delete' : 'update', key: spec.key, updateColumns: spec.updateColumns, wire: spec.wire ?? 'auto', workers: spec.workers, wasm: spec.wasm });
  }
  if (spec.mode === 'copy') return ON_CONFLICT_RULES[onConflict].leavesOut ? copySkipConflictsWriter() : wireCopyWriter(spec.wire ?? 'auto', undefined, { workers: spec.workers, wasm: spec.wasm });
  const style = spec.style ?? 'unnest';
  return insertWriter({
    style,
    batchRows: spec.batchRows ?? DEFAULT_BATCH_ROWS[style],
    ...(spec.commitEvery !== undefined ? { commitEvery: spec.commitEvery } : {}),
    onConflict,
  });
}
