import type { LoadTarget } from '../core/chunk.js';
import { decoderFor, isUtf8 } from './encodings.js';
import { CsvFramer } from './text/csv-framer.js';
import type { Format } from './formats.js';
import type { FramedBlock, Framer } from './framer.js';
import { JsonRowMapper } from './json/json-record.js';
import { LineFramer, type TextFramerOptions } from './line-framer.js';
import { NdjsonFramer } from './json/ndjson-framer.js';
import { TblFramer } from './text/tbl-framer.js';

/** The framer of a plain format with COPY's default options (for locating an error in a chunk). */
export function framerFor(format: Format, options: TextFramerOptions = {}): Framer {
  switch (format) {
    case 'tbl':
      return new TblFramer(options);
    case 'text':
      return new LineFramer(options);
    case 'csv':
      return new CsvFramer(undefined, undefined, options);
    case 'ndjson':
    case 'json':
    case 'parquet':
      // JSON records and Parquet rows are already one COPY text line each by the time a chunk exists.
      return new LineFramer({ lineEnd: 'nl' });
  }
}

/**
 * The framer for one input: its format, quote and escape, encoding, JSON column mapping,
 * line ending. `endsInput: false`: the bytes framed stop before the end of the input (a
 * byte range of a file).
 */
export function framerForTarget(target: LoadTarget, options: { endsInput?: boolean } = {}): Framer {
  const input = target.input ?? {};
  const textOptions: TextFramerOptions = { lineEnd: target.lineEnd, ...options };
  const decode = decoderFor(input.encoding);
  switch (target.format) {
    case 'ndjson': {
      if (target.jsonColumns === undefined) throw new Error('internal: NDJSON input without a column plan');
      const mapper = new JsonRowMapper(target.jsonColumns, { ignoreExtraKeys: input.ignoreExtraKeys === true, tableName: target.table });
      return new NdjsonFramer(mapper, decode, input.missing === 'default');
    }
    case 'csv': {
      const quote = (input.quote ?? '"').charCodeAt(0);
      const escape = (input.escape ?? input.quote ?? '"').charCodeAt(0);
      return transcoded(new CsvFramer(quote, escape, textOptions), target);
    }
    case 'tbl':
    case 'text':
      return transcoded(framerFor(target.format, textOptions), target);
    case 'json':
      return transcoded(framerFor(target.format), target);
    case 'parquet':
      // Parquet chunks are made by the Parquet reader, never framed from bytes; their COPY text is one line a row.
      return framerFor(target.format);
  }
}

/** Frames the source bytes, then converts the records to UTF-8 (a newline is 0x0A in every input encoding offered). */
function transcoded(inner: Framer, target: LoadTarget): Framer {
  const encoding = target.input?.encoding;
  if (isUtf8(encoding)) return inner;
  const decode = decoderFor(encoding);
  return {
    frame(buf: Buffer, eof: boolean): FramedBlock {
      const framed = inner.frame(buf, eof);
      return framed.records === 0 ? framed : { ...framed, out: Buffer.from(decode(framed.out), 'utf8') };
    },
    linesBeforeRecord: (source, record) => inner.linesBeforeRecord(source, record),
    recordSpans: (source) => inner.recordSpans(source),
    get lineEnd() {
      return inner.lineEnd;
    },
  };
}

/**
 * The framer that cuts a chunk's source bytes (`chunk.source`) into records again, for
 * isolating rejects and resuming inside a chunk. A JSON array's chunks keep their rows as
 * converted (one COPY text line each), so those are framed as lines.
 */
export function sourceFramer(target: LoadTarget): Framer {
  // A Parquet chunk's source is one JSON line a row (what its reject file shows).
  return target.format === 'json' || target.format === 'parquet' ? new LineFramer({ lineEnd: 'nl' }) : framerForTarget(target);
}

/**
 * The framer of a chunk's wire bytes (`chunk.data`): COPY text lines, or CSV with the
 * input's quote and escape; every record ends in `\n` there, whatever the input's line ending.
 */
export function wireFramer(target: LoadTarget): Framer {
  if (target.format !== 'csv') return new LineFramer({ lineEnd: 'nl' });
  const input = target.input ?? {};
  return new CsvFramer((input.quote ?? '"').charCodeAt(0), (input.escape ?? input.quote ?? '"').charCodeAt(0), { lineEnd: 'nl' });
}
