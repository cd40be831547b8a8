import type { FramedBlock, Framer } from './framer.js';
import { asRejected } from './text/line-ends.js';
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
  const { target, framer, chunkBytes } = options;
  const step = Math.max(1, Math.min(options.readStep ?? READ_STEP, chunkBytes));
  const reader: ByteReader = 'read' in input ? input : iterableReader(input);
  // Where the wire bytes are a copy (tbl) and the file can be read again, a chunk does not
  // keep its source bytes: the reader's buffer goes on to the next chunk at once, and a
  // refused chunk reads its bytes again (checked against what was sent).
  const reread = framer.frameInto !== undefined ? reader.reread : undefined;
  // And then the records are framed in place, in the source buffer itself (each step moved
  // left over the bytes dropped so far, while it is still in the cache from the read):
  // copying each step into a chunk buffer of its own, cold memory, was ~20% of the binary
  // wire's client CPU in a real load (`node --cpu-prof`, SF 0.3 lineitem -w2). The chunk
  // holds the source buffer as its wire bytes; its source bytes come from the file again.
  const inPlace = reread !== undefined;

  // Buffers of a chunk's size come back when their chunks are released (committed), so a
  // load reuses a few of them instead of leaving a chunk's worth of garbage per chunk.
  const pool = options.buffers?.chunkBytes === chunkBytes ? options.buffers : new ChunkBuffers(chunkBytes);
  // The source buffer: the current chunk is src[start, framed), its wire bytes so far are
  // src[start, framed) itself (`identity`) or out[0, outLength); src[framed, filled) is not framed yet.
  // Several chunks may share one source buffer; `srcUse` counts them, and the chunker while it reads into it.
  let src = pool.take(chunkBytes);
  let srcUse = { buf: src, users: 1 };
  let start = 0;
  let framed = 0;
  let filled = 0;
  let out: Buffer | undefined;
  let outLength = 0;
  let identity = true;
  let records = 0;
  let lines = 0;
  let columns: readonly string[] | undefined;
  let columnsKey: string | undefined;
  /** Input offset and line of src[start]. */
  let offset = options.startOffset;
  let line = options.startLine;
  /** After a step that framed nothing (a record longer than a step), frame again once this many bytes wait. */
  let frameAgainWith = 0;

  // Targets for records that fill other columns than the target's (JSON key sets), one per set.
  const variants = new Map<string, LoadTarget>();
  // The input's line ending, once the framer has found it (stdin, a compressed file): each chunk's re-framing needs it.
  let lineEndTarget: LoadTarget | undefined;
  const framedTarget = (): LoadTarget => {
    if (target.lineEnd !== undefined || framer.lineEnd === undefined) return target;
    return (lineEndTarget ??= { ...target, lineEnd: framer.lineEnd });
  };
  const variant = (cols: readonly string[] | undefined, key: string | undefined): LoadTarget => {
    if (cols === undefined || key === undefined) return framedTarget();
    let t = variants.get(key);
    if (t === undefined) variants.set(key, (t = { ...target, columns: cols }));
    return t;
  };

  /** Room for `bytes` more in `out`, keeping what it holds. */
  const ensureOut = (bytes: number): Buffer => {
    if (out === undefined || out.length < bytes) {
      const bigger = pool.take(Math.max(bytes, out === undefined ? chunkBytes + 1 : out.length * 2));
      if (out !== undefined) out.copy(bigger, 0, 0, outLength);
      out = bigger;
    }
    return out;
  };

  /** The wire bytes so far stop being the source bytes: copy those into `out`. */
  const leaveIdentity = (more: number): Buffer => {
    if (identity) {
      identity = false;
      const o = ensureOut(framed - start + more);
      src.copy(o, 0, start, framed);
      outLength = framed - start;
      return o;
    }
    return ensureOut(outLength + more);
  };

  /** `inOut`: the framer wrote the piece into `out` at `outLength` (`frameInto`). */
  const append = (piece: FramedBlock, inOut: boolean): void => {
    const key = piece.columns?.join('\u0000');
    // The framer passed the source bytes through: the very bytes of src[framed, framed + consumed).
    const isSource = identity && !inOut && piece.out.buffer === src.buffer && piece.out.byteOffset === src.byteOffset + framed && piece.out.length === piece.consumed;
    if (inPlace) outLength += piece.out.length;
    else if (!isSource) {
      if (inOut && !identity) outLength += piece.out.length;
      else {
        const o = leaveIdentity(piece.out.length);
        outLength += piece.out.copy(o, outLength);
      }
    }
    framed += piece.consumed;
    records += piece.records;
    lines += piece.lines;
    columns = piece.columns;
    columnsKey = key;
  };

  /** The current chunk, ending at `framed`; the next one starts there. */
  const cut = (): Chunk => {
    const wire = identity || inPlace ? undefined : out;
    const data = inPlace ? src.subarray(start, start + outLength) : identity ? src.subarray(start, framed) : out!.subarray(0, outLength);
    const location = { file: target.file, byteOffset: offset, byteLength: framed - start, firstLine: line };
    // The source buffer holds the chunk's bytes (in place: its wire bytes, the source ones moved over and
    // read again from the file when needed): the chunk keeps it until released.
    const use = srcUse;
    use.users++;
    let released = false;
    const chunk: Chunk = {
      location,
      data,
      ...(reread !== undefined ? { readSource: () => readSourceAgain(reread, location, data, framer) } : { source: src.subarray(start, framed) }),
      records,
      lines,
      target: variant(columns, columnsKey),
      release() {
        if (released) return;
        released = true;
        if (--use.users === 0) pool.give(use.buf);
        if (wire !== undefined) pool.give(wire);
      },
    };
    offset += framed - start;
    if (line !== undefined) line += lines;
    start = framed;
    if (!identity) out = undefined; // the chunk keeps it
    outLength = 0;
    identity = true;
    records = 0;
    lines = 0;
    columns = undefined;
    columnsKey = undefined;
    if (frameAgainWith > 0) waitForMore(); // the room is a whole chunk's again
    return chunk;
  };

  /**
   * Not one record ends in what waits to be framed: frame again when it has doubled (or
   * fills the chunk), so a record of many steps is scanned a few times, not once per step.
   */
  const waitForMore = (): void => {
    const waiting = filled - framed;
    const room = chunkBytes - (framed - start);
    frameAgainWith = waiting < room ? Math.min(waiting + Math.max(step, waiting), room) : 2 * waiting;
  };

  /** A record the framer could not frame, at `framed`: a chunk of its own that only rejects it (see `Chunk.unframable`). */
  const cutUnframable = (piece: FramedBlock): Chunk => {
    const why = piece.unframable!;
    const location = { file: target.file, byteOffset: offset, byteLength: piece.consumed, firstLine: line };
    // The record as the reject file holds it, its line ending included (the end-of-data marker skipped: without it).
    const record = src.subarray(framed, framed + (why.skip ? why.recordLength : piece.consumed));
    const chunk: Chunk = {
      location,
      data: Buffer.alloc(0),
      source: why.skip ? Buffer.from(record) : Buffer.from(asRejected(record, framer.lineEnd)),
      records: 1,
      lines: piece.lines,
      target: framedTarget(),
      unframable: why,
    };
    framed += piece.consumed;
    offset += piece.consumed;
    if (line !== undefined) line += piece.lines;
    start = framed;
    identity = true;
    outLength = 0;
    return chunk;
  };

  /** The current chunk's bytes, src[start, filled), to the start of a buffer of at least `size` bytes: this one when no chunk holds it, another when one does. */
  const moveTo = (size: number): void => {
    if (srcUse.users === 1 && size <= src.length) {
      src.copyWithin(0, start, filled); // no chunk holds this buffer: reuse it
    } else {
      const next = pool.take(size);
      src.copy(next, 0, start, filled);
      if (--srcUse.users === 0) pool.give(srcUse.buf);
      src = next;
      srcUse = { buf: src, users: 1 };
    }
    framed -= start;
    filled -= start;
    start = 0;
  };

  /** Where a RecordError's block starts, for the message. */
  let failedAt: { offset: number; line: number | undefined } = { offset, line };

  /** Frames what has been read; returns the chunks that are complete. */
  const frameRead = (eof: boolean): Chunk[] => {
    const done: Chunk[] = [];
    while (framed < filled) {
      const buf = src.subarray(framed, filled);
      failedAt = { offset: offset + (framed - start), line: line === undefined ? undefined : line + lines };
      const inOut = framer.frameInto !== undefined;
      // In place: the last record, unterminated, may gain a newline (one byte more than it read).
      if (inPlace && eof && start + outLength + buf.length + 1 > src.length) {
        moveTo(Math.max(chunkBytes + 1, filled - start + 1));
        continue;
      }
      const piece = inPlace ? framer.frameInto!(buf, eof, src, start + outLength) : framer.frameInto ? framer.frameInto(buf, eof, leaveIdentity(buf.length + 1), outLength) : framer.frame(buf, eof);
      if (piece.consumed === 0) {
        waitForMore();
        break;
      }
      frameAgainWith = 0;
      if (piece.records === 0) {
        // Bytes with no record (blank NDJSON lines): the chunk ends before them, the next starts after them.
        if (records > 0) done.push(cut());
        identity = true;
        outLength = 0;
        framed += piece.consumed;
        start = framed;
        offset += piece.consumed;
        if (line !== undefined) line += piece.lines;
        if (piece.more) continue;
        break;
      }
      if (piece.unframable !== undefined) {
        if (records > 0) done.push(cut());
        done.push(cutUnframable(piece));
        if (piece.more) continue;
        break;
      }
      if (records > 0 && piece.columns?.join('\u0000') !== columnsKey) done.push(cut());
      append(piece, inOut);
      if (!piece.more) break;
      done.push(cut());
    }
    return done;
  };

  try {
    for (;;) {
      if (framed < filled && filled - framed >= frameAgainWith) yield* frameRead(false);
      let want = chunkBytes - (filled - start);
      if (want <= 0) {
        // A chunk's worth is read: cut at the last whole record, or read on when not one
        // record has ended yet (a record longer than a chunk).
        if (records > 0) {
          yield cut();
          continue;
        }
        want = step;
      }
      want = Math.min(want, step);
      if (src.length - filled < want) {
        // A new buffer for the next chunk (the last one's bytes belong to its chunk now),
        // starting with the current chunk's bytes so far: usually just a partial record.
        const keep = filled - start;
        moveTo(keep + want <= chunkBytes ? chunkBytes : Math.max(keep + want, keep * 2));
      }
      const n = await reader.read(src, filled, want);
      if (n === 0) break;
      filled += n;
    }
    yield* frameRead(false);
    yield* frameRead(true);
    if (records > 0) yield cut();
  } catch (error) {
    if (error instanceof RecordError) throw await recordFailure(error, target, failedAt.offset, failedAt.line);
    throw error;
  } finally {
    await reader.close?.();
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
