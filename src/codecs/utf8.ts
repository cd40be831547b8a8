/**
 * Whether bytes are what the server's UTF8 verifier (pg_verify_mbstr) accepts: well-formed
 * UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF) and no NUL byte. The text
 * wire checks this when it reads the line; the binary wire does not convert or verify our
 * bytes the same way, so an encoder refuses anything this says no to and the text wire
 * reports it with the server's own message.
 */
export function isValidUtf8(src: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    const c = src[i]!;
    if (c < 0x80) {
      if (c === 0) return false;
      i++;
      continue;
    }
    if (c < 0xc2 || c > 0xf4) return false;
    if (c < 0xe0) {
      if (i + 1 >= end || !cont(src[i + 1]!)) return false;
      i += 2;
    } else if (c < 0xf0) {
      if (i + 2 >= end) return false;
      const c1 = src[i + 1]!;
      if (c === 0xe0 ? c1 < 0xa0 || c1 > 0xbf : c === 0xed ? c1 < 0x80 || c1 > 0x9f : !cont(c1)) return false;
      if (!cont(src[i + 2]!)) return false;
      i += 3;
    } else {
      if (i + 3 >= end) return false;
      const c1 = src[i + 1]!;
      if (c === 0xf0 ? c1 < 0x90 || c1 > 0xbf : c === 0xf4 ? c1 < 0x80 || c1 > 0x8f : !cont(c1)) return false;
      if (!cont(src[i + 2]!) || !cont(src[i + 3]!)) return false;
      i += 4;
    }
  }
  return true;
}

function cont(c: number): boolean {
  return (c & 0xc0) === 0x80;
}
