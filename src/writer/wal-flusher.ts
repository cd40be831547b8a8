import type pg from 'pg';
import { withTimeout } from '../core/retry.js';
import { flushWal } from './wal-flush.js';

/**
 * Flushes the WAL on a session of its own as soon as a worker's COMMIT returned without
 * waiting for it, so that the worker's next COMMIT finds its held chunk on disk and need
 * not wait either.
 *
 * Without it the flush is the walwriter's, which sleeps `wal_writer_delay` (200 ms by
 * default) between rounds and, woken by the commit, flushes only the WAL pages completed
 * by then, not the one the commit record is on: with chunks that take less than that
 * to load (one worker, ~150 ms for an 8 MB chunk of lineitem), 40% of the commits found
 * their held chunk not flushed and waited for the flush themselves, a backend idle for
 * 10–20 ms each (docs/exactly-once.md, "Rows never loaded twice").
 *
 * It only makes the flush come sooner: whether a chunk is durable is still the server's
 * answer in the worker's own COMMIT (`commitModeStatement`) or its own flush at the end.
 * So a flusher that fails changes nothing else: its session is dropped and opened again
 * at a later request, after a pause that doubles with each failure (1 s … 30 s); it stops
 * for good when the server has no connection to spare for it (53300: no use asking again)
 * or can only flush by waiting (`flushWal`'s last way, which would not make
 * anything sooner). Requests while a flush runs fold into one flush after it.
 *
 * One flusher serves every load of the process on one server (`sharedFlusher`): a flush
 * covers the whole server's WAL, so `dbt3 load`'s tables share one session.
 */
export class WalFlusher {
  private client: pg.Client | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private failures = 0;
  private retryAt = 0;
  private done: Promise<void> = Promise.resolve();
  /** Flushes done, for tests and the curious. */
  flushes = 0;

  constructor(private readonly connect: () => Promise<pg.Client>) {}

  /** A COMMIT returned before its flush: flush soon. */
  request(): void {
    if (this.stopped || Date.now() < this.retryAt) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.done = this.flushLoop();
  }

  private async flushLoop(): Promise<void> {
    try {
      this.client ??= await this.connect();
      do {
        if (this.stopped) break;
        this.again = false;
        const way = await flushWal(this.client);
        this.flushes++;
        this.failures = 0;
        if (way === 'wait') this.stopped = true;
      } while (this.again);
    } catch (error) {
      if ((error as { code?: string }).code === TOO_MANY_CONNECTIONS) this.stopped = true;
      this.failures++;
      this.retryAt = Date.now() + Math.min(30_000, 1000 * 2 ** (this.failures - 1));
      await this.endSession();
    } finally {
      this.running = false;
    }
    // Closed meanwhile: the session ends here, where it may have been opened after `close` looked.
    if (this.stopped) await this.endSession();
  }

  private async endSession(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c === undefined) return;
    // A server that hangs must not hang the load's end: the socket is cut after a second.
    await withTimeout(c.end(), 1000).catch(() => undefined);
    (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }

  /** Ends the session, after the flush in progress (a second at most). */
  async close(): Promise<void> {
    this.stopped = true;
    await withTimeout(this.done, 1000).catch(() => undefined);
    await this.endSession();
  }
}

const TOO_MANY_CONNECTIONS = '53300';

const shared = new Map<string, { flusher: WalFlusher; users: number }>();

/**
 * The process's flusher for the server `key` names (made with `connect` by the first
 * load), and its release: the last load to release it closes it.
 */
export function sharedFlusher(key: string, connect: () => Promise<pg.Client>): { flusher: WalFlusher; release(): Promise<void> } {
  let entry = shared.get(key);
  if (entry === undefined) shared.set(key, (entry = { flusher: new WalFlusher(connect), users: 0 }));
  entry.users++;
  const mine = entry;
  let released = false;
  return {
    flusher: mine.flusher,
    async release() {
      if (released) return;
      released = true;
      if (--mine.users > 0) return;
      if (shared.get(key) === mine) shared.delete(key);
      await mine.flusher.close();
    },
  };
}
