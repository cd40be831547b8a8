import type { FramedBlock, Framer } from './framer.js';
import { asRejected } from './line-ends.js';
import { RecordError } from './record-error.js';
import { iterableReader, type ByteReader } from './byte-reader.js';
import { recordFailure } from './record-failure.js';
import { LoadError } from '../core/load-error.js';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import { ChunkBuffers } from './chunk-buffers.js';

/**
 * Bytes read and framed in one step. A step runs without giving the event loop a turn, and
 * while it runs no COPY in flight gets more bytes: a Unix socket buffers ~200 KB, a few
 * milliseconds of a server's COPY, so steps are kept to about a millisecond of framing.
 */
export const READ_STEP = 1 << 20;

/**
 * The step for a load with this many workers: 256 KB, whatever the count. A step (its
 * read's copy and its framing) is one slice of the event loop, and the COPY in flight must
 * not run dry during it: a Unix socket holds ~200 KB, which the server parses in ~3.5 ms
 * as text but in ~1.3 ms as binary (1.75× the bytes, ~0.6× the server's time per row). A
 * 1 MB step of `.tbl` is 0.5–2.5 ms (0.06 µs/row framed into a buffer in cache, up to
 * 0.3 into cold memory): as long as that, or longer, so with 1 MB steps the binary
 * wire's server could run dry in every step (bench/wire-idle.ts measures it). With more workers than one, the backends take
 * every core and the kernel wakes a socket's writer only when ~50 KB are left: 256 KB
 * steps were measured ~5% faster there too (-w 2 on 2 cores, median of 12 interleaved
 * pairs; the server waited for data in 2.4% of samples with 1 MB steps, psql 0.7%). The
 * cost, a read call per step, is ~0.01 µs a row.
 */
export function readStepFor(_workers: number): number {
  return 256 * 1024;
}

export interface ChunkerOptions {
  readonly target: LoadTarget;
  readonly framer: Framer;
  /** Aim for chunks of this many source bytes; a chunk always holds at least one whole record. */
  readonly chunkBytes: number;
  /** Source offset of the first byte of the input. */
  readonly startOffset: number;
  /** Line number of the first byte of the input, when known. */
  readonly startLine: number | undefined;
  /** Bytes read and framed per step (default READ_STEP). */
  readonly readStep?: number;
  /** Buffers shared with the other readers of the load (default: this reader's own). */
  readonly buffers?: ChunkBuffers;
}

/**
 * Records → chunks. A chunk's source bytes are read into one buffer, a step at a time,
 * and the whole records in each step are framed at once into the chunk's wire bytes (for
 * formats the framer passes through unchanged, the wire bytes are the source bytes). The
 * partial record at the end of a step waits in place for the next; the one at the end of
 * a chunk moves to the next chunk's buffer. So a chunk costs two buffers and one copy of
 * its bytes at most (a `.tbl` chunk of a file one buffer: its source bytes can be read
 * again), and the event loop is never held up for longer than one step. A record longer
 * than a chunk makes a chunk of its own size, up to twice it with the records read after it.
 */
export async function* chunkRecords(input: AsyncIterable<Buffer> | ByteReader, options: ChunkerOptions): AsyncGenerator<Chunk> {
  yield* new Chunking(input, options).chunks();
}

