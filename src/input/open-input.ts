import type { LoadTarget } from '../core/chunk.js';
import { cutsIntoRanges } from './byte-input.js';
import { inputFormat } from './format-registry.js';
import type { OpenedInput, OpenOptions } from './input-format.js';

/**
 * A regular, uncompressed file in a line-framed format (tbl, text, NDJSON), without
 * `--skip` or `--limit`, is read in byte ranges; anything else from its start by one reader.
 */
export function readsInRanges(target: LoadTarget): boolean {
  return cutsIntoRanges(target, inputFormat(target.format).lineFramed(target.format));
}

/**
 * The input's chunk sources, as its format reads it: byte ranges read in parallel or one
 * reader from the start (`byte-input.ts`), or a Parquet file's row groups.
 */
export async function openInput(target: LoadTarget, options: OpenOptions): Promise<OpenedInput> {
  return inputFormat(target.format).open(target, options);
}
