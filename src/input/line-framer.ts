import { EMPTY, type FramedBlock, type Framer, linesBefore, type RecordSpans } from './framer.js';
import type { Unframable } from '../core/chunk.js';
import {
  BACKSLASH,
  CR,
  countByte,
  DOT,
  detectLineEnd,
  escapedAt,
  LF,
  lineByte,
  type LineEnd,
  MIDDLE_MARKER_MESSAGE,
  nextTextRecord,
  onlyLineEnds,
  Strays,
  strayLineEndMessage,
  type TextRecord,
  textMarker,
  VALUE_ENDS_IN_MARKER_MESSAGE,
} from './line-ends.js';

/** How a text framer reads its input. */
export interface TextFramerOptions {
  /** The input's line ending (from its first line); taken from the first block framed when not given. */
  readonly lineEnd?: LineEnd | undefined;
  /**
   * The bytes framed end where the input does (false for a byte range before the end of
   * its file): only there is a final `\.` line the end-of-data marker, skipped.
   */
  readonly endsInput?: boolean;
}

/** One record of a block, as framed: its content `[start, contentEnd)` and the bytes it took up to `end`. */
interface Span {
  start: number;
  contentEnd: number;
  end: number;
}

/** What a block's records came to: the records, and then the record that cannot be framed, if one stopped the block. */
interface Scanned {
  spans: Span[];
  lines: number;
  /** Source bytes the spans take. */
  consumed: number;
  /** A record that stops the block: it cannot be framed (or is the final marker, skipped). */
  stop?: { readonly unframable: Unframable; readonly consumed: number; readonly lines: number };
  /** The block stops before a record it cannot judge yet (a `\.` line that may end the input). */
  wait?: boolean;
}

/**
 * PostgreSQL's text format (and, with `tbl`, dbgen's `.tbl`), framed as COPY reads it
 * (`CopyReadLineText`): a record ends at the input's line ending (the first line's: `\n`,
 * `\r\n` or `\r`) unless a backslash escapes it. Records go to the server one a line
 * ending in `\n`: an `\n` input's bytes pass through unchanged. A record COPY would read
 * otherwise alone than in the whole file never reaches the server: one with another line
 * ending inside, one ending in `\.`, the end-of-data marker `\.` (skipped at the end of
 * the input, rejected elsewhere) make blocks of their own that send nothing (`unframable`).
 */
export class LineFramer implements Framer {
  protected detected: LineEnd | undefined;
  protected readonly endsInput: boolean;
  private readonly record: TextRecord = { termAt: 0, termEnd: 0, lines: 0, stray: 0 };

  constructor(
    options: TextFramerOptions = {},
    protected readonly tbl = false,
  ) {
    this.detected = options.lineEnd;
    this.endsInput = options.endsInput ?? true;
  }

  /** The line ending records are framed by, once known. */
  get lineEnd(): LineEnd | undefined {
    return this.detected;
  }

