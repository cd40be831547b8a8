import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Chunk, LoadTarget } from '../batching/chunk.js';
import { qualifiedName, quoteIdent } from '../db/identifiers.js';
import type { ChunkWriter } from './chunk-writer.js';

/** Pieces written to the COPY stream, so the server parses while the rest is still in flight. */
const WRITE_PIECE = 256 * 1024;

export function copySql(target: LoadTarget, columns?: readonly string[]): string {
  const cols = columns && columns.length > 0 ? ` (${columns.map(quoteIdent).join(', ')})` : '';
  const table = qualifiedName(target.table, target.schema);
  switch (target.format) {
    case 'tbl':
      return `COPY ${table}${cols} FROM STDIN (FORMAT text, DELIMITER '|')`;
    case 'text':
      return `COPY ${table}${cols} FROM STDIN (FORMAT text)`;
    case 'csv':
      return `COPY ${table}${cols} FROM STDIN (FORMAT csv)`;
  }
}

/**
 * Streams one chunk through `COPY … FROM STDIN` in its own transaction and returns the
 * row count from the server's `COPY n` reply. On any error the transaction is rolled back.
 */
export async function copyChunk(client: pg.Client, chunk: Chunk): Promise<number> {
  await client.query('BEGIN');
  try {
    const rows = await streamCopy(client, copySql(chunk.target), chunk.data);
    await client.query('COMMIT');
    return rows;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Runs one `COPY … FROM STDIN` statement with `data` as its input; returns the server's row count. */
export async function streamCopy(client: pg.Client, sql: string, data: Buffer): Promise<number> {
  const stream = client.query(copyFrom(sql));
  const done = finished(stream);
  for (let at = 0; at < data.length; at += WRITE_PIECE) {
    if (!stream.write(data.subarray(at, at + WRITE_PIECE))) {
      await Promise.race([once(stream, 'drain'), done]);
    }
  }
  stream.end();
  await done;
  return stream.rowCount;
}

/** The default writer: `COPY … FROM STDIN`, one transaction per chunk. */
export const copyWriter: ChunkWriter = {
  name: 'copy',
  async write(client, chunk) {
    return { loaded: await copyChunk(client, chunk), skipped: 0 };
  },
};
