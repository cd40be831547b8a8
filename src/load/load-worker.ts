import type { Socket } from 'node:net';
import type pg from 'pg';
import type { Chunk } from '../core/chunk.js';
import type { ChunkQueue } from '../input/chunk-queue.js';
import { LoadError } from '../core/load-error.js';
import { backendOf, endOldBackend, type Backend } from '../core/old-backend.js';
import { backoffMs, isRetryable, sleep } from '../core/retry.js';
import { NO_LEDGER, type ChunkLedger } from '../writer/ledger/ledger.js';
import { commitChunk, type ChunkOutcome, type ChunkRouter, type ChunkTransactionContext } from '../writer/chunk-transaction.js';
import type { Deferral } from '../writer/wal-flush.js';
import { canDeferFlush, flushWal } from '../writer/wal-flush.js';

export interface WorkerContext {
  readonly queue: ChunkQueue;
  readonly transaction: Omit<ChunkTransactionContext, 'onCommit'>;
  readonly ledger: ChunkLedger;
  readonly sessions: WorkerSessions;
  readonly stop: WorkerStop;
  readonly flush: WorkerFlush;
  readonly events: WorkerEvents;
  /** Makes this worker's router (its own connections), for chunks committed another way (Citus rows routed to their shards). */
  router?(): ChunkRouter;
}

/** The worker's connections. */
interface WorkerSessions {
  /** A fresh connection, after the worker's own was lost. */
  connect(): Promise<pg.Client>;
  /** Checks on a fresh connection before anything else (the server may have crashed meanwhile); throws to stop the load. */
  reconnected?(client: pg.Client): Promise<void>;
  /** How long a chunk may keep failing on lost connections before the load gives up. */
  readonly retryForMs: number;
}

/** When the worker stops. */
interface WorkerStop {
  readonly signal: AbortSignal;
  /** True once the load stops (first error, Ctrl-C): take no more chunks, retry nothing. */
  stopping(): boolean;
  /** Asked before each chunk: true, and this worker takes no more (its slot is wanted elsewhere); it ends as at the end of the input. */
  leave?(): boolean;
}

/** Commits that do not wait for their WAL flush. */
interface WorkerFlush {
  /**
   * Let a chunk's COMMIT return before its WAL is on disk, and count the chunk once it is
   * (needs the ledger: after a crash, it tells which of those chunks got in).
   */
  readonly deferFlush: boolean;
  /** A COMMIT returned before its WAL flush (its chunk is held): a flusher may flush now, so the next COMMIT need not wait (`WalFlusher`). */
  deferredCommit?(): void;
}

/** What the worker tells the load. */
interface WorkerEvents {
  /** A chunk is committed; `fromLedger` when a lost COMMIT reply was found committed in the ledger. */
  committed(chunk: Chunk, outcome: ChunkOutcome & { fromLedger: boolean }, startedAt: number, endedAt: number): Promise<void>;
  now(): number;
  /** A chunk lost its connection and will be tried again after `waitMs`. */
  retrying?(chunk: Chunk, error: unknown, attempt: number, waitMs: number): void;
  /** A chunk committed without waiting for the flush was lost with the server's unflushed WAL, and is loaded again. */
  reloading?(chunk: Chunk): void;
}

/** How long a stopping load tries to confirm a held chunk (a server that hangs must not hang the stop). */
const SETTLE_MS = 5000;

type Committed = ChunkOutcome & { fromLedger: boolean };

/** A chunk committed without waiting for its WAL flush: held (buffers and all) until it is durable. */
interface Unflushed {
  readonly chunk: Chunk;
  outcome: Committed;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The WAL position (`pg_lsn`) the flush must pass. */
  readonly durableAt: string;
  flushed: boolean;
  /** The connection (its number) whose COMMIT returned: on that one still, the ledger need not be asked. */
  readonly connection: number;
}

