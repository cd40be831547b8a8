import type { Chunk } from '../core/chunk.js';

/** Something that yields chunks one at a time; never read by two callers at once. */
export type ChunkSource = AsyncIterator<Chunk>;

interface SourceState {
  readonly source: ChunkSource;
  busy: boolean;
  done: boolean;
}

/**
 * Hands chunks from many sources to the workers, reading ahead at most `capacity`
 * chunks, so memory is O(workers × chunk) whatever the input: a chunk is read only when
 * there is room for it, and room appears only when a worker takes one (backpressure from
 * the server, through the workers, back to the readers). Sources are read in the order
 * given (biggest file first), each by one reader at a time, several sources at once.
 */
export class ChunkQueue {
  private readonly states: SourceState[];
  private readonly ready: Chunk[] = [];
  private readonly waiters: { resolve: (c: Chunk | undefined) => void; reject: (e: unknown) => void }[] = [];
  private reading = 0;
  /** In order: each chunk's place among the chunks read, 0, 1, 2 … */
  private readonly places = new WeakMap<Chunk, number>();
  private read = 0;
  private failure: { error: unknown } | undefined;
  private closed = false;

  /**
   * `inOrder`: the sources one after another, in the order given, one chunk read at a time:
   * chunks come out in input order (an upsert's key lanes apply them in that order).
   */
  constructor(
    sources: readonly ChunkSource[],
    private readonly capacity: number,
    private readonly inOrder = false,
  ) {
    if (capacity < 1) throw new RangeError('capacity must be at least 1');
    this.states = sources.map((source) => ({ source, busy: false, done: false }));
  }

  /** The next chunk, or undefined when every source is exhausted. Rejects with the first read error. */
  take(): Promise<Chunk | undefined> {
    if (this.failure) return Promise.reject(this.failure.error);
    const chunk = this.ready.shift();
    if (chunk !== undefined) {
      this.fill();
      return Promise.resolve(chunk);
    }
    if (this.finished()) return Promise.resolve(undefined);
    const p = new Promise<Chunk | undefined>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.fill();
    return p;
  }

  /**
   * Starts reading ahead now, before the first `take`: a load calls it before it connects,
   * so its first chunks are read (a Parquet row group decoded) while its sessions open.
   */
  start(): void {
    this.fill();
  }

  /** Stop reading: pending and future `take()`s get undefined; sources are closed (one being read, once its read settles). */
  async close(): Promise<void> {
    this.closed = true;
    this.ready.length = 0;
    for (const w of this.waiters.splice(0)) w.resolve(undefined);
    await Promise.allSettled(
      this.states.filter((s) => !s.done && !s.busy).map(async (s) => {
        s.done = true;
        await s.source.return?.();
      }),
    );
  }

  private finished(): boolean {
    return this.closed || (this.reading === 0 && this.states.every((s) => s.done));
  }

  private fill(): void {
    while (!this.closed && !this.failure && this.ready.length + this.reading < this.capacity) {
      const state = this.inOrder ? this.states.find((s) => !s.done) : this.states.find((s) => !s.busy && !s.done);
      if (state === undefined || state.busy) break;
      state.busy = true;
      this.reading++;
      state.source.next().then(
        (result) => {
          state.busy = false;
          this.reading--;
          if (result.done) state.done = true;
          else if (this.closed) {
            // Closed while this read was in flight (close() returns only idle sources): the source is closed now,
            // so its file (and a Parquet reader's decoding thread) is let go, as close() does for the others.
            state.done = true;
            void Promise.resolve(state.source.return?.()).catch(() => undefined);
          } else this.deliver(result.value);
          this.fill();
          if (this.finished()) for (const w of this.waiters.splice(0)) w.resolve(undefined);
        },
        (error: unknown) => {
          state.busy = false;
          state.done = true;
          this.reading--;
          this.failure ??= { error };
          for (const w of this.waiters.splice(0)) w.reject(error);
        },
      );
    }
  }

  /** The chunk's place among the chunks this queue read (0, 1, 2 …: input order when the queue reads in order). */
  placeOf(chunk: Chunk): number {
    const place = this.places.get(chunk);
    if (place === undefined) throw new Error('internal: a chunk this queue did not hand out');
    return place;
  }

  private deliver(chunk: Chunk): void {
    this.places.set(chunk, this.read++);
    if (this.closed) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(chunk);
    else this.ready.push(chunk);
  }
}
