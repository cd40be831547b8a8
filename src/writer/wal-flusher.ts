import type pg from 'pg';
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
 * answer in the worker's own COMMIT (`commitModeStatement`) or its own flush at the end,
 * so a flusher that fails (its connection lost, the server gone) stops and changes
 * nothing else. Requests while a flush runs are folded into one flush after it.
 */
export class WalFlusher {
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Flushes done, for tests and the curious. */
  flushes = 0;

  constructor(private readonly connect: () => Promise<pg.Client>) {}

  /** A COMMIT returned before its flush: flush soon. */
  request(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.flushLoop().finally(() => (this.running = undefined));
  }

  private async flushLoop(): Promise<void> {
    try {
      this.client ??= await this.connect();
      do {
        this.again = false;
        await flushWal(this.client);
        if (process.env.PQT) console.error(`${Date.now() % 100000} flushed`, (await this.client.query('select pg_current_wal_flush_lsn()::text f')).rows[0].f);
        this.flushes++;
      } while (this.again && !this.stopped);
    } catch {
      // Only a help (see above): the workers' own commits and final flush decide what is durable.
      this.stopped = true;
    }
    // Closed meanwhile (or failed): the session ends here, where it may have been opened after `close` looked.
    if (this.stopped) await this.endSession();
  }

  private async endSession(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c === undefined) return;
    // A server that hangs must not hang the load's end: the socket is cut after a second.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([c.end().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
    (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }

  /** Ends the session, after the flush in progress (a second at most). */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.running !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.running, new Promise((r) => (timer = setTimeout(r, 1000)))]);
      clearTimeout(timer);
    }
    await this.endSession();
  }
}
