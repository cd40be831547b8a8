/**
 * How PostgreSQL's COPY finds the end of a text or CSV record (`CopyReadLineText` in
 * copyfromparse.c), for the framers, the byte ranges and the line numbers:
 *
 * - The line ending is the first line's, `\n`, `\r\n` or `\r`, and every later line must
 *   end the same way: another line ending inside a record is an error for that record.
 * - `.tbl` is COPY text with `DELIMITER '|'` once dbgen's trailing `|` is dropped: its
 *   records end by the text rules.
 * - In text (and `.tbl`), a backslash takes the next byte with it, a newline too: a line
 *   ending is escaped when the run of backslashes right before it has odd length (every
 *   input encoding offered has 0x5C as a backslash only).
 * - In CSV, a line ending inside quotes is data.
 * - `\.` alone on a line is the end-of-data marker (psql stops there; the server too, but
 *   PostgreSQL 18 reads it in CSV as data). In text, PostgreSQL 15 also takes `\.` at the
 *   end of a line with data before it as the marker.
 */
export type LineEnd = 'nl' | 'crnl' | 'cr';

declare module '../core/chunk.js' {
  interface TargetInputFields {
    /**
     * Text, `.tbl` and CSV: the input's line ending, from its first line (COPY holds every
     * line to it; each chunk's records are framed by it). Found by the first framer when absent.
     */
    readonly lineEnd?: LineEnd;
  }
}

export const LF = 0x0a;
export const CR = 0x0d;
export const BACKSLASH = 0x5c;
export const DOT = 0x2e;

/** CSV quoting, for the line-ending rules of CSV. */
export interface CsvQuoting {
  readonly quote: number;
  readonly escape: number;
}

/** True when the byte at `i` is escaped: the run of backslashes right before it (not before `from`) has odd length. */
export function escapedAt(buf: Uint8Array, i: number, from: number): boolean {
  let k = i - 1;
  while (k >= from && buf[k] === BACKSLASH) k--;
  return ((i - 1 - k) & 1) === 1;
}

/** Index of the first line-ending byte (CR or LF) of `buf` that ends a line in text, or -1. */
function firstTextLineEnd(buf: Buffer): number {
  let from = 0;
  for (;;) {
    const lf = buf.indexOf(LF, from);
    const cr = buf.indexOf(CR, from);
    const i = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
    if (i < 0 || !escapedAt(buf, i, 0)) return i;
    from = i + 1;
  }
}

/** Index of the first line-ending byte of `buf` outside quotes (COPY's CSV quote state), or -1. */
function firstCsvLineEnd(buf: Buffer, csv: CsvQuoting): number {
  const quote = csv.quote;
  const escape = csv.escape === csv.quote ? -1 : csv.escape;
  let inQuote = false;
  let lastWasEscape = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inQuote && c === escape) lastWasEscape = !lastWasEscape;
    if (c === quote && !lastWasEscape) inQuote = !inQuote;
    if (c !== escape) lastWasEscape = false;
    if (!inQuote && (c === LF || c === CR)) return i;
  }
  return -1;
}

/**
 * The line ending of an input that starts with `buf`, as COPY takes it from the first
 * line; undefined while `buf` does not show it yet (`eof` false). An input without any
 * line ending counts as `nl`.
 */
export function detectLineEnd(buf: Buffer, eof: boolean, csv?: CsvQuoting): LineEnd | undefined {
  const i = csv === undefined ? firstTextLineEnd(buf) : firstCsvLineEnd(buf, csv);
  if (i < 0) return eof ? 'nl' : undefined;
  if (buf[i] === LF) return 'nl';
  if (i + 1 < buf.length) return buf[i + 1] === LF ? 'crnl' : 'cr';
  return eof ? 'cr' : undefined;
}

const LINE_END_BYTES: Record<LineEnd, Buffer> = { nl: Buffer.from('\n'), crnl: Buffer.from('\r\n'), cr: Buffer.from('\r') };

/** The bytes of a line ending (`\n` when not known). */
export function lineEndBytes(lineEnd: LineEnd | undefined): Buffer {
  return LINE_END_BYTES[lineEnd ?? 'nl'];
}

/**
 * A record as the reject file holds it: its bytes as read, line ending included; the
 * input's last record, when the input does not end in a line ending, is given the input's
 * (so the reject file, loaded again with the same options, reads the same records).
 */
export function asRejected(record: Buffer, lineEnd: LineEnd | undefined): Buffer {
  const end = lineEndBytes(lineEnd);
  return record.length >= end.length && record.subarray(record.length - end.length).equals(end) ? record : Buffer.concat([record, end]);
}

/** The byte that counts physical lines in an input with this line ending. */
export function lineByte(lineEnd: LineEnd | undefined): number {
  return lineEnd === 'cr' ? CR : LF;
}

/** `byte`s in `buf[from, to)`. */
export function countByte(buf: Uint8Array, byte: number, from = 0, to = buf.length): number {
  let n = 0;
  const b = buf as Buffer;
  let i = typeof b.indexOf === 'function' ? b.indexOf(byte, from) : -1;
  while (i >= 0 && i < to) {
    n++;
    i = b.indexOf(byte, i + 1);
  }
  return n;
}

