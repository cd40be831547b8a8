import { CARRIAGE_RETURN, EMPTY, NEWLINE, PIPE, type FramedBlock, type Framer, newlineRecordSpans, type RecordSpans } from './framer.js';

/**
 * DBT-3 / TPC-H dbgen output: `|`-delimited with a trailing `|` on every line. The
 * trailing `|` (and a `\r` before the newline) is dropped at the byte level, without
 * looking at the fields, so the rest is COPY text with `DELIMITER '|'`.
 */
export class TblFramer implements Framer {
  frame(buf: Buffer, eof: boolean): FramedBlock {
    let end = buf.lastIndexOf(NEWLINE) + 1;
    const unterminated = eof && end < buf.length;
    if (unterminated) end = buf.length;
    if (end === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };

    // Every record loses at most one byte and gains none, except an unterminated last one (+1).
    const out = Buffer.allocUnsafe(end + 1);
    let written = 0;
    let records = 0;
    let start = 0;
    while (start < end) {
      let nl = buf.indexOf(NEWLINE, start);
      if (nl < 0 || nl >= end) nl = end; // the unterminated last record
      let stop = nl;
      if (stop > start && buf[stop - 1] === CARRIAGE_RETURN) stop--;
      if (stop > start && buf[stop - 1] === PIPE) stop--;
      written += buf.copy(out, written, start, stop);
      out[written++] = NEWLINE;
      records++;
      start = nl + 1;
    }
    return { out: out.subarray(0, written), consumed: end, records, lines: records };
  }

  linesBeforeRecord(_source: Buffer, record: number): number {
    return record - 1;
  }

  recordSpans(source: Buffer): RecordSpans {
    return newlineRecordSpans(source);
  }
}
