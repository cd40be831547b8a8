/**
 * uuid: `uuid_recv` reads the 16 bytes.
 *
 * Accepted text: the canonical `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` and the same 32 hex
 * digits without hyphens, in either case. Refused: braces and other hyphen placements
 * (which `uuid_in` also takes; rare, so we leave them to it), blanks, anything else.
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { HEX, putInt32 } from './store.js';

export const uuidEncoder: FieldEncoder = {
  encode(src, start, end, out) {
    const n = end - start;
    const hyphens = n === 36;
    if (!hyphens && n !== 32) return false;
    if (hyphens && (src[start + 8] !== 45 || src[start + 13] !== 45 || src[start + 18] !== 45 || src[start + 23] !== 45)) return false;
    out.reserve(20);
    const b = out.bytes;
    const p = out.pos;
    let s = start;
    for (let k = 0; k < 16; k++) {
      if (hyphens && (k === 4 || k === 6 || k === 8 || k === 10)) s++;
      const hi = HEX[src[s]!]!;
      const lo = HEX[src[s + 1]!]!;
      if ((hi | lo) < 0) return false;
      b[p + 4 + k] = (hi << 4) | lo;
      s += 2;
    }
    putInt32(b, p, 16);
    out.pos = p + 20;
    return true;
  },
};

/** Appends a uuid field from its 16 bytes. */
export function writeUuid(out: WireBuffer, bytes: Uint8Array): void {
  if (bytes.length !== 16) throw new RangeError(`a uuid is 16 bytes, got ${bytes.length}`);
  out.reserve(20);
  putInt32(out.bytes, out.pos, 16);
  out.bytes.set(bytes, out.pos + 4);
  out.pos += 20;
}
