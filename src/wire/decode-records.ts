import type { Format } from '../input/formats.js';
import { NEWLINE } from '../input/framer.js';

/** A field as COPY would store it: its text, or null for SQL NULL. */
export type FieldValue = string | null;

/** One record's fields, in column order. */
export type DecodedRecord = FieldValue[];

/** Input that COPY itself would refuse; names the record (1-based, within the chunk). */
export class RecordDecodeError extends Error {
  constructor(
    message: string,
    readonly record: number,
  ) {
    super(message);
    this.name = 'RecordDecodeError';
  }
}

const BACKSLASH = 0x5c;

/**
 * A chunk's bytes (as the framers hand them to COPY: whole records, each ending in `\n`)
 * → its records' field values, with exactly the meaning COPY gives them, so an INSERT
 * stores what COPY would:
 *
 * - `text` (tab) and `tbl` (`|`, the trailing `|` already stripped by the framer): the
 *   field `\N` (as written, before unescaping) is NULL; `\b \f \n \r \t \v`, octal `\NNN`
 *   (1–3 digits), hex `\xNN` (1–2 digits) are decoded to bytes; any other `\c` is `c`
 *   (so `\\` is a backslash, `\|` a literal delimiter, and a backslash before a newline
 *   makes it part of the field). A `\r` ending a line is part of the line break.
 * - `csv`: comma-delimited, `"` quotes with `""` for a quote inside; an unquoted empty
 *   field is NULL, a quoted empty field (`""`) is an empty string; quotes may open and
 *   close anywhere in a field, as in PostgreSQL's parser.
 */
export function decodeRecords(data: Buffer, format: Format): DecodedRecord[] {
  const all: DecodedRecord[] = [];
  for (const batch of decodeRecordBatches(data, format, Infinity)) for (const r of batch) all.push(r);
  return all;
}

/**
 * `decodeRecords` a batch of at most `batchRows` records at a time, so the strings of one
 * batch die young instead of a whole chunk's living through the statements.
 */
export function* decodeRecordBatches(data: Buffer, format: Format, batchRows: number): Generator<DecodedRecord[]> {
  if (format === 'csv') {
    yield* decodeCsv(data.toString('utf8'), batchRows);
    return;
  }
  const delimiter = format === 'tbl' ? '|' : '\t';
  const escaped = data.indexOf(BACKSLASH) >= 0;
  let start = 0;
  while (start < data.length) {
    const end = batchEnd(data, start, batchRows, escaped);
    yield decodeText(data.subarray(start, end), delimiter);
    start = end;
  }
}

/** Just past the `rows`-th record from `start` (records end at a newline that no backslash escapes). */
function batchEnd(data: Buffer, start: number, rows: number, escaped: boolean): number {
  let pos = start;
  for (let n = 0; n < rows; n++) {
    let nl = data.indexOf(NEWLINE, pos);
    while (escaped && nl >= 0 && escapedAt(data, start, nl)) nl = data.indexOf(NEWLINE, nl + 1);
    if (nl < 0) return data.length;
    pos = nl + 1;
  }
  return pos;
}

function escapedAt(data: Buffer, start: number, at: number): boolean {
  let i = at - 1;
  while (i >= start && data[i] === BACKSLASH) i--;
  return (at - 1 - i) % 2 === 1;
}

function decodeText(data: Buffer, delimiter: string): DecodedRecord[] {
  const text = data.toString('utf8');
  if (data.indexOf(BACKSLASH) < 0) {
    // Nothing escaped, no NULLs (the common case, dbgen's output): native splits only.
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const crlf = text.includes('\r');
    const records = new Array<DecodedRecord>(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      records[i] = (crlf && line.endsWith('\r') ? line.slice(0, -1) : line).split(delimiter);
    }
    return records;
  }
  const records: DecodedRecord[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    // As in COPY, a backslash before a newline escapes it: the record goes on.
    while (end >= 0 && escapesNewline(text, start, end)) end = text.indexOf('\n', end + 1);
    if (end < 0) end = text.length;
    let stop = end;
    if (stop > start && text.charCodeAt(stop - 1) === 0x0d) stop--;
    const line = text.slice(start, stop);
    records.push(line.includes('\\') ? splitEscapedLine(line, delimiter) : line.split(delimiter));
    start = end + 1;
  }
  return records;
}

/** Whether the newline at `end` follows an odd run of backslashes (the last one escapes it). */
function escapesNewline(text: string, start: number, end: number): boolean {
  let i = end - 1;
  while (i >= start && text.charCodeAt(i) === BACKSLASH) i--;
  return (end - 1 - i) % 2 === 1;
}

