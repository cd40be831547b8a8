import type { LineEnd } from './line-ends.js';
import type { Unframable } from '../core/chunk.js';

/**
 * A framer finds where records end in a run of bytes and turns whole records into the
 * bytes the writer sends. It sees the bytes left over from the previous block again at
 * the start of the next one, so a record cut across blocks is never lost, split or doubled.
 */
export interface FramedBlock {
  /** Whole records in wire format, each ending in `\n`. */
  readonly out: Buffer;
  /** Source bytes those records took (the rest of the input block is a partial record). */
  readonly consumed: number;
  /** Records framed. */
  readonly records: number;
  /** Physical lines those records span. */
  readonly lines: number;
  /** The framer stopped before the end of the whole records on purpose: frame the rest again. */
  readonly more?: boolean;
  /** The columns these records fill, when not the target's (JSON rows grouped by key set). */
  readonly columns?: readonly string[];
  /**
   * A block of one record that cannot be framed (a malformed NDJSON line), and why: it
   * makes a chunk of its own that sends nothing and rejects the record, verbatim (the
   * `consumed` bytes, its line ending included), so the load goes on (`records` 1, `out` empty).
   */
  readonly unframable?: Unframable;
}

export interface Framer {
  /**
   * Frames every whole record at the start of `buf`. When `eof` is true the input ends
   * with `buf`: a last record without a final newline is completed with one.
   */
  frame(buf: Buffer, eof: boolean): FramedBlock;
  /**
   * `frame`, writing the records into `into` from `at` instead of into a buffer of its own
   * (`into` has room for `buf.length + 1` bytes there); `out` is the part of `into` written.
   * For framers that change the bytes, so a chunk's wire bytes are written once.
   * `into` may be the buffer `buf` lies in, with `at` at or before `buf`'s start (framing
   * in place): a framer that never makes a record longer, but for the newline it may add
   * to an unterminated last one, writes only over bytes it has already read.
   */
  frameInto?(buf: Buffer, eof: boolean, into: Buffer, at: number): FramedBlock;
  /**
   * For an error that names the n-th record (1-based) of a chunk framed from `source`
   * bytes: how many physical lines precede it in those bytes.
   */
  linesBeforeRecord(source: Buffer, record: number): number;
  /**
   * Where each whole record of `source` (bytes framed before, starting at a record
   * boundary) ends, and how many physical lines it spans: what splitting a chunk around a
   * bad row needs. A last record without a final newline ends at `source.length`.
   */
  recordSpans(source: Buffer): RecordSpans;
  /** The line ending the records are framed by (text, `.tbl`, CSV), once known: a chunk's re-framing needs it. */
  readonly lineEnd?: LineEnd | undefined;
}

/** Physical lines before the n-th record (1-based) of `spans`: what `linesBeforeRecord` answers from a framer's record spans. */
export function linesBefore(spans: RecordSpans, record: number): number {
  let n = 0;
  for (let i = 0; i < record - 1 && i < spans.lines.length; i++) n += spans.lines[i]!;
  return n;
}

/** Per record: the source offset just past it, and the physical lines it spans. */
export interface RecordSpans {
  readonly ends: readonly number[];
  readonly lines: readonly number[];
  /** The line ending the records end by (`nl` when not given). */
  readonly lineEnd?: LineEnd;
}

/** Records that end at every newline (tbl, text): one line each. */
export function newlineRecordSpans(source: Buffer): RecordSpans {
  const ends: number[] = [];
  let i = source.indexOf(NEWLINE);
  while (i >= 0) {
    ends.push(i + 1);
    i = source.indexOf(NEWLINE, i + 1);
  }
  const last = ends[ends.length - 1] ?? 0;
  if (last < source.length) ends.push(source.length);
  return { ends, lines: ends.map(() => 1) };
}

export const NEWLINE = 0x0a;
export const CARRIAGE_RETURN = 0x0d;
export const PIPE = 0x7c;
export const EMPTY = Buffer.alloc(0);
