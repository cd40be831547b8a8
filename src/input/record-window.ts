import { LoadError } from '../core/load-error.js';
import { BACKSLASH, detectLineEnd, lineByte, type LineEnd } from './line-ends.js';

/**
 * Finds record ends in raw input bytes, block after block: a newline (the input's line
 * ending: `\r` when its first line ends so) for line formats, one no backslash escapes in
 * COPY text, one outside quotes for CSV (its state carries over from one block to the next).
 * Used to drop a header, skip records and stop after a limit, exactly at record boundaries.
 */
export class RecordEnds {
  private inQuote = false;
  /** Newlines passed so far (a CSV record may span several). */
  lines = 0;
  /** The byte that ends a line: the input's line ending, from its first block when not given. */
  private byte: number | undefined;
  /** Text: the run of backslashes that ended the last block, inside the current record. */
  private carry = 0;
  private readonly text: boolean;

  /**
   * `csv`: quotes keep line endings inside records. `options.text`: COPY text (and `.tbl`),
   * where a backslash escapes the newline after it. `options.lineEnd`: the input's line
   * ending (a bare `\r` input ends records at `\r`).
   */
  constructor(
    private readonly csv?: { quote: number; escape: number },
    options: { text?: boolean; lineEnd?: LineEnd | undefined } = {},
  ) {
    this.text = options.text === true && csv === undefined;
    if (options.lineEnd !== undefined) this.byte = lineByte(options.lineEnd);
    else if (!this.text && csv === undefined) this.byte = lineByte('nl'); // NDJSON: every \n
  }

  /** Up to `n` record ends in `buf`: how many, and the index just past the last of them (0 for none). */
  take(buf: Buffer, n: number): { records: number; at: number } {
    let records = 0;
    let at = 0;
    while (records < n) {
      const end = this.next(buf, at);
      if (end < 0) break;
      records++;
      at = end;
    }
    return { records, at };
  }

  /** Index just past the next record end at or after `from`, or -1 if the block ends first. */
  next(buf: Buffer, from: number): number {
    const byte = (this.byte ??= lineByte(detectLineEnd(buf, false, this.csv) ?? 'nl'));
    if (this.csv === undefined) {
      let i = buf.indexOf(byte, from);
      while (i >= 0 && this.text) {
        let k = i - 1;
        while (k >= from && buf[k] === BACKSLASH) k--;
        const run = i - 1 - k + (k < from ? this.carry : 0);
        if ((run & 1) === 0) break;
        this.lines++; // an escaped newline: a line, not a record end
        this.carry = 0;
        i = buf.indexOf(byte, i + 1);
      }
      if (i < 0) {
        if (this.text) {
          let k = buf.length - 1;
          while (k >= from && buf[k] === BACKSLASH) k--;
          this.carry = buf.length - 1 - k + (k < from ? this.carry : 0);
        }
        return -1;
      }
      this.carry = 0;
      this.lines++;
      return i + 1;
    }
    const { quote, escape } = this.csv;
    for (let i = from; i < buf.length; i++) {
      const c = buf[i];
      if (this.inQuote) {
        if (c === escape && escape !== quote && (buf[i + 1] === quote || buf[i + 1] === escape)) i++;
        else if (c === quote) this.inQuote = false;
        else if (c === byte) this.lines++;
      } else if (c === quote) {
        this.inQuote = true;
      } else if (c === byte) {
        this.lines++;
        return i + 1;
      }
    }
    return -1;
  }
}

/** What `dropRecords` consumed. */
export interface Dropped {
  /** The blocks after the dropped records. */
  readonly rest: AsyncIterable<Buffer>;
  readonly bytes: number;
  readonly lines: number;
  readonly records: number;
  /** The dropped records' bytes, when asked for (a header to read). */
  readonly head: Buffer | undefined;
}

/**
 * Drops the first `n` records of `blocks` (a header, `--skip`); the input may end first.
 * With `keep`, returns the dropped bytes too (only for a header: one record).
 */
