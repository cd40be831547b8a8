import { CARRIAGE_RETURN, EMPTY, NEWLINE, PIPE, type FramedBlock, type Framer, newlineRecordSpans, type RecordSpans } from './framer.js';

/**
 * DBT-3 / TPC-H dbgen output: `|`-delimited with a trailing `|` on every line. The
 * trailing `|` (and a `\r` before the newline) is dropped at the byte level, without
 * looking at the fields, so the rest is COPY text with `DELIMITER '|'`.
 */
export class TblFramer implements Framer {
  frame(buf: Buffer, eof: boolean): FramedBlock {
    return this.frameInto(buf, eof, Buffer.allocUnsafe(buf.length + 1), 0);
  }

  frameInto(buf: Buffer, eof: boolean, into: Buffer, at: number): FramedBlock {
    let end = buf.lastIndexOf(NEWLINE) + 1;
    const unterminated = eof && end < buf.length;
    if (unterminated) end = buf.length;
    if (end === 0) return { out: EMPTY, consumed: 0, records: 0, lines: 0 };

    // One copy of the whole block, then each record is moved left over the bytes dropped
    // so far with the native copyWithin: about twice as fast as copying line by line,
    // and the source block stays as read (rejects write it verbatim).
    // Every record loses at most two bytes and gains none, except an unterminated last one (+1).
    // `buf` may lie in `into`, from `at` on (the chunker frames in place): a move then, or nothing.
    // (Two small Buffers can share Node's pool: the same ArrayBuffer is not the same bytes.)
    const inInto = buf.buffer === into.buffer ? buf.byteOffset - into.byteOffset : -1;
    if (inInto < at || inInto + buf.length > into.length) buf.copy(into, at, 0, end);
    else if (inInto !== at) into.copyWithin(at, inInto, inInto + end);
    let written = at;
    let records = 0;
    let start = at;
    const stopAt = at + end;
    const copied = into.subarray(0, stopAt);
    while (start < stopAt) {
      let nl = copied.indexOf(NEWLINE, start);
      if (nl < 0) nl = stopAt; // the unterminated last record
      let stop = nl;
      if (stop > start && into[stop - 1] === CARRIAGE_RETURN) stop--;
      if (stop > start && into[stop - 1] === PIPE) stop--;
      if (written !== start) into.copyWithin(written, start, stop);
      written += stop - start;
      into[written++] = NEWLINE;
      records++;
      start = nl + 1;
    }
    return { out: into.subarray(at, written), consumed: end, records, lines: records };
  }

  linesBeforeRecord(_source: Buffer, record: number): number {
    return record - 1;
  }

  recordSpans(source: Buffer): RecordSpans {
    return newlineRecordSpans(source);
  }
}
