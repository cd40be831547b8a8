import { EMPTY, NEWLINE, type FramedBlock, type Framer, newlineRecordSpans, type RecordSpans } from './framer.js';

/**
 * PostgreSQL's text format: one record per line, passed through as it is (COPY itself
 * understands `\n`, `\r\n` and backslash escapes).
 */
export class LineFramer implements Framer {
  frame(buf: Buffer, eof: boolean): FramedBlock {
    const last = buf.lastIndexOf(NEWLINE);
    if (last < 0) {
      if (!eof || buf.length === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };
      return { out: Buffer.concat([buf, Buffer.from('\n')]), consumed: buf.length, records: 1, lines: 1 };
    }
    const records = countNewlines(buf, last + 1);
    if (eof && last + 1 < buf.length) {
      return { out: Buffer.concat([buf, Buffer.from('\n')]), consumed: buf.length, records: records + 1, lines: records + 1 };
    }
    return { out: buf.subarray(0, last + 1), consumed: last + 1, records, lines: records };
  }

  linesBeforeRecord(_source: Buffer, record: number): number {
    return record - 1;
  }

  recordSpans(source: Buffer): RecordSpans {
    return newlineRecordSpans(source);
  }
}

/** Newlines in `buf[0, end)`. */
export function countNewlines(buf: Buffer, end: number = buf.length): number {
  let n = 0;
  let i = buf.indexOf(NEWLINE);
  while (i >= 0 && i < end) {
    n++;
    i = buf.indexOf(NEWLINE, i + 1);
  }
  return n;
}
