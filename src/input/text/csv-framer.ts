import { EMPTY, type FramedBlock, type Framer, linesBefore, type RecordSpans } from '../framer.js';
import type { Unframable } from '../../core/chunk.js';
import { BACKSLASH, CR, detectLineEnd, DOT, LF, lineByte, type LineEnd, MIDDLE_MARKER_MESSAGE, onlyLineEnds, strayLineEndMessage } from '../line-ends.js';
import type { TextFramerOptions } from '../line-framer.js';
import { writeSpans } from '../line-framer.js';

const DOUBLE_QUOTE = 0x22;

/** One CSV record found by `next`. */
interface CsvRecord {
  termAt: number;
  termEnd: number;
  lines: number;
  stray: number;
}

/**
 * CSV, framed as COPY reads it (`CopyReadLineText` in CSV mode): a record ends at the
 * input's line ending (the first line's: `\n`, `\r\n` or `\r`) outside quotes; inside
 * quotes a line ending is data, and an escape (when it is not the quote) keeps the quote
 * after it from ending the quoted part. Records go to the server ending in `\n` (an `\n`
 * input's bytes pass through unchanged). A record with another line ending outside quotes,
 * and the end-of-data marker `\.` alone on a line (skipped at the end of the input,
 * rejected elsewhere: psql stops at it, PostgreSQL 15's COPY too, 18's reads it as data)
 * make blocks of their own that send nothing (`unframable`).
 */
export class CsvFramer implements Framer {
  private detected: LineEnd | undefined;
  private readonly endsInput: boolean;
  private readonly escapeByte: number;

  constructor(
    private readonly quote: number = DOUBLE_QUOTE,
    escape: number = DOUBLE_QUOTE,
    options: TextFramerOptions = {},
  ) {
    // As COPY: an escape that is the quote is no escape of its own, the quote just toggles.
    this.escapeByte = escape === quote ? -1 : escape;
    this.detected = options.lineEnd;
    this.endsInput = options.endsInput ?? true;
  }

  get lineEnd(): LineEnd | undefined {
    return this.detected;
  }

  frame(buf: Buffer, eof: boolean): FramedBlock {
    const lineEnd = (this.detected ??= detectLineEnd(buf, eof, { quote: this.quote, escape: this.escapeByte < 0 ? this.quote : this.escapeByte }));
    if (lineEnd === undefined) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
    const r: CsvRecord = { termAt: 0, termEnd: 0, lines: 0, stray: 0 };
    const spans: { start: number; contentEnd: number; end: number }[] = [];
    let start = 0;
    let lines = 0;
    let stop: FramedBlock | undefined;
    while (start < buf.length) {
      if (!this.next(buf, start, lineEnd, eof, r)) break;
      const recordLength = r.termAt - start;
      let why: Unframable | undefined;
      if (r.stray !== 0) why = { message: strayLineEndMessage(r.stray, true), character: undefined, recordLength };
      else if (recordLength === 2 && buf[start] === BACKSLASH && buf[start + 1] === DOT) {
        const atEnd = onlyLineEnds(buf, r.termEnd);
        if (atEnd && !eof) break; // it may be the end of the input: frame it once that is known
        if (atEnd && this.endsInput) {
          const extra = countIn(buf, lineByte(lineEnd), r.termEnd, buf.length);
          stop = { out: EMPTY, consumed: buf.length, records: 1, lines: r.lines + extra, more: true, unframable: { message: 'the end-of-data marker \\. at the end of the input', character: undefined, recordLength, skip: true } };
          break;
        }
        why = { message: MIDDLE_MARKER_MESSAGE, character: undefined, recordLength };
      }
      if (why !== undefined) {
        stop = { out: EMPTY, consumed: r.termEnd, records: 1, lines: r.lines, more: true, unframable: why };
        break;
      }
      spans.push({ start, contentEnd: r.termAt, end: r.termEnd });
      lines += r.lines;
      start = r.termEnd;
    }
    if (spans.length === 0) return stop ?? { out: EMPTY, consumed: 0, records: 0, lines: 0 };
    const more = stop !== undefined ? { more: true } : {};
    const last = spans[spans.length - 1]!;
    if (lineEnd === 'nl' && last.contentEnd < last.end) return { out: buf.subarray(0, start), consumed: start, records: spans.length, lines, ...more };
    const out = Buffer.allocUnsafe(start + 1);
    const written = writeSpans(buf, spans, out, 0, -1);
    return { out: out.subarray(0, written), consumed: start, records: spans.length, lines, ...more };
  }

  linesBeforeRecord(source: Buffer, record: number): number {
    return linesBefore(this.recordSpans(source), record);
  }

  recordSpans(source: Buffer): RecordSpans {
    const lineEnd = this.detected ?? detectLineEnd(source, true, { quote: this.quote, escape: this.escapeByte < 0 ? this.quote : this.escapeByte }) ?? 'nl';
    const r: CsvRecord = { termAt: 0, termEnd: 0, lines: 0, stray: 0 };
    const ends: number[] = [];
    const lines: number[] = [];
    let start = 0;
    while (start < source.length && this.next(source, start, lineEnd, true, r)) {
      ends.push(r.termEnd);
      lines.push(r.lines);
      start = r.termEnd;
    }
    return { ends, lines, lineEnd };
  }

  /**
   * The record that starts at `start`: false when it does not end before `buf` does (and
   * `eof` is false). At the end of the input, the rest is one record (an unterminated
   * quote, which COPY reports).
   */
  private next(buf: Buffer, start: number, lineEnd: LineEnd, eof: boolean, r: CsvRecord): boolean {
    const { quote } = this;
    const escape = this.escapeByte;
    const counted = lineByte(lineEnd);
    let inQuote = false;
    let lastWasEscape = false;
    let lines = 1;
    let stray = 0;
    for (let i = start; i < buf.length; i++) {
      const c = buf[i]!;
      if (inQuote && c === escape) lastWasEscape = !lastWasEscape;
      if (c === quote && !lastWasEscape) inQuote = !inQuote;
      if (c !== escape) lastWasEscape = false;
      if (c !== LF && c !== CR) continue;
      if (inQuote) {
        if (c === counted) lines++;
        continue;
      }
      if (c === LF) {
        if (lineEnd === 'nl') return this.ended(r, i, i + 1, lines, stray);
        if (lineEnd === 'cr') {
          stray = LF;
          continue;
        }
        stray = LF; // crnl: an LF that is not after a CR (that one ends the record below)
        lines++;
        continue;
      }
      // CR
      if (lineEnd === 'cr') return this.ended(r, i, i + 1, lines, stray);
      if (lineEnd === 'crnl') {
        if (i + 1 >= buf.length && !eof) return false;
        if (buf[i + 1] === LF) return this.ended(r, i, i + 2, lines, stray);
      }
      stray = CR;
    }
    if (!eof) return false;
    // The unterminated last record.
    r.termAt = buf.length;
    r.termEnd = buf.length;
    // A quoted line ending right at the end of the input does not start another line.
    r.lines = inQuote && buf.length > start && buf[buf.length - 1] === counted ? lines - 1 : lines;
    r.stray = stray;
    return true;
  }

  private ended(r: CsvRecord, termAt: number, termEnd: number, lines: number, stray: number): true {
    r.termAt = termAt;
    r.termEnd = termEnd;
    r.lines = lines;
    r.stray = stray;
    return true;
  }
}

function countIn(buf: Buffer, byte: number, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (buf[i] === byte) n++;
  return n;
}
