import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Chunk, LoadTarget } from '../batching/chunk.js';
import { qualifiedName, quoteIdent } from '../db/identifiers.js';
import { copyOptions, wireFormat } from './wire-format.js';
import type { ChunkWriter } from './chunk-writer.js';

/** Pieces written to the COPY stream, so the server parses while the rest is still in flight. */
const WRITE_PIECE = 256 * 1024;

export function copySql(target: LoadTarget, columns: readonly string[] | undefined = target.columns, options: { freeze?: boolean } = {}): string {
  const cols = columns && columns.length > 0 ? ` (${columns.map(quoteIdent).join(', ')})` : '';
  const table = qualifiedName(target.table, target.schema);
  const freeze = options.freeze ? ', FREEZE' : '';
  return `COPY ${table}${cols} FROM STDIN (${copyOptions(wireFormat(target))}${freeze})`;
}

export interface CopyChunkOptions {
  /** `COPY … FREEZE`: the server accepts it only when the table was created or truncated in this transaction. */
  readonly freeze?: boolean;
  /** A statement run in the chunk's transaction before the COPY (e.g. the TRUNCATE that FREEZE needs). */
  readonly before?: string;
}

/**
 * Streams one chunk through `COPY … FROM STDIN` in its own transaction and returns the
 * row count from the server's `COPY n` reply. On any error the transaction is rolled back.
 */
export async function copyChunk(client: pg.Client, chunk: Chunk, options: CopyChunkOptions = {}): Promise<number> {
  await client.query('BEGIN');
  try {
    if (options.before !== undefined) await client.query(options.before);
    const stream = client.query(copyFrom(copySql(chunk.target, undefined, { freeze: options.freeze === true })));
    const done = finished(stream);
    const { data } = chunk;
    for (let at = 0; at < data.length; at += WRITE_PIECE) {
      if (!stream.write(data.subarray(at, at + WRITE_PIECE))) {
        await Promise.race([once(stream, 'drain'), done]);
      }
    }
    stream.end();
    await done;
    await client.query('COMMIT');
    return stream.rowCount;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The default writer: `COPY … FROM STDIN`, one transaction per chunk. */
export const copyWriter: ChunkWriter = {
  name: 'copy',
  async write(client, chunk) {
    return { loaded: await copyChunk(client, chunk), skipped: 0 };
  },
};