  frame(buf: Buffer, eof: boolean): FramedBlock {
    const lineEnd = (this.detected ??= detectLineEnd(buf, eof));
    if (lineEnd === undefined) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
    if (lineEnd === 'nl' && !this.tbl) {
      if (buf.indexOf(BACKSLASH) < 0 && buf.indexOf(CR) < 0) return framePlain(buf, eof);
      const passed = framePassThrough(buf, eof);
      if (passed !== undefined) return passed;
    }
    const scanned = this.scan(buf, eof, lineEnd);
    const stopped = this.stopped(scanned);
    if (stopped !== undefined) return stopped;
    const { spans } = scanned;
    if (spans.length === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
    const last = spans[spans.length - 1]!;
    const more = scanned.stop !== undefined;
    // `\n` input whose records all end in their `\n`: the bytes as they are.
    if (lineEnd === 'nl' && !this.tbl && last.contentEnd === last.end - 1 && buf[last.contentEnd] === LF) return { out: buf.subarray(0, scanned.consumed), consumed: scanned.consumed, records: spans.length, lines: scanned.lines, ...(more ? { more } : {}) };
    const out = Buffer.allocUnsafe(scanned.consumed + 1);
    const written = writeSpans(buf, spans, out, 0, -1);
    return { out: out.subarray(0, written), consumed: scanned.consumed, records: spans.length, lines: scanned.lines, ...(more ? { more } : {}) };
  }

  /** The block for a scan that stopped at an unframable record before any other, or undefined. */
  protected stopped(scanned: Scanned): FramedBlock | undefined {
    if (scanned.spans.length > 0 || scanned.stop === undefined) return undefined;
    const { stop } = scanned;
    return { out: EMPTY, consumed: stop.consumed, records: 1, lines: stop.lines, more: true, unframable: stop.unframable };
  }

  /**
   * The whole records at the start of `buf`, up to one that cannot be framed (that one
   * then stops the scan, and is in `stop` when it is the first).
   */
  protected scan(buf: Buffer, eof: boolean, lineEnd: LineEnd): Scanned {
    const r = this.record;
    const tbl = this.tbl;
    const strayByte = lineEnd === 'cr' ? LF : CR;
    const strays = lineEnd === 'crnl' || buf.indexOf(strayByte) >= 0 ? new Strays(buf) : undefined;
    const spans: Span[] = [];
    let start = 0;
    let lines = 0;
    while (start < buf.length) {
      if (!nextTextRecord(buf, start, lineEnd, eof, strays, r)) break;
      const terminated = r.termEnd > r.termAt;
      let contentEnd = r.termAt;
      // `.tbl`: dbgen's trailing `|` (the line ending, a CRLF file's `\r` too, is already left out).
      if (tbl && contentEnd > start && buf[contentEnd - 1] === 0x7c && !escapedAt(buf, contentEnd - 1, start)) contentEnd--;
      let why: Unframable | undefined;
      const recordLength = r.termAt - start;
      if (r.stray !== 0) why = { message: strayLineEndMessage(r.stray, false), character: undefined, recordLength };
      else {
        const marker = textMarker(buf, start, contentEnd);
        if (marker === 'value') why = { message: VALUE_ENDS_IN_MARKER_MESSAGE, character: contentEnd - start - 1, recordLength };
        else if (marker === 'marker') {
          const atEnd = onlyLineEnds(buf, r.termEnd);
          if (atEnd && !eof) return { spans, lines, consumed: start, wait: true };
          if (atEnd && this.endsInput) {
            const skipped = { message: 'the end-of-data marker \\. at the end of the input', character: undefined, recordLength, skip: true };
            const extra = countByte(buf, lineByte(lineEnd), r.termEnd, buf.length);
            return { spans, lines, consumed: start, stop: { unframable: skipped, consumed: buf.length, lines: r.lines + extra } };
          }
          why = { message: MIDDLE_MARKER_MESSAGE, character: undefined, recordLength };
        }
      }
      if (why !== undefined) return { spans, lines, consumed: start, stop: { unframable: why, consumed: r.termEnd, lines: r.lines } };
      // The unterminated last record: a backslash ending it escapes nothing (COPY drops it), and it gets its newline.
      if (!terminated && contentEnd > start && buf[contentEnd - 1] === BACKSLASH && escapedAt(buf, contentEnd, start)) contentEnd--;
      spans.push({ start, contentEnd, end: r.termEnd });
      lines += r.lines;
      start = r.termEnd;
    }
    return { spans, lines, consumed: start };
  }

  linesBeforeRecord(source: Buffer, record: number): number {
    return linesBefore(this.recordSpans(source), record);
  }

  recordSpans(source: Buffer): RecordSpans {
    const lineEnd = this.detected ?? detectLineEnd(source, true) ?? 'nl';
    const r: TextRecord = { termAt: 0, termEnd: 0, lines: 0, stray: 0 };
    const ends: number[] = [];
    const lines: number[] = [];
    let start = 0;
    while (start < source.length && nextTextRecord(source, start, lineEnd, true, undefined, r)) {
      ends.push(r.termEnd);
      lines.push(r.lines);
      start = r.termEnd;
    }
    return { ends, lines, lineEnd };
  }
}

/** A block of an `\n` input with no backslash and no CR: every `\n` ends a record, the bytes pass through. */
function framePlain(buf: Buffer, eof: boolean): FramedBlock {
  const last = buf.lastIndexOf(LF);
  if (last < 0) {
    if (!eof || buf.length === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
    return { out: Buffer.concat([buf, NEWLINE_BYTE]), consumed: buf.length, records: 1, lines: 1 };
  }
  const records = countNewlines(buf, last + 1);
  if (eof && last + 1 < buf.length) {
    return { out: Buffer.concat([buf, NEWLINE_BYTE]), consumed: buf.length, records: records + 1, lines: records + 1 };
  }
  return { out: buf.subarray(0, last + 1), consumed: last + 1, records, lines: records };
}

/**
 * A block of an `\n` input whose records all pass through as they are (escaped newlines
 * inside them, no CR, no `\.` at their end), without a record of its own per record;
 * undefined when one does not (then the block is framed record by record).
 */
function framePassThrough(buf: Buffer, eof: boolean): FramedBlock | undefined {
  const strays = buf.indexOf(CR) >= 0 ? new Strays(buf) : undefined;
  let start = 0;
  let records = 0;
  let lines = 0;
  for (;;) {
    let i = buf.indexOf(LF, start);
    let recordLines = 1;
    while (i > start && buf[i - 1] === BACKSLASH && escapedAt(buf, i, start)) {
      recordLines++;
      i = buf.indexOf(LF, i + 1);
    }
    if (i < 0) break;
    if ((buf[i - 1] === DOT && textMarker(buf, start, i) !== undefined) || (strays !== undefined && strays.first(CR, start, i) >= 0)) return undefined;
    records++;
    lines += recordLines;
    start = i + 1;
  }
  if (eof && start < buf.length) return undefined;
  if (records === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
  return { out: buf.subarray(0, start), consumed: start, records, lines };
}

const NEWLINE_BYTE = Buffer.from('\n');

/**
 * Writes each span's content and a `\n` to `into` from `at`; returns the end. `inInto`:
 * where `buf` lies in `into` (framing in place: every span is moved left), or -1.
 */
export function writeSpans(buf: Buffer, spans: readonly Span[], into: Buffer, at: number, inInto: number): number {
  let written = at;
  for (const s of spans) {
    if (inInto >= 0) {
      if (written !== inInto + s.start) into.copyWithin(written, inInto + s.start, inInto + s.contentEnd);
    } else buf.copy(into, written, s.start, s.contentEnd);
    written += s.contentEnd - s.start;
    into[written++] = LF;
  }
  return written;
}

/** Newlines in `buf[0, end)`. */
export function countNewlines(buf: Buffer, end: number = buf.length): number {
  return countByte(buf, LF, 0, end);
}
