/** Thrift compact: a Parquet DATA_PAGE v1 header (PLAIN values, RLE levels) before its page, for tests that build column chunks by hand. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
const zz = (n: number): number[] => varint((n << 1) ^ (n >> 31));

/** A data page of `numValues` values: its header (`body`'s size uncompressed) and `stored`, the page as written (`body` itself, or compressed). */
export function dataPageV1(numValues: number, body: Uint8Array, stored: Uint8Array = body): Uint8Array {
  const header = [0x15, ...zz(0), 0x15, ...zz(body.length), 0x15, ...zz(stored.length), 0x2c, 0x15, ...zz(numValues), 0x15, ...zz(0), 0x15, ...zz(3), 0x15, ...zz(3), 0x00, 0x00];
  const out = new Uint8Array(header.length + stored.length);
  out.set(header);
  out.set(stored, header.length);
  return out;
}