export async function dropRecords(blocks: AsyncIterable<Buffer>, n: number, ends: RecordEnds, keep = false): Promise<Dropped> {
  const it = blocks[Symbol.asyncIterator]();
  let bytes = 0;
  let records = 0;
  const kept: Buffer[] = [];
  const startLines = ends.lines;
  let leftover: Buffer | undefined;
  while (records < n) {
    const r = await it.next();
    if (r.done) break;
    const buf = r.value;
    const found = ends.take(buf, n - records);
    records += found.records;
    const taken = records < n ? buf.length : found.at;
    if (keep) kept.push(buf.subarray(0, taken));
    bytes += taken;
    if (taken < buf.length) leftover = buf.subarray(taken);
  }
  // An unterminated last record at the end of the input counts as one.
  const head = keep ? Buffer.concat(kept) : undefined;
  return { rest: rejoined(leftover, it, false), bytes, lines: ends.lines - startLines, records, head };
}

/** The first `n` records of `blocks`, cut exactly after the n-th record end; then stops reading. */
export async function* takeRecords(blocks: AsyncIterable<Buffer>, n: number, ends: RecordEnds): AsyncGenerator<Buffer> {
  let records = 0;
  if (n <= 0) return;
  for await (const buf of blocks) {
    const found = ends.take(buf, n - records);
    records += found.records;
    if (records >= n) {
      if (found.at > 0) yield buf.subarray(0, found.at);
      return; // leaving the loop closes the source
    }
    yield buf;
  }
}

export const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The encoding a UTF-16 or UTF-32 byte-order mark at the start says (no PostgreSQL encoding reads either), else undefined. */
function wideEncodingOf(head: Buffer): string | undefined {
  if (head.length >= 4 && head.readUInt32BE(0) === 0x0000feff) return 'UTF-32BE';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x0000feff) return 'UTF-32LE';
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'UTF-16LE';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'UTF-16BE';
  return undefined;
}

/**
 * Refuses an input whose first bytes are a UTF-16 or UTF-32 byte-order mark (Excel's
 * "Unicode text", PowerShell's default): COPY reads no such encoding, so every row would be
 * rejected (or a table made of its NUL-strewn header); it is converted to UTF-8 first.
 */
export function refuseWideEncoding(head: Buffer, file: string): void {
  const encoding = wideEncodingOf(head);
  if (encoding === undefined) return;
  const name = file === '-' ? 'stdin' : file;
  const iconv = `iconv -f ${encoding.slice(0, 6)} -t UTF-8`;
  const convert = file === '-' ? `… | ${iconv} | pgsurge load - …` : /\.gz$/i.test(file) ? `zcat ${file} | ${iconv} | pgsurge load - …` : `${iconv} ${file} > ${file.replace(/(\.[^./]+)?$/, '.utf8$1')}`;
  throw new LoadError('bad-input', `${name} is ${encoding} text (it starts with that byte-order mark): PostgreSQL reads no UTF-16 or UTF-32, and nothing was loaded`, {
    hint: `convert it to UTF-8 first: ${convert}`,
  });
}

/**
 * Drops a UTF-8 byte-order mark at the start; returns the blocks after it and how many bytes
 * it took. With the input's `file`, a UTF-16 or UTF-32 one is refused (`refuseWideEncoding`).
 */
export async function dropBom(blocks: AsyncIterable<Buffer>, file?: string): Promise<{ rest: AsyncIterable<Buffer>; bytes: number }> {
  const it = blocks[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let done = false;
  while (head.length < (file === undefined ? BOM.length : 4)) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    head = Buffer.concat([head, r.value]);
  }
  if (file !== undefined) {
    try {
      refuseWideEncoding(head, file);
    } catch (error) {
      await it.return?.();
      throw error;
    }
  }
  const bytes = head.subarray(0, 3).equals(BOM) ? 3 : 0;
  const first = head.subarray(bytes);
  return { rest: rejoined(first.length > 0 ? first : undefined, it, done), bytes };
}

/** The bytes left over from a block read ahead, then the blocks still to come (none when `ended`); closes the source when left. */
async function* rejoined(leftover: Buffer | undefined, it: AsyncIterator<Buffer>, ended: boolean): AsyncGenerator<Buffer> {
  try {
    if (leftover !== undefined) yield leftover;
    if (ended) return;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
    }
  } finally {
    await it.return?.();
  }
}