/**
 * One worker: takes chunks from the queue and commits each exactly once on its own
 * connection. When the connection dies (a terminated backend, a server restart, the
 * network), the chunk is retried on a fresh connection with backoff, for up to
 * `retryForMs`; before a retry the ledger is asked whether the chunk got in after all.
 *
 * With `deferFlush`, a chunk's COMMIT does not wait for the WAL flush (one fsync per
 * chunk, ~2% of a load with one worker). The chunk is held, uncounted, until the server's
 * flush position passes its commit: checked by the server as the next chunk commits (in
 * the COMMIT's round trip), whose COMMIT waits for the flush itself when it has not (so
 * at most one chunk is held), and forced at the end. `deferredCommit` lets a flusher
 * (`WalFlusher`) flush meanwhile on a session of its own, so that the next COMMIT finds
 * it done. After a lost connection, the ledger
 * is asked about the held chunk and then WAL is flushed: there, it is durable; missing (a
 * crash took the unflushed WAL), it loads again.
 */
export class LoadWorker {
  private busy = false;
  private committing = false;
  /** This connection may commit without waiting (see `canDeferFlush`). */
  private deferring = false;
  /** Some earlier connection did: after a reconnect, a chunk the ledger shows committed is flushed before it counts. */
  private deferred = false;
  private held: Unflushed | undefined;
  /** `prepare` ran on the current connection. */
  private prepared = false;
  /** Connections opened so far: the number of the current one. */
  private connections = 0;
  /** The backend of a connection lost since: ended (and seen gone) before the ledger is asked. */
  private lostBackend: Backend | undefined;
  /** This worker ended early because `leave` said so. */
  left = false;
  private readonly router: ChunkRouter | undefined;

  constructor(
    private client: pg.Client | undefined,
    private readonly ctx: WorkerContext,
  ) {
    this.router = ctx.router?.();
  }

  async run(): Promise<void> {
    try {
      for (;;) {
        if (this.ctx.stop.stopping()) break;
        if (this.ctx.stop.leave?.() === true) {
          this.left = true;
          break;
        }
        const chunk = await this.ctx.queue.take();
        if (chunk === undefined || this.ctx.stop.stopping()) break;
        const startedAt = this.ctx.events.now();
        const outcome = await this.withRetries(chunk, (client, attempt) => this.commitOnce(client, chunk, attempt));
        // Flushed meanwhile by a flusher, the next COMMIT need not wait (asked before the bookkeeping below, to start sooner).
        if (outcome.durableAt !== undefined) this.ctx.flush.deferredCommit?.();
        await this.countHeldIfFlushed();
        if (outcome.durableAt !== undefined) {
          this.held = { chunk, outcome, startedAt, endedAt: this.ctx.events.now(), durableAt: outcome.durableAt, flushed: false, connection: this.connections };
        } else {
          await this.count(chunk, outcome, startedAt, this.ctx.events.now());
        }
      }
      if (this.held && !this.held.flushed) {
        if (this.ctx.stop.stopping()) await this.settleHeld();
        else await this.withRetries(this.held.chunk, (client) => this.confirmHeld(client));
      }
      await this.countHeldIfFlushed();
    } catch (error) {
      await this.settleHeld();
      throw error;
    } finally {
      await this.client?.end().catch(() => undefined);
      this.client = undefined;
      await this.router?.close();
    }
  }