/** One run of `chunkRecords`: the source buffer, the chunk being cut in it, and where it is in the input. */
class Chunking {
  private readonly target: LoadTarget;
  private readonly framer: Framer;
  private readonly chunkBytes: number;
  private readonly step: number;
  private readonly reader: ByteReader;
  // Where the wire bytes are a copy (tbl) and the file can be read again, a chunk does not
  // keep its source bytes: the reader's buffer goes on to the next chunk at once, and a
  // refused chunk reads its bytes again (checked against what was sent).
  private readonly reread: ByteReader['reread'];
  // And then the records are framed in place, in the source buffer itself (each step moved
  // left over the bytes dropped so far, while it is still in the cache from the read):
  // copying each step into a chunk buffer of its own, cold memory, was ~20% of the binary
  // wire's client CPU in a real load (`node --cpu-prof`, SF 0.3 lineitem -w2). The chunk
  // holds the source buffer as its wire bytes; its source bytes come from the file again.
  private readonly inPlace: boolean;
  // Buffers of a chunk's size come back when their chunks are released (committed), so a
  // load reuses a few of them instead of leaving a chunk's worth of garbage per chunk.
  private readonly pool: ChunkBuffers;
  // The source buffer: the current chunk is src[start, framed), its wire bytes so far are
  // src[start, framed) itself (`identity`) or out[0, outLength); src[framed, filled) is not framed yet.
  // Several chunks may share one source buffer; `srcUse` counts them, and the chunker while it reads into it.
  private src: Buffer;
  private srcUse: { buf: Buffer; users: number };
  private start = 0;
  private framed = 0;
  private filled = 0;
  private out: Buffer | undefined;
  private outLength = 0;
  private identity = true;
  private records = 0;
  private lines = 0;
  private columns: readonly string[] | undefined;
  private columnsKey: string | undefined;
  /** Input offset and line of src[start]. */
  private offset: number;
  private line: number | undefined;
  /** After a step that framed nothing (a record longer than a step), frame again once this many bytes wait. */
  private frameAgainWith = 0;
  // Targets for records that fill other columns than the target's (JSON key sets), one per set.
  private readonly variants = new Map<string, LoadTarget>();
  // The input's line ending, once the framer has found it (stdin, a compressed file): each chunk's re-framing needs it.
  private lineEndTarget: LoadTarget | undefined;
  /** Where a RecordError's block starts, for the message. */
  private failedAt: { offset: number; line: number | undefined };

  constructor(input: AsyncIterable<Buffer> | ByteReader, options: ChunkerOptions) {
    this.target = options.target;
    this.framer = options.framer;
    this.chunkBytes = options.chunkBytes;
    this.step = Math.max(1, Math.min(options.readStep ?? READ_STEP, options.chunkBytes));
    this.reader = 'read' in input ? input : iterableReader(input);
    this.reread = this.framer.frameInto !== undefined ? this.reader.reread : undefined;
    this.inPlace = this.reread !== undefined;
    this.pool = options.buffers?.chunkBytes === options.chunkBytes ? options.buffers : new ChunkBuffers(options.chunkBytes);
    this.src = this.pool.take(options.chunkBytes);
    this.srcUse = { buf: this.src, users: 1 };
    this.offset = options.startOffset;
    this.line = options.startLine;
    this.failedAt = { offset: this.offset, line: this.line };
  }

  /** Reads the input a step at a time and yields its chunks. */
  async *chunks(): AsyncGenerator<Chunk> {
    try {
      for (;;) {
        if (this.framed < this.filled && this.filled - this.framed >= this.frameAgainWith) yield* this.frameRead(false);
        let want = this.chunkBytes - (this.filled - this.start);
        if (want <= 0) {
          // A chunk's worth is read: cut at the last whole record, or read on when not one
          // record has ended yet (a record longer than a chunk).
          if (this.records > 0) {
            yield this.cut();
            continue;
          }
          want = this.step;
        }
        want = Math.min(want, this.step);
        if (this.src.length - this.filled < want) {
          // A new buffer for the next chunk (the last one's bytes belong to its chunk now),
          // starting with the current chunk's bytes so far: usually just a partial record.
          const keep = this.filled - this.start;
          this.moveTo(keep + want <= this.chunkBytes ? this.chunkBytes : Math.max(keep + want, keep * 2));
        }
        const n = await this.reader.read(this.src, this.filled, want);
        if (n === 0) break;
        this.filled += n;
      }
      yield* this.frameRead(false);
      yield* this.frameRead(true);
      if (this.records > 0) yield this.cut();
    } catch (error) {
      if (error instanceof RecordError) throw await recordFailure(error, this.target, this.failedAt.offset, this.failedAt.line);
      throw error;
    } finally {
      await this.reader.close?.();
    }
  }

  private framedTarget(): LoadTarget {
    if (this.target.lineEnd !== undefined || this.framer.lineEnd === undefined) return this.target;
    return (this.lineEndTarget ??= { ...this.target, lineEnd: this.framer.lineEnd });
  }

  private variant(cols: readonly string[] | undefined, key: string | undefined): LoadTarget {
    if (cols === undefined || key === undefined) return this.framedTarget();
    let t = this.variants.get(key);
    if (t === undefined) this.variants.set(key, (t = { ...this.target, columns: cols }));
    return t;
  }