/** What COPY says about a line ending inside a record that is not the input's. */
export function strayLineEndMessage(byte: number, csv: boolean): string {
  if (byte === CR) {
    return csv
      ? 'unquoted carriage return found in data (the input\'s line ending is another; use a quoted CSV field to represent a carriage return)'
      : 'literal carriage return found in data (the input\'s line ending is another; use "\\r" to represent a carriage return)';
  }
  return csv
    ? 'unquoted newline found in data (the input\'s line ending is another; use a quoted CSV field to represent a newline)'
    : 'literal newline found in data (the input\'s line ending is another; use "\\n" to represent a newline)';
}

export const MIDDLE_MARKER_MESSAGE = 'end-of-data marker in the middle of the file: psql would stop here; pgsurge loads the rest';
export const VALUE_ENDS_IN_MARKER_MESSAGE =
  'a value ends in \\. (the end-of-data marker): PostgreSQL 15 would end the data there and PostgreSQL 18 refuses it; write a backslash as \\\\';

/**
 * One text record found by `nextTextRecord`: where its line ending is and what is wrong
 * with it, if anything. Reused between calls (the framers' inner loop allocates nothing).
 */
export interface TextRecord {
  /** Index of the record's line ending (its end for the unterminated last record). */
  termAt: number;
  /** Index just past the line ending. */
  termEnd: number;
  /** Physical lines the record spans. */
  lines: number;
  /** A line ending inside the record that is not the input's (a CR or an LF), else 0. */
  stray: number;
}

/**
 * The text (or `.tbl`) record that starts at `start`: false when it does not end before
 * `buf` does (and `eof` is false). `strays`: given when the block may hold another line
 * ending than the input's (a CR in an `nl` input): look for one.
 */
export function nextTextRecord(buf: Buffer, start: number, lineEnd: LineEnd, eof: boolean, strays: Strays | undefined, r: TextRecord): boolean {
  r.stray = 0;
  let lines = 1;
  if (lineEnd !== 'crnl') {
    // One byte ends a record (LF, or CR in a CR-only input); the other one inside it is stray.
    const end = lineEnd === 'nl' ? LF : CR;
    const other = lineEnd === 'nl' ? CR : LF;
    let i = buf.indexOf(end, start);
    while (i > start && buf[i - 1] === BACKSLASH && escapedAt(buf, i, start)) {
      lines++;
      i = buf.indexOf(end, i + 1);
    }
    if (!endAt(buf, i, 1, eof, lines, r)) return false;
    if (strays && strays.first(other, start, r.termAt) >= 0) r.stray = other;
    return true;
  }
  // crnl (text): a record ends at an unescaped CR followed by LF; any other unescaped LF is stray.
  let stray = 0;
  let i = buf.indexOf(LF, start);
  while (i >= 0) {
    if (i > start && buf[i - 1] === CR && !escapedAt(buf, i - 1, start)) break;
    if (!escapedAt(buf, i, start)) stray = LF;
    lines++;
    i = buf.indexOf(LF, i + 1);
  }
  if (i < 0) {
    if (!endAt(buf, -1, 0, eof, lines, r)) return false;
  } else {
    r.termAt = i - 1;
    r.termEnd = i + 1;
    r.lines = lines;
  }
  if (stray === 0 && strays && strays.first(CR, start, r.termAt) >= 0) stray = CR;
  r.stray = stray;
  return true;
}

function endAt(buf: Buffer, i: number, length: number, eof: boolean, lines: number, r: TextRecord): boolean {
  if (i < 0) {
    if (!eof) return false;
    r.termAt = buf.length;
    r.termEnd = buf.length;
  } else {
    r.termAt = i;
    r.termEnd = i + length;
  }
  r.lines = lines;
  return true;
}

/**
 * Where the next CR and LF of one block are, found once each and kept, so looking for a
 * stray line ending record after record reads the block once, not once per record.
 */
export class Strays {
  /** Next known index of a CR / an LF at or after the last position asked (-1: none left). */
  private cr = -2;
  private lf = -2;

  constructor(private readonly buf: Buffer) {}

  /** Index of the first unescaped `byte` (CR or LF) in `buf[from, to)` (escapes counted from `from`), or -1. */
  first(byte: number, from: number, to: number): number {
    const buf = this.buf;
    let i = byte === CR ? this.cr : this.lf;
    if (i !== -1 && i < from) i = buf.indexOf(byte, from);
    while (i >= 0 && i < to && escapedAt(buf, i, from)) i = buf.indexOf(byte, i + 1);
    if (byte === CR) this.cr = i;
    else this.lf = i;
    return i >= 0 && i < to ? i : -1;
  }
}

/**
 * Text record content `buf[start, end)` ending in an unescaped `\.`: 'marker' when that is
 * all of it, 'value' when a value ends so, else undefined.
 */
export function textMarker(buf: Uint8Array, start: number, end: number): 'marker' | 'value' | undefined {
  if (end - start < 2 || buf[end - 1] !== DOT || buf[end - 2] !== BACKSLASH || !escapedAt(buf, end - 1, start)) return undefined;
  return end - start === 2 ? 'marker' : 'value';
}

/** True when `buf[from, buf.length)` holds nothing but line endings (what may follow the final marker). */
export function onlyLineEnds(buf: Uint8Array, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== LF && buf[i] !== CR) return false;
  return true;
}
