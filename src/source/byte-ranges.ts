import type { FileHandle } from 'node:fs/promises';
import { NEWLINE } from '../framing/framer.js';

export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Cuts `[0, size)` into at most `parts` ranges that start at line starts: each nominal cut
 * moves forward to just past the next newline, so every line lies in exactly one range.
 * `nextNewline(pos)` returns the index of the first newline at or after `pos`, or -1.
 */
export function alignRanges(size: number, parts: number, nextNewline: (pos: number) => number): ByteRange[] {
  const cuts = [0];
  for (let i = 1; i < parts; i++) {
    const nominal = Math.floor((size * i) / parts);
    const previous = cuts[cuts.length - 1]!;
    if (nominal <= previous) continue;
    const nl = nextNewline(nominal - 1);
    const cut = nl < 0 ? size : nl + 1;
    if (cut > previous && cut < size) cuts.push(cut);
  }
  cuts.push(size);
  const ranges: ByteRange[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) ranges.push({ start: cuts[i]!, end: cuts[i + 1]! });
  return ranges.filter((r) => r.end > r.start);
}

const PROBE = 64 * 1024;

/** `alignRanges` over a file, reading small windows at each cut. */
export async function splitFileIntoRanges(fh: FileHandle, size: number, parts: number): Promise<ByteRange[]> {
  return splitFileRange(fh, { start: 0, end: size }, parts);
}

/** `alignRanges` over `[range.start, range.end)` of a file (which starts at a line start). */
export async function splitFileRange(fh: FileHandle, range: ByteRange, parts: number): Promise<ByteRange[]> {
  const size = range.end - range.start;
  const probe = Buffer.allocUnsafe(PROBE);
  const newlineAt = new Map<number, number>();
  // alignRanges is synchronous; find each cut's newline first, then hand them over.
  for (let i = 1; i < parts; i++) {
    const pos = Math.max(0, Math.floor((size * i) / parts) - 1);
    const nl = await findNewline(fh, range.start + pos, range.end, probe);
    newlineAt.set(pos, nl < 0 ? -1 : nl - range.start);
  }
  return alignRanges(size, parts, (pos) => {
    const known = newlineAt.get(pos);
    if (known === undefined) throw new Error(`internal: no newline probe at ${pos}`);
    return known;
  }).map((r) => ({ start: r.start + range.start, end: r.end + range.start }));
}

/** The parts of `[0, size)` that `covered` (sorted, merged) leaves out. */
export function uncoveredRanges(size: number, covered: readonly ByteRange[]): ByteRange[] {
  const out: ByteRange[] = [];
  let at = 0;
  for (const c of covered) {
    if (c.start > at) out.push({ start: at, end: Math.min(c.start, size) });
    at = Math.max(at, c.end);
  }
  if (at < size) out.push({ start: at, end: size });
  return out.filter((r) => r.end > r.start);
}

export async function findNewline(fh: FileHandle, from: number, size: number, probe: Buffer): Promise<number> {
  let pos = from;
  while (pos < size) {
    const { bytesRead } = await fh.read(probe, 0, Math.min(PROBE, size - pos), pos);
    if (bytesRead === 0) return -1;
    const i = probe.subarray(0, bytesRead).indexOf(NEWLINE);
    if (i >= 0) return pos + i;
    pos += bytesRead;
  }
  return -1;
}

/** Reads `[start, end)` of a file in blocks of `blockSize` bytes. */
export async function* readRange(fh: FileHandle, range: ByteRange, blockSize: number): AsyncGenerator<Buffer> {
  let pos = range.start;
  while (pos < range.end) {
    const want = Math.min(blockSize, range.end - pos);
    const buf = Buffer.allocUnsafe(want);
    let filled = 0;
    while (filled < want) {
      const { bytesRead } = await fh.read(buf, filled, want - filled, pos + filled);
      if (bytesRead === 0) throw new Error(`file shrank while reading: expected ${range.end} bytes, ended at ${pos + filled}`);
      filled += bytesRead;
    }
    pos += want;
    yield buf;
  }
}
