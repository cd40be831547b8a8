/**
 * The binary wire's contract between the record splitter (which cuts a framed COPY text or
 * CSV record into fields, finds NULLs and undoes COPY's escaping or quoting) and the
 * per-type encoders in `src/wire/encoders/` (which turn one field's value text into the
 * bytes the column type's receive function reads).
 *
 * Exact or not at all: an encoder that meets a form it cannot encode with certainty
 * (`infinity`, an exponent, a BC date, a zone spelled by name, anything malformed, …)
 * returns false, and the whole chunk goes through text COPY so the server's own parser
 * decides (and rejects the bad row with its own message).
 */

/** Facts about the worker's session that change how input text is read. */
export interface SessionFacts {
  /** `server_version_num`, e.g. 150018 (numeric ±Infinity exists from 140000). */
  readonly serverVersionNum: number;
  /** `TimeZone`: a timestamptz without an explicit offset is read in it. */
  readonly timeZone: string;
  /** `DateStyle`, e.g. `ISO, MDY`. */
  readonly dateStyle: string;
  /** `server_encoding`: binary text values are not converted, so only UTF8 can take them as framed. */
  readonly serverEncoding: string;
}

/** A target column's type as the catalog names it (a domain already resolved to its base type). */
export interface ColumnType {
  /** `pg_type.typname` of the (base) type: `int4`, `numeric`, `bpchar`, `timestamptz`, … */
  readonly typname: string;
  /** `pg_attribute.atttypmod` (-1 when none); the server still applies it on receive. */
  readonly typmod: number;
  /** `pg_type.oid`. */
  readonly oid: number;
}

/**
 * Where encoders write: one growable byte array written with plain stores (`b[p++] = x`),
 * which measured about twice as fast as `Buffer.writeInt32BE` and friends on the hot path.
 */
export class WireBuffer {
  bytes: Uint8Array;
  pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.bytes = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Makes room for `n` more bytes after `pos`. */
  reserve(n: number): void {
    if (this.pos + n > this.bytes.length) this.grow(n);
  }

  private grow(n: number): void {
    let size = this.bytes.length * 2;
    while (size < this.pos + n) size *= 2;
    const bigger = Buffer.allocUnsafeSlow(size);
    bigger.set(this.bytes.subarray(0, this.pos));
    this.bytes = bigger;
  }
}

export interface FieldEncoder {
  /**
   * Appends one field of a binary COPY tuple — its int32 length, then the bytes the
   * type's receive function reads — for the value whose input text is `src[start, end)`:
   * the bytes the column's input function would be given (COPY's escaping and CSV quoting
   * already undone; never a NULL, which the splitter writes itself as length -1).
   * Returns false when it cannot encode that text with certainty; `out.pos` is then where
   * it was (whatever was written past it does not count).
   */
  encode(src: Uint8Array, start: number, end: number, out: WireBuffer): boolean;
  /**
   * The record splitter's inlined fast path for this encoder's common forms (src/wire/fast-fields.ts),
   * which writes exactly what `encode` writes for them and leaves every other form to `encode`.
   */
  readonly fast?: FastKind;
}

/** The common forms the record splitter encodes in its own loop: plain integers, short decimals, ISO dates, ASCII text. */
export type FastKind = 'int2' | 'int4' | 'int8' | 'numeric' | 'date' | 'text';

/** Finds the encoder for a column type, or undefined when the type has none (its table goes as text). */
export type EncoderLookup = (type: ColumnType, session: SessionFacts) => FieldEncoder | undefined;
