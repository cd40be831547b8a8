import { EMPTY, NEWLINE, type FramedBlock, type Framer, type RecordSpans } from './framer.js';

const DOUBLE_QUOTE = 0x22;

interface Scan {
  /** Just past the last whole record. */
  end: number;
  records: number;
  lines: number;
  /** Newlines seen inside the unfinished record after `end`. */
  pendingLines: number;
}

/**
 * CSV: a record ends at a newline outside quotes. Fields may hold newlines, delimiters
 * and doubled quotes, so the bytes are scanned in order; since every record boundary is
 * outside quotes, a partial record is simply scanned again from its start.
 * The bytes pass through unchanged for `COPY … (FORMAT csv)`.
 */
export class CsvFramer implements Framer {
  constructor(
    private readonly quote: number = DOUBLE_QUOTE,
    private readonly escape: number = DOUBLE_QUOTE,
  ) {}

  frame(buf: Buffer, eof: boolean): FramedBlock {
    const { end, records, lines, pendingLines } = this.scan(buf, Infinity);
    if (eof && end < buf.length) {
      // The input ends inside a record: complete it; COPY reports an unterminated quote itself.
      return {
        out: Buffer.concat([buf, Buffer.from('\n')]),
        consumed: buf.length,
        records: records + 1,
        lines: lines + pendingLines + (buf[buf.length - 1] === NEWLINE ? 0 : 1),
      };
    }
    if (end === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
    return { out: buf.subarray(0, end), consumed: end, records, lines };
  }

  linesBeforeRecord(source: Buffer, record: number): number {
    return this.scan(source, record - 1).lines;
  }

  recordSpans(source: Buffer): RecordSpans {
    const ends: number[] = [];
    const lines: number[] = [];
    const scan = this.scan(source, Infinity, (end, recordLines) => {
      ends.push(end);
      lines.push(recordLines);
    });
    // A last record cut off by the end of the input (an unterminated quote): the rest is one record.
    if (scan.end < source.length) {
      ends.push(source.length);
      lines.push(scan.pendingLines + (source[source.length - 1] === NEWLINE ? 0 : 1));
    }
    return { ends, lines };
  }

  private scan(buf: Buffer, maxRecords: number, onRecord?: (end: number, lines: number) => void): Scan {
    const { quote, escape } = this;
    let inQuote = false;
    let records = 0;
    let lines = 0;
    let pendingLines = 0;
    let end = 0;
    for (let i = 0; i < buf.length && records < maxRecords; i++) {
      const c = buf[i];
      if (inQuote) {
        if (c === escape && escape !== quote && (buf[i + 1] === quote || buf[i + 1] === escape)) i++;
        else if (c === quote) inQuote = false;
        else if (c === NEWLINE) pendingLines++;
      } else if (c === quote) {
        inQuote = true;
      } else if (c === NEWLINE) {
        records++;
        onRecord?.(i + 1, pendingLines + 1);
        lines += pendingLines + 1;
        pendingLines = 0;
        end = i + 1;
      }
    }
    return { end, records, lines, pendingLines };
  }
}