/** A text-format line holding backslashes: split at unescaped delimiters, then decode each field. */
function splitEscapedLine(line: string, delimiter: string): DecodedRecord {
  const fields: DecodedRecord = [];
  const push = (raw: string): void => {
    fields.push(raw === '\\N' ? null : raw.includes('\\') ? unescapeText(raw) : raw);
  };
  let fieldStart = 0;
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '\\') {
      i += 2; // the escaped character never ends a field
      continue;
    }
    if (c === delimiter) {
      push(line.slice(fieldStart, i));
      fieldStart = i + 1;
    }
    i++;
  }
  push(line.slice(fieldStart));
  return fields;
}

const isOctal = (b: number | undefined): boolean => b !== undefined && b >= 0x30 && b <= 0x37;
const hexValue = (b: number | undefined): number => {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
};
const SIMPLE_ESCAPES: Record<number, number> = { 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09, 0x76: 0x0b };

/**
 * One text-format field's backslash escapes, at the byte level (octal and hex escapes
 * name bytes, which may together form one UTF-8 character), as PostgreSQL's
 * CopyReadAttributesText does. A lone backslash at the end of a field is dropped.
 */
export function unescapeText(raw: string): string {
  const src = Buffer.from(raw, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  return out.toString('utf8', 0, unescapeTextInto(src, 0, src.length, out, 0));
}

/**
 * `unescapeText` on the bytes `src[from, to)`, written to `out` from `at` (which needs
 * `to - from` bytes free: unescaping never lengthens); returns the end of what it wrote.
 * The binary wire's record splitter uses it for a field that holds a backslash.
 */
export function unescapeTextInto(src: Uint8Array, from: number, to: number, out: Uint8Array, at: number): number {
  let n = at;
  for (let i = from; i < to; i++) {
    const b = src[i]!;
    if (b !== BACKSLASH) {
      out[n++] = b;
      continue;
    }
    if (++i >= to) break;
    const c = src[i]!;
    if (isOctal(c)) {
      let value = c - 0x30;
      for (let k = 0; k < 2 && i + 1 < to && isOctal(src[i + 1]); k++) value = value * 8 + (src[++i]! - 0x30);
      out[n++] = value & 0xff;
    } else if (c === 0x78 /* x */ && i + 1 < to && hexValue(src[i + 1]) >= 0) {
      let value = hexValue(src[++i]);
      if (i + 1 < to && hexValue(src[i + 1]) >= 0) value = value * 16 + hexValue(src[++i]);
      out[n++] = value;
    } else {
      out[n++] = SIMPLE_ESCAPES[c] ?? c;
    }
  }
  return n;
}

/** CSV as PostgreSQL's CopyReadAttributesCSV reads it (delimiter `,`, quote and escape `"`, NULL = unquoted empty). */
function* decodeCsv(text: string, batchRows: number): Generator<DecodedRecord[]> {
  let records: DecodedRecord[] = [];
  let before = 0; // records in earlier batches, for error messages
  let fields: DecodedRecord = [];
  let value = '';
  let sawQuote = false;
  let i = 0;
  const n = text.length;
  const endField = (): void => {
    fields.push(!sawQuote && value === '' ? null : value);
    value = '';
    sawQuote = false;
  };
  while (i < n) {
    // Unquoted part: copy runs without special characters in one slice.
    let j = i;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 0x2c || c === 0x22 || c === 0x0a || c === 0x0d) break;
      j++;
    }
    value += text.slice(i, j);
    i = j;
    if (i >= n) break;
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      endField();
      i++;
    } else if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) === 0x0a)) {
      endField();
      records.push(fields);
      fields = [];
      i += c === 0x0d ? 2 : 1;
      if (records.length >= batchRows) {
        yield records;
        before += records.length;
        records = [];
      }
    } else if (c === 0x0d) {
      value += '\r';
      i++;
    } else {
      // A quoted part: up to the closing quote; `""` inside is one quote.
      sawQuote = true;
      i++;
      for (;;) {
        const close = text.indexOf('"', i);
        if (close < 0) throw new RecordDecodeError('unterminated CSV quoted field', before + records.length + 1);
        value += text.slice(i, close);
        if (text.charCodeAt(close + 1) === 0x22) {
          value += '"';
          i = close + 2;
        } else {
          i = close + 1;
          break;
        }
      }
    }
  }
  if (value !== '' || sawQuote || fields.length > 0) {
    endField();
    records.push(fields);
  }
  if (records.length > 0) yield records;
}
