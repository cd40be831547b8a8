import { Readable } from 'node:stream';
import { NARROW_COLUMNS } from '../datasets/narrow-schema.js';
import { generateNarrow, narrowBlocks } from '../datasets/narrow/generate.js';
import { NARROW_KEY_ORDERS, type NarrowKeyOrder } from '../datasets/narrow/narrow-rows.js';

/**
 * The rows `pgsurge decay` grows its table with: the narrow data set (`pgsurge gen
 * narrow`), ~45-byte rows with a unique `id bigint` key, in COPY text format.
 */

export const NARROW_KEYS = NARROW_KEY_ORDERS;
export type NarrowKeys = NarrowKeyOrder;

export interface NarrowRowOptions {
  readonly rows: number;
  readonly keys: NarrowKeys;
  readonly seed: number;
}

/** The decay table's columns: the narrow data set's. */
export const DECAY_COLUMNS = NARROW_COLUMNS;

/** The rows as COPY text, in blocks. */
export function narrowRows(options: NarrowRowOptions): AsyncIterable<Buffer> {
  return Readable.from(narrowBlocks({ ...options, format: 'text' }));
}

/** Writes the rows to a file, in COPY text format. */
export async function writeNarrowRows(options: NarrowRowOptions & { readonly out: string }): Promise<void> {
  await generateNarrow({ ...options, format: 'text' });
}
