import type { FileHandle } from 'node:fs/promises';
import { findNewline, type ByteRange, type RecordEndRule } from './byte-ranges.js';

/**
 * `--part K/N`: this process loads the K-th of N shares of every input, so N processes
 * (on one host or several) load one input together. The shares are byte ranges cut at
 * record boundaries the same way by every part (`alignRanges`), so they cover each file
 * exactly once whoever computes them.
 */
export interface LoadPart {
  /** 1-based. */
  readonly k: number;
  readonly n: number;
}

/** `2/3` → { k: 2, n: 3 }; else the message, naming the flag and the value. */
export function parsePart(value: string): LoadPart | string {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const k = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(k) || !Number.isSafeInteger(n) || n < 1 || k < 1 || k > n) {
    return `Expected \`--part\` to be K/N with 1 ≤ K ≤ N (e.g. 2/3: the second of three shares), got \`${value}\``;
  }
  return { k, n };
}

/** `2/3`: how the ledger and `pgsurge status` name a part. */
export function partLabel(part: LoadPart): string {
  return `${part.k}/${part.n}`;
}

/**
 * The part's share of `[0, size)`: from cut K-1 to cut K, each cut the nominal position
 * `size × i / N` moved to just past the next newline, as `alignRanges` cuts. Every part
 * computes its own two cuts, and the shares of 1…N cover each byte exactly once (a share
 * is empty when the file has fewer lines than parts).
 */
export function shareBounds(size: number, part: LoadPart, nextNewline: (pos: number) => number): ByteRange {
  const cut = (i: number): number => {
    if (i <= 0) return 0;
    if (i >= part.n) return size;
    const nominal = Math.floor((size * i) / part.n);
    if (nominal === 0) return 0;
    const nl = nextNewline(nominal - 1);
    return nl < 0 ? size : Math.min(size, nl + 1);
  };
  const start = cut(part.k - 1);
  return { start, end: Math.max(start, cut(part.k)) };
}

/** `shareBounds` over a file, probing for the two newlines. */
export async function partRange(fh: FileHandle, size: number, part: LoadPart, rule?: RecordEndRule): Promise<ByteRange> {
  const probe = Buffer.allocUnsafe(64 * 1024);
  const found = new Map<number, number>();
  for (const i of [part.k - 1, part.k]) {
    const nominal = Math.floor((size * i) / part.n);
    if (i > 0 && i < part.n && nominal > 0) found.set(nominal - 1, await findNewline(fh, nominal - 1, size, probe, rule));
  }
  return shareBounds(size, part, (pos) => found.get(pos) ?? -1);
}

/** The parts of `todo` (sorted, disjoint) inside `share`. */
export function withinShare(todo: readonly ByteRange[], share: ByteRange): ByteRange[] {
  return todo.map((r) => ({ start: Math.max(r.start, share.start), end: Math.min(r.end, share.end) })).filter((r) => r.end > r.start);
}
