/**
 * text, varchar(n), char(n) (bpchar), name: `textrecv`, `varcharrecv`, `bpcharrecv` read
 * the bytes as they are; the last two apply the typmod themselves exactly as the input
 * functions do (char(n) pads with blanks, a value too long is an error unless the excess
 * is blanks, which are cut), so the bytes go as written.
 *
 * Refused: anything that is not valid UTF-8 or holds a NUL byte (the text wire rejects
 * such a line with the server's "invalid byte sequence" message). For `name`, 64 bytes or
 * more: `namein` cuts them to 63 while `namerecv` refuses them. The encoders are only
 * offered when the server encoding is UTF8 (see `encoderFor`).
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { copyBytes, putInt32, writeLengthPrefixed } from './store.js';
import { isValidUtf8 } from './utf8.js';

/** NAMEDATALEN - 1. */
const NAME_MAX_BYTES = 63;

/**
 * Copies `src[start, end)` to `b` at `q` when it is valid UTF-8 without NUL; false
 * otherwise (bytes may have been written past `q`). ASCII is checked while copying; a
 * byte ≥ 0x80 sends the rest through the full check. `b` must have room.
 */
export function copyUtf8(src: Uint8Array, start: number, end: number, b: Uint8Array, q: number): boolean {
  for (let i = start; i < end; i++) {
    const c = src[i]!;
    if (c === 0) return false;
    if (c >= 0x80) {
      if (!isValidUtf8(src, i, end)) return false;
      copyBytes(b, q, src, i, end - i);
      return true;
    }
    b[q++] = c;
  }
  return true;
}

function encodeUtf8(src: Uint8Array, start: number, end: number, out: WireBuffer): boolean {
  const n = end - start;
  out.reserve(4 + n);
  const p = out.pos;
  if (!copyUtf8(src, start, end, out.bytes, p + 4)) return false;
  putInt32(out.bytes, p, n);
  out.pos = p + 4 + n;
  return true;
}

export const textEncoder: FieldEncoder = { encode: encodeUtf8, fast: 'text' };

export const nameEncoder: FieldEncoder = {
  encode(src, start, end, out) {
    return end - start <= NAME_MAX_BYTES && encodeUtf8(src, start, end, out);
  },
};

/** Appends a text field (text, varchar, char(n), json): the bytes must be valid UTF-8 without NUL. */
export const writeText: (out: WireBuffer, bytes: Uint8Array) => void = writeLengthPrefixed;
