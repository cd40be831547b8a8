/**
 * A record a framer cannot turn into wire format (malformed JSON, a key that is no
 * column): thrown with where it is in the block being framed, so the chunker can name the
 * file, line and byte offset. Row-level reject handling can catch exactly this.
 */
export class RecordError extends Error {
  constructor(
    message: string,
    /** Offset of the record's first byte in the block given to `frame`. */
    readonly byteInBlock: number,
    /** The record's length in source bytes (without its newline). */
    readonly byteLength: number,
    /** Physical lines in the block before the record. */
    readonly linesBefore: number,
    /** Column (1-based, in characters) of the problem within the record, when known. */
    readonly column: number | undefined,
    /** The record's source bytes, verbatim (for a reject file). */
    readonly record: Buffer,
  ) {
    super(message);
    this.name = 'RecordError';
  }
}
