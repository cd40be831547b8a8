import type { Socket } from 'node:net';
import type pg from 'pg';
import type { Chunk } from './batching/chunk.js';
import type { ChunkQueue } from './batching/chunk-queue.js';
import { LoadError } from './db/load-error.js';
import { backoffMs, isRetryable, sleep } from './faults/retry.js';
import type { ChunkLedger } from './ledger/ledger.js';
import { commitChunk, type ChunkOutcome, type ChunkTransactionContext } from './writer/chunk-transaction.js';

export interface WorkerContext {
  readonly queue: ChunkQueue;
  readonly transaction: Omit<ChunkTransactionContext, 'onCommit'>;
  readonly ledger: ChunkLedger;
  /** A fresh connection, after the worker's own was lost. */
  connect(): Promise<pg.Client>;
  /** How long a chunk may keep failing on lost connections before the load gives up. */
  readonly retryForMs: number;
  readonly signal: AbortSignal;
  /** True once the load stops (first error, Ctrl-C): take no more chunks, retry nothing. */
  stopping(): boolean;
  /** A chunk is committed; `fromLedger` when a lost COMMIT reply was found committed in the ledger. */
  committed(chunk: Chunk, outcome: ChunkOutcome & { fromLedger: boolean }, startedAt: number, endedAt: number): Promise<void>;
  now(): number;
  /** A chunk lost its connection and will be tried again after `waitMs`. */
  retrying?(chunk: Chunk, error: unknown, attempt: number, waitMs: number): void;
}

/**
 * One worker: takes chunks from the queue and commits each exactly once on its own
 * connection. When the connection dies (a terminated backend, a server restart, the
 * network), the chunk is retried on a fresh connection with backoff, for up to
 * `retryForMs`; before a retry the ledger is asked whether the chunk got in after all.
 */
export class LoadWorker {
  private busy = false;
  private committing = false;

  constructor(
    private client: pg.Client | undefined,
    private readonly ctx: WorkerContext,
  ) {}

  async run(): Promise<void> {
    const { writer } = this.ctx.transaction;
    if (this.client) await writer.prepare?.(this.client);
    try {
      for (;;) {
        if (this.ctx.stopping()) return;
        const chunk = await this.ctx.queue.take();
        if (chunk === undefined || this.ctx.stopping()) return;
        const startedAt = this.ctx.now();
        const outcome = await this.commitWithRetries(chunk);
        await this.ctx.committed(chunk, outcome, startedAt, this.ctx.now());
        chunk.release?.();
      }
    } finally {
      await this.client?.end().catch(() => undefined);
      this.client = undefined;
    }
  }

  /** Ctrl-C: cut the connection of a chunk in flight (the server rolls it back), but let a COMMIT already sent finish. */
  interrupt(): void {
    if (this.busy && !this.committing && this.client) {
      (this.client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy();
    }
  }

  private async commitWithRetries(chunk: Chunk): Promise<ChunkOutcome & { fromLedger: boolean }> {
    const { writer } = this.ctx.transaction;
    let failingSince: number | undefined;
    let attempt = 0;
    for (;;) {
      this.busy = true;
      try {
        if (this.client === undefined) {
          this.client = await this.ctx.connect();
          await writer.prepare?.(this.client);
        }
        if (attempt > 0) {
          const done = await this.ctx.ledger.committed(this.client, chunk);
          if (done) {
            const rejects = done.rejected > 0 ? await this.ctx.ledger.rejectsOf(this.client, chunk) : [];
            return { loaded: done.loaded, skipped: done.skipped, rejects, fromLedger: true };
          }
        }
        return { ...(await commitChunk(this.client, chunk, { ...this.ctx.transaction, onCommit: () => (this.committing = true) })), fromLedger: false };
      } catch (error) {
        if (!isRetryable(error) || this.ctx.stopping()) {
          // The failure's place in the input, for the message (errors are data).
          if (error instanceof Error && !('pgsurgeLocation' in error)) Object.assign(error, { pgsurgeLocation: chunk.location });
          throw error;
        }
        const dead = this.client;
        this.client = undefined;
        await dead?.end().catch(() => undefined);
        failingSince ??= Date.now();
        if (Date.now() - failingSince > this.ctx.retryForMs) {
          throw new LoadError('server-lost', `lost the server while loading ${chunk.location.file} at byte ${chunk.location.byteOffset} and could not get it back within ${Math.round(this.ctx.retryForMs / 1000)} s: ${(error as Error).message}`, {
            hint: 'check that the server is up (its log says why it went away); the chunks committed so far stay, and a resume loads the rest',
            location: chunk.location,
            cause: error,
          });
        }
        this.busy = false;
        const wait = backoffMs(attempt++);
        this.ctx.retrying?.(chunk, error, attempt, wait);
        await sleep(wait, this.ctx.signal);
        if (this.ctx.stopping()) throw error;
      } finally {
        this.busy = false;
        this.committing = false;
      }
    }
  }
}
