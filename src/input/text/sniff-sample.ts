import { isUtf8 as isValidUtf8 } from 'node:buffer';
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { LoadTarget } from '../../core/chunk.js';
import { LoadError } from '../../core/load-error.js';
import { decoderFor, type InputEncoding } from '../encodings.js';
import { compressionOf, fileBlocks } from '../file-blocks.js';
import { DEFAULT_SAMPLE, type DescribeOptions, type FileDescription, type SniffedDialect } from '../input-format.js';
import { CR, detectLineEnd, LF, type LineEnd } from '../line-ends.js';
import { BOM, refuseWideEncoding } from '../record-window.js';
import { type FieldRules, modalFields, parseRecords, type SplitRecord, sniffFieldRules, TextColumns, type TextFormat } from './sniff.js';

/**
 * The sample a delimited file is sniffed from: a third of the records from its start, a
 * third from around its middle and a third from its end (blocks read by byte offset, each
 * after the first started at a record boundary), or the whole file (`sample: 'all'`, a file
 * smaller than the three blocks, a compressed file, which is read from its start).
 */

const PROBE_BYTES = 64 * 1024;
const MAX_BLOCK = 64 << 20;
/** The records a block's first record must be followed by, all as wide as the file's, to be taken for a record start. */
const ALIGN_CHECK = 8;
/** Line ends tried as a block's first record start. */
const ALIGN_TRIES = 64;

const LINE_ENDINGS: Record<LineEnd, SniffedDialect['lineEnding']> = { nl: 'LF', crnl: 'CRLF', cr: 'CR' };

/** Windows-1252's five unassigned bytes: a file holding them is LATIN1 (ISO-8859-1), not Windows-1252. */
const UNASSIGNED_1252 = [0x81, 0x8d, 0x8f, 0x90, 0x9d];

/** The encoding the bytes say: UTF8 when they are valid UTF-8, else Windows-1252, or LATIN1 where Windows-1252 has no character. */
function encodingOf(parts: readonly Buffer[]): InputEncoding {
  if (parts.every((p) => isValidUtf8(p))) return 'UTF8';
  return parts.some((p) => UNASSIGNED_1252.some((b) => p.includes(b))) ? 'LATIN1' : 'WIN1252';
}

/** `buf` up to just past its last line-ending byte (a multi-byte character is never cut there). */
function toLastLineEnd(buf: Buffer): Buffer {
  const at = Math.max(buf.lastIndexOf(LF), buf.lastIndexOf(CR));
  return at < 0 ? buf : buf.subarray(0, at + 1);
}

/** `buf` from just past its first line-ending byte. */
function fromFirstLineEnd(buf: Buffer): Buffer {
  const lf = buf.indexOf(LF);
  const cr = buf.indexOf(CR);
  const at = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
  return at < 0 ? Buffer.alloc(0) : buf.subarray(at + 1);
}

async function readAt(fh: FileHandle, at: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  const { bytesRead } = await fh.read(buf, 0, length, at);
  return buf.subarray(0, bytesRead);
}

/** What the file's start says: its dialect, and how COPY is told to read it. */
interface Start {
  readonly rules: FieldRules;
  readonly lineEnd: LineEnd;
  readonly bom: boolean;
  readonly encoding: InputEncoding;
  /** The file's first records' field count. */
  readonly width: number;
}

function startOf(target: LoadTarget, head: Buffer, eof: boolean, encoding: InputEncoding): Start {
  refuseWideEncoding(head, target.file);
  const format = target.format as TextFormat;
  const bom = head.subarray(0, 3).equals(BOM);
  const bytes = toLastLineEnd(bom ? head.subarray(3) : head);
  const text = decoderFor(encoding)(eof ? (bom ? head.subarray(3) : head) : bytes);
  const input = target.input ?? {};
  const rules = sniffFieldRules(text, format, eof, input);
  const csv = format === 'csv' ? { quote: rules.quote.charCodeAt(0), escape: rules.escape.charCodeAt(0) } : undefined;
  const lineEnd = target.lineEnd ?? detectLineEnd(bom ? head.subarray(3) : head, true, csv) ?? 'nl';
  const width = modalFields(parseRecords(text, 0, rules, eof, 200).records).fields;
  return { rules, lineEnd, bom, encoding, width };
}

/**
 * The records of a block that starts somewhere inside the file: from the first line end
 * after which the next records all split into the file's field count (a line end inside a
 * CSV quote does not pass), up to `max` of them (`fromEnd`: its last `max`).
 */
function blockRecords(text: string, start: Start, final: boolean, max: number, fromEnd: boolean): SplitRecord[] {
  let at = 0;
  for (let tries = 0; tries < ALIGN_TRIES; tries++) {
    const probe = parseRecords(text, at, start.rules, final, ALIGN_CHECK);
    if (probe.records.length > 0 && probe.irregular === 0 && probe.records.every((r) => r.values.length === start.width)) {
      const records = parseRecords(text, at, start.rules, final, fromEnd ? Infinity : max).records;
      return fromEnd ? records.slice(-max) : records;
    }
    const nl = text.slice(at).search(/[\r\n]/);
    if (nl < 0) return [];
    at += nl + (text[at + nl] === '\r' && text[at + nl + 1] === '\n' ? 2 : 1);
  }
  return [];
}

