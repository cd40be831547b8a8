/**
 * The encoder for each column type that has one, by `pg_type.typname` (a domain is
 * resolved to its base type by the caller). Types not listed here have none: their table
 * goes through the text wire.
 */
import type { ColumnType, EncoderLookup, FieldEncoder, SessionFacts } from '../field-encoder.js';
import { dateEncoder } from './date.js';
import { int2Encoder, int4Encoder, int8Encoder } from './integers.js';
import { numericEncoder } from './numeric.js';
import { nameEncoder, textEncoder } from './text.js';

export const encoderFor: EncoderLookup = (type: ColumnType, session: SessionFacts): FieldEncoder | undefined => {
  const utf8 = isUtf8(session.serverEncoding);
  switch (type.typname) {
    case 'int2':
      return int2Encoder;
    case 'int4':
      return int4Encoder;
    case 'int8':
      return int8Encoder;
    case 'numeric':
      return numericEncoder(session.serverVersionNum >= 140000);
    case 'date':
      return dateEncoder;
    case 'text':
    case 'varchar':
    case 'bpchar':
      return utf8 ? textEncoder : undefined;
    case 'name':
      return utf8 ? nameEncoder : undefined;
    default:
      return undefined;
  }
};

/** Text values are sent unconverted, so they are only exact when the server stores UTF-8 as we read it. */
function isUtf8(encoding: string): boolean {
  const e = encoding.toUpperCase();
  return e === 'UTF8' || e === 'UTF-8';
}

export { writeInt16, writeInt32, writeInt64 } from './integers.js';
export { writeNumericFromDecimal, writeNumericSpecial } from './numeric.js';
export { writeDateDays } from './date.js';
export { writeText } from './text.js';