  /** Room for `bytes` more in `out`, keeping what it holds. */
  private ensureOut(bytes: number): Buffer {
    if (this.out === undefined || this.out.length < bytes) {
      const bigger = this.pool.take(Math.max(bytes, this.out === undefined ? this.chunkBytes + 1 : this.out.length * 2));
      if (this.out !== undefined) this.out.copy(bigger, 0, 0, this.outLength);
      this.out = bigger;
    }
    return this.out;
  }

  /** The wire bytes so far stop being the source bytes: copy those into `out`. */
  private leaveIdentity(more: number): Buffer {
    if (this.identity) {
      this.identity = false;
      const o = this.ensureOut(this.framed - this.start + more);
      this.src.copy(o, 0, this.start, this.framed);
      this.outLength = this.framed - this.start;
      return o;
    }
    return this.ensureOut(this.outLength + more);
  }

  /** `inOut`: the framer wrote the piece into `out` at `outLength` (`frameInto`). */
  private append(piece: FramedBlock, inOut: boolean): void {
    const key = piece.columns?.join('\u0000');
    // The framer passed the source bytes through: the very bytes of src[framed, framed + consumed).
    const isSource = this.identity && !inOut && piece.out.buffer === this.src.buffer && piece.out.byteOffset === this.src.byteOffset + this.framed && piece.out.length === piece.consumed;
    if (this.inPlace) this.outLength += piece.out.length;
    else if (!isSource) {
      if (inOut && !this.identity) this.outLength += piece.out.length;
      else {
        const o = this.leaveIdentity(piece.out.length);
        this.outLength += piece.out.copy(o, this.outLength);
      }
    }
    this.framed += piece.consumed;
    this.records += piece.records;
    this.lines += piece.lines;
    this.columns = piece.columns;
    this.columnsKey = key;
  }

  /** The current chunk, ending at `framed`; the next one starts there. */
  private cut(): Chunk {
    const wire = this.identity || this.inPlace ? undefined : this.out;
    const data = this.inPlace ? this.src.subarray(this.start, this.start + this.outLength) : this.identity ? this.src.subarray(this.start, this.framed) : this.out!.subarray(0, this.outLength);
    const location = { file: this.target.file, byteOffset: this.offset, byteLength: this.framed - this.start, firstLine: this.line };
    // The source buffer holds the chunk's bytes (in place: its wire bytes, the source ones moved over and
    // read again from the file when needed): the chunk keeps it until released.
    const use = this.srcUse;
    use.users++;
    let released = false;
    const { pool, reread, framer } = this;
    const chunk: Chunk = {
      location,
      data,
      ...(reread !== undefined ? { readSource: () => readSourceAgain(reread, location, data, framer) } : { source: this.src.subarray(this.start, this.framed) }),
      records: this.records,
      lines: this.lines,
      target: this.variant(this.columns, this.columnsKey),
      release() {
        if (released) return;
        released = true;
        if (--use.users === 0) pool.give(use.buf);
        if (wire !== undefined) pool.give(wire);
      },
    };
    this.offset += this.framed - this.start;
    if (this.line !== undefined) this.line += this.lines;
    this.start = this.framed;
    if (!this.identity) this.out = undefined; // the chunk keeps it
    this.outLength = 0;
    this.identity = true;
    this.records = 0;
    this.lines = 0;
    this.columns = undefined;
    this.columnsKey = undefined;
    if (this.frameAgainWith > 0) this.waitForMore(); // the room is a whole chunk's again
    return chunk;
  }

  /**
   * Not one record ends in what waits to be framed: frame again when it has doubled (or
   * fills the chunk), so a record of many steps is scanned a few times, not once per step.
   */
  private waitForMore(): void {
    const waiting = this.filled - this.framed;
    const room = this.chunkBytes - (this.framed - this.start);
    this.frameAgainWith = waiting < room ? Math.min(waiting + Math.max(this.step, waiting), room) : 2 * waiting;
  }

