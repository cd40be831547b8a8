import type pg from 'pg';
import type { Chunk } from '../../core/chunk.js';
import type { ChunkOutcome, ChunkTransactionContext } from '../chunk-transaction.js';

/**
 * Commits the chunks of some tables another way than one COPY on the worker's connection
 * (a Citus table's rows routed to its shards' nodes: `routed-chunk.ts`). One per load
 * worker (its own connections); `commitChunk` hands it the chunks it `routes`.
 */
export interface ChunkRouter {
  routes(chunk: Chunk): boolean;
  /** The chunk, exactly once, its ledger row on `client` (the coordinator) last. */
  commit(client: pg.Client, chunk: Chunk, ctx: ChunkTransactionContext): Promise<ChunkOutcome>;
  close(): Promise<void>;
}
