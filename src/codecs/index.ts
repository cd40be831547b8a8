/**
 * The encoder for each column type that has one, by `pg_type.typname` (a domain is
 * resolved to its base type by the caller). Types not listed here have none: their table
 * goes through the text wire.
 *
 * Session facts used: `serverVersionNum` (numeric ±Infinity from 140000), `timeZone`
 * (timestamptz without an offset only in a UTC session), `serverEncoding` (text-like types
 * only on a UTF8 server). `dateStyle` is not needed: the only date form encoded,
 * `YYYY-MM-DD`, reads the same under every DateStyle.
 */
import type { ColumnType, EncoderLookup, FieldEncoder, SessionFacts } from './field-encoder.js';
import { boolEncoder } from './bool.js';
import { byteaEncoder } from './bytea.js';
import { dateEncoder } from './date.js';
import { float4Encoder, float8Encoder } from './floats.js';
import { int2Encoder, int4Encoder, int8Encoder } from './integers.js';
import { jsonbEncoder, jsonEncoder } from './json.js';
import { numericEncoder } from './numeric.js';
import { nameEncoder, textEncoder } from './text.js';
import { timestampEncoder, timestamptzEncoder } from './timestamp.js';
import { uuidEncoder } from './uuid.js';

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
    case 'float4':
      return float4Encoder;
    case 'float8':
      return float8Encoder;
    case 'bool':
      return boolEncoder;
    case 'date':
      return dateEncoder;
    case 'timestamp':
      return timestampEncoder;
    case 'timestamptz':
      return timestamptzEncoder(session.timeZone);
    case 'bytea':
      return byteaEncoder;
    case 'uuid':
      return uuidEncoder;
    case 'text':
    case 'varchar':
    case 'bpchar':
      return utf8 ? textEncoder : undefined;
    case 'name':
      return utf8 ? nameEncoder : undefined;
    case 'json':
      return utf8 ? jsonEncoder : undefined;
    case 'jsonb':
      return utf8 ? jsonbEncoder : undefined;
    default:
      return undefined;
  }
};

/** Text values are sent unconverted, so they are only exact when the server stores UTF-8 as we read it. */
function isUtf8(encoding: string): boolean {
  const e = encoding.toUpperCase();
  return e === 'UTF8' || e === 'UTF-8' || e === 'UNICODE';
}

// Typed writers, for sources whose values are already typed (Parquet): each appends length + value.
export { writeInt16, writeInt32, writeInt64 } from './integers.js';
export { writeFloat4, writeFloat8 } from './floats.js';
export { writeBool } from './bool.js';
export { writeDateDays } from './date.js';
export { writeTimestampMicros } from './timestamp.js';
export { writeNumericFromDecimal, writeNumericSpecial, writeScaledNumeric, NUMERIC_NAN, NUMERIC_PINF, NUMERIC_NINF } from './numeric.js';
export { writeText } from './text.js';
export { writeBytea } from './bytea.js';
export { writeUuid } from './uuid.js';
export { writeJsonb } from './json.js';
