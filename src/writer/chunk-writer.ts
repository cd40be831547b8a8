import type pg from 'pg';
import type { Chunk } from '../batching/chunk.js';

/** What the server confirmed for one chunk. */
export interface ChunkResult {
  /** Rows the server says it stored (`COPY n` / INSERT's row count). */
  readonly loaded: number;
  /** Rows left out on purpose (e.g. `--on-conflict skip`). */
  readonly skipped: number;
}

/**
 * Writes one chunk in one transaction on a connection it does not own. `prepare` runs
 * once per connection before its first chunk (prepared statements, session settings).
 */
export interface ChunkWriter {
  readonly name: string;
  prepare?(client: pg.Client): Promise<void>;
  write(client: pg.Client, chunk: Chunk): Promise<ChunkResult>;
}
