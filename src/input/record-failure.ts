import type { LoadTarget } from '../core/chunk.js';
import { LoadError, START_OVER_HINT } from '../core/load-error.js';
import type { RecordError } from './record-error.js';
import { readOnce } from './file-blocks.js';
import { compressionFromFileName } from './formats.js';
import { lineAtOffset } from './line-numbers.js';

/**
 * A record that could not be framed → a LoadError naming the file, the line, the column
 * and the byte offset, with the record's location (one record long) for the reject machinery.
 * `blockOffset`/`blockLine` are where the block that held it starts in the input.
 */
export async function recordFailure(error: RecordError, target: LoadTarget, blockOffset: number, blockLine: number | undefined): Promise<LoadError> {
  const byteOffset = blockOffset + error.byteInBlock;
  let line = blockLine === undefined ? undefined : blockLine + error.linesBefore;
  if (line === undefined && !readOnce(target.file) && compressionFromFileName(target.file) === undefined) {
    line = await lineAtOffset(target.file, byteOffset).catch(() => undefined);
  }
  const where = line !== undefined ? `${target.file}:${line}${error.column !== undefined ? `:${error.column}` : ''}` : `${target.file} (byte ${byteOffset})`;
  return new LoadError('bad-input', `${where}: ${error.message} (byte offset ${byteOffset})`, {
    location: { file: target.file, byteOffset, byteLength: error.byteLength, firstLine: line, ...(line !== undefined ? { line } : {}) },
    hint: START_OVER_HINT,
    startOver: true,
    cause: error,
  });
}