function dialectOf(target: LoadTarget, start: Start, columns: ReturnType<TextColumns['result']>): SniffedDialect {
  const { rules } = start;
  return {
    format: rules.format,
    delimiter: rules.delimiter,
    ...(rules.format === 'csv' ? { quote: rules.quote, escape: rules.escape } : {}),
    header: columns.header,
    lineEnding: LINE_ENDINGS[start.lineEnd],
    encoding: start.encoding,
    bom: start.bom,
    null: columns.null,
    nullMarkers: columns.nullMarkers,
    ...(columns.datestyle !== undefined ? { datestyle: columns.datestyle } : {}),
  };
}

function columnsFor(target: LoadTarget, format: TextFormat): TextColumns {
  const input = target.input ?? {};
  return new TextColumns(format, input.header !== undefined ? true : undefined, input.null);
}

/** A sample of three blocks of a seekable file; undefined when the file is small enough to read whole. */
async function sniffBlocks(target: LoadTarget, fh: FileHandle, size: number, sample: number): Promise<FileDescription | undefined> {
  const probe = await readAt(fh, 0, Math.min(size, PROBE_BYTES));
  const lines = Math.max(1, Math.max(probe.filter((b) => b === LF).length, probe.filter((b) => b === CR).length));
  const perBlock = Math.ceil(sample / 3);
  const block = Math.min(MAX_BLOCK, Math.max(PROBE_BYTES, Math.ceil((perBlock * probe.length * 1.25) / lines) + PROBE_BYTES));
  if (size <= 3 * block) return undefined;
  const head = await readAt(fh, 0, block);
  const middle = await readAt(fh, Math.floor(size / 2 - block / 2), block);
  const tail = await readAt(fh, size - block, block);
  const parts = [toLastLineEnd(head), toLastLineEnd(fromFirstLineEnd(middle)), fromFirstLineEnd(tail)];
  const given = target.input?.encoding;
  const encoding = given ?? encodingOf(parts);
  const start = startOf(target, head, false, encoding);
  const decode = decoderFor(encoding);
  const columns = columnsFor(target, start.rules.format);
  const headText = decode(toLastLineEnd(start.bom ? head.subarray(3) : head));
  columns.add(parseRecords(headText, 0, start.rules, false, perBlock + 1).records);
  columns.add(blockRecords(decode(parts[1]!), start, false, perBlock, false));
  columns.add(blockRecords(decode(parts[2]!), start, true, perBlock, true));
  const result = columns.result();
  return { columns: result.columns, dialect: dialectOf(target, start, result), sampled: result.sampled, whole: false };
}

/** Every record of the file from its start (at most `limit`), read block by block: the encoding in a first pass, the values in a second. */
async function sniffStream(target: LoadTarget, limit: number): Promise<FileDescription> {
  let encoding = target.input?.encoding;
  if (encoding === undefined) {
    let valid = true;
    let unassigned = false;
    let carry = Buffer.alloc(0);
    for await (const b of fileBlocks(target, 1 << 20)) {
      const buf = carry.length > 0 ? Buffer.concat([carry, b]) : b;
      const whole = toLastLineEnd(buf);
      carry = Buffer.from(buf.subarray(whole.length));
      valid &&= isValidUtf8(whole);
      unassigned ||= UNASSIGNED_1252.some((x) => whole.includes(x));
    }
    valid &&= isValidUtf8(carry);
    unassigned ||= UNASSIGNED_1252.some((x) => carry.includes(x));
    encoding = valid ? 'UTF8' : unassigned ? 'LATIN1' : 'WIN1252';
  }
  const decode = decoderFor(encoding);
  let start: Start | undefined;
  let columns: TextColumns | undefined;
  let bytes = Buffer.alloc(0);
  let text = '';
  let records = 0;
  let whole = true;
  const blocks = fileBlocks(target, 1 << 20);
  try {
    for (let r = await blocks.next(); ; r = await blocks.next()) {
      const eof = r.done === true;
      if (!eof) bytes = bytes.length > 0 ? Buffer.concat([bytes, r.value]) : r.value;
      if (start === undefined) {
        if (!eof && bytes.length < PROBE_BYTES) continue;
        start = startOf(target, bytes, eof, encoding);
        if (start.bom) bytes = bytes.subarray(3);
        columns = columnsFor(target, start.rules.format);
      }
      const ready = eof ? bytes : toLastLineEnd(bytes);
      text += decode(ready);
      bytes = Buffer.from(bytes.subarray(ready.length));
      const parsed = parseRecords(text, 0, start.rules, eof, limit - records);
      records += parsed.records.length;
      columns!.add(parsed.records);
      text = text.slice(parsed.consumed);
      if (records >= limit && !(eof && text === '')) {
        whole = false;
        break;
      }
      if (eof) break;
    }
  } finally {
    await blocks.return(undefined);
  }
  const result = columns!.result();
  return { columns: result.columns, dialect: dialectOf(target, start!, result), sampled: result.sampled, whole };
}

/** The sniffed dialect and columns of a CSV, text or `.tbl` file. */
export async function sniffTextFile(target: LoadTarget, options: DescribeOptions): Promise<FileDescription> {
  const sample = options.sample ?? DEFAULT_SAMPLE;
  if (sample !== 'all' && (!Number.isInteger(sample) || sample < 1)) throw new LoadError('bad-option', `--sample ${sample}: give a number of records (1 or more) or all`);
  if (sample === 'all' || compressionOf(target) !== undefined) return sniffStream(target, sample === 'all' ? Infinity : sample + 1);
  const fh = await fs.open(target.file, 'r');
  try {
    const size = (await fh.stat()).size;
    return (await sniffBlocks(target, fh, size, sample)) ?? (await sniffStream(target, Infinity));
  } finally {
    await fh.close();
  }
}