  /** Ctrl-C: cut the connection of a chunk in flight (the server rolls it back), but let a COMMIT already sent finish. */
  interrupt(): void {
    this.router?.interrupt?.();
    if (this.busy && !this.committing && this.client) {
      (this.client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy();
    }
  }

  private async prepare(client: pg.Client): Promise<void> {
    await this.ctx.transaction.writer.prepare?.(client);
    this.deferring = this.ctx.flush.deferFlush && !this.ctx.transaction.writer.ownsTransactions && (await canDeferFlush(client));
    this.deferred ||= this.deferring;
  }

  private async count(chunk: Chunk, outcome: Committed, startedAt: number, endedAt: number): Promise<void> {
    await this.ctx.events.committed(chunk, outcome, startedAt, endedAt);
    chunk.release?.();
  }

  private async countHeldIfFlushed(): Promise<void> {
    const held = this.held;
    if (held?.flushed !== true) return;
    this.held = undefined;
    await this.count(held.chunk, held.outcome, held.startedAt, held.endedAt);
  }

  /**
   * Confirms the held chunk (then counted by `countHeldIfFlushed`), at the end of the
   * input, on a fresh connection after a lost one, or as the load stops: the ledger says
   * whether it got in, then the WAL is flushed, so what the ledger showed is on disk (in
   * this order: a commit the old backend makes after the flush would not be). Missing, the
   * chunk was lost with the server's unflushed WAL: load it again, waiting for the flush
   * this time, unless the load is stopping (`reload` false: the ledger decides for a resume).
   */
  private async confirmHeld(client: pg.Client, reload = true): Promise<void> {
    const held = this.held;
    if (held === undefined || held.flushed) return;
    if (client === this.client && held.connection === this.connections) {
      // Its COMMIT returned on this very connection: committed; flushed, it is durable (the
      // ledger is asked only after a lost connection).
      await flushWal(client);
      held.flushed = true;
      return;
    }
    const done = await this.committedInLedger(client, held.chunk);
    await flushWal(client);
    if (done === undefined) {
      if (!reload) return;
      this.ctx.events.reloading?.(held.chunk);
      try {
        held.outcome = { ...(await this.commitOnce(client, held.chunk, 0, 'now')), fromLedger: false };
      } catch (error) {
        // The error is this chunk's, not the one the worker is retrying (see withRetries).
        if (error instanceof Error && !('pgsurgeLocation' in error)) Object.assign(error, { pgsurgeLocation: held.chunk.location });
        throw error;
      }
    } else {
      held.outcome = done;
    }
    held.flushed = true;
  }

  private async committedInLedger(client: pg.Client, chunk: Chunk): Promise<Committed | undefined> {
    const done = await this.ctx.ledger.committed(client, chunk);
    if (!done) return undefined;
    const rejects = done.rejected > 0 ? await this.ctx.ledger.rejectsOf(client, chunk) : [];
    return { loaded: done.loaded, skipped: done.skipped, rejects, fromLedger: true };
  }

  private async commitOnce(client: pg.Client, chunk: Chunk, attempt: number, wait?: 'now'): Promise<Committed> {
    if (attempt > 0) {
      await this.confirmHeld(client);
      const done = await this.committedInLedger(client, chunk);
      if (done) {
        if (this.router?.routes(chunk)) this.router.foundCommitted?.(chunk);
        // Seen committed, so its commit record is in the WAL; it may have been a COMMIT that did not wait.
        if (this.deferred) await flushWal(client);
        return done;
      }
    }
    const held = this.held && !this.held.flushed ? this.held : undefined;
    const deferral: Deferral | undefined = wait === undefined && this.deferring ? (held ? { after: held.durableAt } : {}) : undefined;
    const outcome = await commitChunk(client, chunk, { ...this.ctx.transaction, onCommit: () => (this.committing = true), ...(deferral ? { deferral } : {}), ...(this.router ? { router: this.router } : {}) });
    // A COMMIT that waited for its flush also flushed the held chunk's (an earlier commit);
    // one that did not wait was allowed not to only because WAL was flushed past the held chunk.
    if (this.held) this.held.flushed = true;
    return { ...outcome, fromLedger: false };
  }

  /**
   * The load stops (an error, Ctrl-C) with a chunk held: count it if it is durable after
   * all, on this connection or a fresh one, without retrying. If that fails, it stays
   * uncounted here, and the ledger (where it is, or is not) decides for a resume.
   */
  private async settleHeld(): Promise<void> {
    const held = this.held;
    if (held === undefined) return;
    if (!held.flushed) {
      let timer: NodeJS.Timeout | undefined;
      const settled = (async (): Promise<void> => {
        // The worker's connection if it still answers, else one of its own, ended here even
        // when it comes after the give-up (the stop must not be held open by it).
        let own: pg.Client | undefined;
        try {
          const live = await this.answers(this.client);
          if (!live && this.client) this.lostBackend ??= backendOf(this.client);
          const client = live ? this.client! : (own = await this.ctx.sessions.connect());
          await this.endLostBackend(client);
          await this.confirmHeld(client, false);
        } finally {
          await own?.end().catch(() => undefined);
        }
      })();
      const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
      await Promise.race([settled, giveUp]).catch(() => undefined);
      clearTimeout(timer);
    }
    // Uncounted unless flushed; see above.
    await this.countHeldIfFlushed();
  }

  /** See `endOldBackend`: a commit of the lost connection's backend cannot land after the ledger is read. */
  private async endLostBackend(client: pg.Client): Promise<void> {
    const lost = this.lostBackend;
    if (lost === undefined) return;
    await endOldBackend(client, lost);
    this.lostBackend = undefined;
  }

  /** True when the connection is there and out of any failed transaction. */
  private async answers(client: pg.Client | undefined): Promise<boolean> {
    if (client === undefined) return false;
    try {
      await client.query('ROLLBACK');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Runs `attempt` on the worker's connection, retrying on a fresh one with backoff while
   * the failure is a lost connection or server, for up to `retryForMs`.
   */
  private async withRetries<T>(chunk: Chunk, attempt: (client: pg.Client, attempt: number) => Promise<T>): Promise<T> {
    let failingSince: number | undefined;
    let tries = 0;
    for (;;) {
      this.busy = true;
      try {
        if (this.client === undefined) {
          this.client = await this.ctx.sessions.connect();
          this.connections++;
          this.prepared = false;
          await this.ctx.sessions.reconnected?.(this.client);
        }
        await this.endLostBackend(this.client);
        // Prepared on first use, inside the retries: a backend terminated before its first query is just a lost connection.
        if (!this.prepared) {
          await this.prepare(this.client);
          this.prepared = true;
        }
        return await attempt(this.client, tries);
      } catch (error) {
        if (!isRetryable(error) || this.ctx.stop.stopping()) {
          // The failure's place in the input, for the message (errors are data).
          if (error instanceof Error && !('pgsurgeLocation' in error)) Object.assign(error, { pgsurgeLocation: chunk.location });
          throw error;
        }
        const dead = this.client;
        this.client = undefined;
        if (dead) this.lostBackend ??= backendOf(dead);
        await dead?.end().catch(() => undefined);
        failingSince ??= Date.now();
        if (Date.now() - failingSince > this.ctx.sessions.retryForMs) {
          throw new LoadError('server-lost', `lost the server while loading ${chunk.location.file} at byte ${chunk.location.byteOffset} and could not get it back within ${Math.round(this.ctx.sessions.retryForMs / 1000)} s: ${(error as Error).message}`, {
            hint:
              this.ctx.ledger === NO_LEDGER
                ? 'check that the server is up (its log says why it went away); the chunks committed so far stay, and without the ledger the load cannot be resumed: load the input again with --truncate (without it those rows would go in twice)'
                : 'check that the server is up (its log says why it went away); the chunks committed so far stay, and a resume loads the rest',
            location: chunk.location,
            cause: error,
          });
        }
        this.busy = false;
        const wait = backoffMs(tries++);
        this.ctx.events.retrying?.(chunk, error, tries, wait);
        await sleep(wait, this.ctx.stop.signal);
        if (this.ctx.stop.stopping()) throw error;
      } finally {
        this.busy = false;
        this.committing = false;
      }
    }
  }
}
