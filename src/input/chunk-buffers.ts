/**
 * Buffers of a chunk's size (a chunk's source bytes) and one byte more (its wire bytes),
 * handed back when chunks are released and lent again, so a load of any size touches
 * the same few buffers: as many as chunks are alive at once (read ahead, in flight, held
 * until flushed, being read), about 2 × (3 × workers + 1). Other sizes (a record longer than a chunk) are left
 * to the garbage collector. One per load, shared by all its readers.
 */
export class ChunkBuffers {
  private readonly free = new Map<number, Buffer[]>();

  /** `keep`: at most this many free buffers of each size are kept. */
  constructor(
    readonly chunkBytes: number,
    private readonly keep = 8,
  ) {}

  take(size: number): Buffer {
    // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool for small buffers.
    return this.free.get(size)?.pop() ?? Buffer.allocUnsafeSlow(size);
  }

  give(buf: Buffer): void {
    if (buf.length !== this.chunkBytes && buf.length !== this.chunkBytes + 1) return;
    let list = this.free.get(buf.length);
    if (list === undefined) this.free.set(buf.length, (list = []));
    if (list.length < this.keep) list.push(buf);
  }
}
