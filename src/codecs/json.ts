/**
 * json, jsonb: `json_recv` reads the text and validates it as `json_in` does; `jsonb_recv`
 * reads a version byte (1) then the text, and parses it as `jsonb_in` does. So the text
 * goes as written and the server still decides whether it is JSON (with the same message).
 *
 * Refused: what the text encoders refuse (invalid UTF-8, NUL).
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { copyBytes, putInt32 } from './store.js';
import { copyUtf8, textEncoder } from './text.js';

export const JSONB_VERSION = 1;

export const jsonEncoder: FieldEncoder = textEncoder;

export const jsonbEncoder: FieldEncoder = {
  encode(src, start, end, out) {
    const n = end - start;
    out.reserve(5 + n);
    const p = out.pos;
    if (!copyUtf8(src, start, end, out.bytes, p + 5)) return false;
    putInt32(out.bytes, p, n + 1);
    out.bytes[p + 4] = JSONB_VERSION;
    out.pos = p + 5 + n;
    return true;
  },
};

/** Appends a jsonb field from the JSON text's UTF-8 bytes (the server parses it). */
export function writeJsonb(out: WireBuffer, bytes: Uint8Array): void {
  out.reserve(5 + bytes.length);
  putInt32(out.bytes, out.pos, bytes.length + 1);
  out.bytes[out.pos + 4] = JSONB_VERSION;
  copyBytes(out.bytes, out.pos + 5, bytes, 0, bytes.length);
  out.pos += 5 + bytes.length;
}
