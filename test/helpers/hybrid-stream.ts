/** A random RLE/bit-packed hybrid stream of `width`-bit values: RLE runs (short and long) and bit-packed groups of random bytes; and how many values it holds. */
export function hybridStream(width: number, seed: number): { bytes: Uint8Array; values: number } {
  let x = seed;
  const random = (n: number): number => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  const out: number[] = [];
  const varint = (v: number): void => {
    for (; v >= 0x80; v >>>= 7) out.push((v & 0x7f) | 0x80);
    out.push(v);
  };
  let values = 0;
  for (let run = 0; run < 40; run++) {
    // (At width 0 only RLE runs: hyparquet reads a byte at a bit-packed run's start that the spec's 0 bits do not hold.)
    if (width === 0 || random(2) === 0) {
      const count = random(3) === 0 ? 1 + random(400) : 1 + random(9);
      varint(count << 1);
      const v = width === 0 ? 0 : random(2 ** width);
      for (let k = 0; k < (width + 7) >> 3; k++) out.push((v >>> (8 * k)) & 0xff);
      values += count;
    } else {
      const groups = 1 + random(5);
      varint((groups << 1) | 1);
      for (let k = 0; k < groups * width; k++) out.push(random(256));
      values += groups * 8;
    }
  }
  return { bytes: Uint8Array.from(out), values };
}