  /** A record the framer could not frame, at `framed`: a chunk of its own that only rejects it (see `Chunk.unframable`). */
  private cutUnframable(piece: FramedBlock): Chunk {
    const why = piece.unframable!;
    const location = { file: this.target.file, byteOffset: this.offset, byteLength: piece.consumed, firstLine: this.line };
    // The record as the reject file holds it, its line ending included (the end-of-data marker skipped: without it).
    const record = this.src.subarray(this.framed, this.framed + (why.skip ? why.recordLength : piece.consumed));
    const chunk: Chunk = {
      location,
      data: Buffer.alloc(0),
      source: why.skip ? Buffer.from(record) : Buffer.from(asRejected(record, this.framer.lineEnd)),
      records: 1,
      lines: piece.lines,
      target: this.framedTarget(),
      unframable: why,
    };
    this.framed += piece.consumed;
    this.offset += piece.consumed;
    if (this.line !== undefined) this.line += piece.lines;
    this.start = this.framed;
    this.identity = true;
    this.outLength = 0;
    return chunk;
  }

  /** The current chunk's bytes, src[start, filled), to the start of a buffer of at least `size` bytes: this one when no chunk holds it, another when one does. */
  private moveTo(size: number): void {
    if (this.srcUse.users === 1 && size <= this.src.length) {
      this.src.copyWithin(0, this.start, this.filled); // no chunk holds this buffer: reuse it
    } else {
      const next = this.pool.take(size);
      this.src.copy(next, 0, this.start, this.filled);
      if (--this.srcUse.users === 0) this.pool.give(this.srcUse.buf);
      this.src = next;
      this.srcUse = { buf: this.src, users: 1 };
    }
    this.framed -= this.start;
    this.filled -= this.start;
    this.start = 0;
  }

  /** Where a RecordError's block starts, for the message. */

  /** Frames what has been read; returns the chunks that are complete. */
  private frameRead(eof: boolean): Chunk[] {
    const done: Chunk[] = [];
    while (this.framed < this.filled) {
      const buf = this.src.subarray(this.framed, this.filled);
      this.failedAt = { offset: this.offset + (this.framed - this.start), line: this.line === undefined ? undefined : this.line + this.lines };
      const inOut = this.framer.frameInto !== undefined;
      // In place: the last record, unterminated, may gain a newline (one byte more than it read).
      if (this.inPlace && eof && this.start + this.outLength + buf.length + 1 > this.src.length) {
        this.moveTo(Math.max(this.chunkBytes + 1, this.filled - this.start + 1));
        continue;
      }
      const piece = this.inPlace ? this.framer.frameInto!(buf, eof, this.src, this.start + this.outLength) : this.framer.frameInto ? this.framer.frameInto(buf, eof, this.leaveIdentity(buf.length + 1), this.outLength) : this.framer.frame(buf, eof);
      if (piece.consumed === 0) {
        this.waitForMore();
        break;
      }
      this.frameAgainWith = 0;
      if (piece.records === 0) {
        // Bytes with no record (blank NDJSON lines): the chunk ends before them, the next starts after them.
        if (this.records > 0) done.push(this.cut());
        this.identity = true;
        this.outLength = 0;
        this.framed += piece.consumed;
        this.start = this.framed;
        this.offset += piece.consumed;
        if (this.line !== undefined) this.line += piece.lines;
        if (piece.more) continue;
        break;
      }
      if (piece.unframable !== undefined) {
        if (this.records > 0) done.push(this.cut());
        done.push(this.cutUnframable(piece));
        if (piece.more) continue;
        break;
      }
      if (this.records > 0 && piece.columns?.join('\u0000') !== this.columnsKey) done.push(this.cut());
      this.append(piece, inOut);
      if (!piece.more) break;
      done.push(this.cut());
    }
    return done;
  }
}

/**
 * A chunk's source bytes read again from the file, for a chunk the server refused: framed
 * again, they must give the bytes that were sent, or the file changed under the load.
 */
async function readSourceAgain(reread: NonNullable<ByteReader['reread']>, location: Chunk['location'], data: Buffer, framer: Framer): Promise<Buffer> {
  const source = await reread(location.byteOffset, location.byteLength);
  const framed = source.length === location.byteLength ? framer.frame(source, true) : undefined;
  if (framed === undefined || framed.consumed !== source.length || !framed.out.equals(data)) {
    throw new LoadError('bad-input', `${location.file} changed while it was being loaded: bytes ${location.byteOffset}…${location.byteOffset + location.byteLength} are not what was sent`, {
      location,
      hint: 'load a file nobody writes to while it loads; the chunks committed so far stay',
    });
  }
  return source;
}
