import { EMPTY, NEWLINE, newlineRecordSpans, type FramedBlock, type Framer, type RecordSpans } from '../framer.js';
import type { Unframable } from '../../core/chunk.js';
import { JsonRecordError, type JsonRowMapper } from './json-record.js';
import { decoderFor, InvalidUtf8Error } from '../encodings.js';

const BLANK = /^[ \t\r]*$/;

/**
 * NDJSON / JSON Lines: one object per line, each turned into a COPY text record over the
 * target's columns (keys mapped by name, see `JsonRowMapper`). Blank lines are skipped.
 *
 * A block never has a blank line between two of its records (it stops there and the
 * chunker calls again), so the n-th record of a chunk is on the chunk's n-th line: an
 * error from COPY names the right line. With `keySets`, a block also stops where the set
 * of keys changes, and says which columns its records fill (`--missing default`).
 */
export class NdjsonFramer implements Framer {
  constructor(
    private readonly mapper: JsonRowMapper,
    private readonly decode: (bytes: Buffer) => string = decoderFor('UTF8'),
    private readonly keySets = false,
  ) {}

  frame(buf: Buffer, eof: boolean): FramedBlock {
    const out: string[] = [];
    let at = 0;
    let lines = 0;
    let keySet: string | undefined;
    let sawBlankAfterRecords = false;
    while (at < buf.length) {
      let nl = buf.indexOf(NEWLINE, at);
      if (nl < 0) {
        if (!eof) break;
        nl = buf.length; // the unterminated last line
      }
      const raw = buf.subarray(at, nl);
      // A line that cannot be framed ends the block before it, then is a block of its own
      // that rejects it (the load goes on, like for a row the server refuses).
      const unframable = (why: Unframable): FramedBlock =>
        out.length > 0 ? this.done(out, at, lines, keySet, true) : { out: EMPTY, consumed: Math.min(nl + 1, buf.length), records: 1, lines: 1, more: true, unframable: why };
      let text: string;
      try {
        text = this.decode(raw);
      } catch (error) {
        if (error instanceof InvalidUtf8Error) return unframable({ message: error.message, character: undefined, recordLength: raw.length });
        throw error;
      }
      if (BLANK.test(text)) {
        if (out.length > 0) sawBlankAfterRecords = true;
        at = nl + 1;
        lines++;
        if (out.length === 0) return { out: EMPTY, consumed: Math.min(at, buf.length), records: 0, lines, more: true };
        continue;
      }
      if (sawBlankAfterRecords) return this.done(out, at, lines, keySet, true);
      let record: string;
      try {
        record = this.mapper.toCopyText(text, this.keySets);
      } catch (error) {
        if (error instanceof JsonRecordError) return unframable({ message: error.message, character: error.at + 1, recordLength: raw.length });
        throw error;
      }
      if (this.keySets) {
        const present = this.mapper.present;
        if (!present.includes('1')) {
          return unframable({ message: 'an object with no column keys cannot take the column defaults (--missing default)', character: 1, recordLength: raw.length });
        }
        if (keySet !== undefined && present !== keySet) return this.done(out, at, lines, keySet, true);
        keySet = present;
      }
      out.push(record);
      lines++;
      at = nl + 1;
    }
    // Blank lines after the records: the chunk must end here (no blank line between two of its records).
    return this.done(out, Math.min(at, buf.length), lines, keySet, sawBlankAfterRecords);
  }

  /** A chunk's source holds no blank line (the framer stops at one), so its records are its lines. */
  recordSpans(source: Buffer): RecordSpans {
    return newlineRecordSpans(source);
  }

  private done(out: string[], consumed: number, lines: number, keySet: string | undefined, more: boolean): FramedBlock {
    if (out.length === 0) return { out: EMPTY, consumed, records: 0, lines, more };
    return {
      out: Buffer.from(out.join('\n') + '\n', 'utf8'),
      consumed,
      records: out.length,
      lines,
      more,
      ...(keySet !== undefined ? { columns: this.mapper.columnsOf(keySet) } : {}),
    };
  }

  linesBeforeRecord(_source: Buffer, record: number): number {
    return record - 1;
  }
}
