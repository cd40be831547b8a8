/**
 * boolean: `boolrecv` reads one byte, 1 or 0.
 *
 * Accepted text, as `boolin` reads it, in any case: `t`, `tr`, `tru`, `true`; `f` … `false`;
 * `y` … `yes`; `n`, `no`; `on`; `of`, `off`; `1`; `0`. Refused: blanks around it (boolin
 * trims them, but we leave that to it), `o`, anything else.
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { putInt32 } from './store.js';

/** 1 for true, 0 for false, -1 when boolin would not read it (or only after trimming blanks). */
export function parseBool(src: Uint8Array, start: number, end: number): number {
  const n = end - start;
  if (n === 0) return -1;
  const c = src[start]! | 0x20;
  switch (c) {
    case 0x74: // t
      return isPrefixIgnoringCase(src, start, n, 'true') ? 1 : -1;
    case 0x66: // f
      return isPrefixIgnoringCase(src, start, n, 'false') ? 0 : -1;
    case 0x79: // y
      return isPrefixIgnoringCase(src, start, n, 'yes') ? 1 : -1;
    case 0x6e: // n
      return isPrefixIgnoringCase(src, start, n, 'no') ? 0 : -1;
    case 0x6f: // o: "o" alone is neither
      if (n === 2 && (src[start + 1]! | 0x20) === 0x6e) return 1;
      if (n >= 2 && isPrefixIgnoringCase(src, start, n, 'off')) return 0;
      return -1;
    case 0x31: // '1' | 0x20 is itself
      return n === 1 ? 1 : -1;
    case 0x30:
      return n === 1 ? 0 : -1;
    default:
      return -1;
  }
}

/** Whether the `n` bytes at `start` begin `word` (lower case), ignoring case. */
function isPrefixIgnoringCase(src: Uint8Array, start: number, n: number, word: string): boolean {
  if (n > word.length) return false;
  for (let i = 1; i < n; i++) if ((src[start + i]! | 0x20) !== word.charCodeAt(i)) return false;
  return true;
}

export const boolEncoder: FieldEncoder = {
  encode(src, start, end, out) {
    const v = parseBool(src, start, end);
    if (v < 0) return false;
    writeBool(out, v === 1);
    return true;
  },
};

/** Appends a boolean field. */
export function writeBool(out: WireBuffer, v: boolean): void {
  out.reserve(5);
  putInt32(out.bytes, out.pos, 1);
  out.bytes[out.pos + 4] = v ? 1 : 0;
  out.pos += 5;
}
