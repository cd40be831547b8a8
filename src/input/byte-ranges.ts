import type { FileHandle } from 'node:fs/promises';
import type { LoadTarget } from '../core/chunk.js';
import { NEWLINE } from './framer.js';
import { BACKSLASH, CR, detectLineEnd, type LineEnd } from './line-ends.js';

/**
 * How records end in a file, for cutting it into ranges as its framer frames it: text and
 * `.tbl` at the file's line ending unless a backslash escapes it; NDJSON at every `\n`
 * (undefined).
 */
export interface RecordEndRule {
  readonly lineEnd: LineEnd;
}

/**
 * The line ending of a text, `.tbl` or CSV file, from its first line (COPY holds every line
 * to it); undefined for other formats. Reads as far as the first line ending (up to 16 MB).
 */
export async function fileLineEnd(fh: FileHandle, target: LoadTarget): Promise<LineEnd | undefined> {
  if (target.format !== 'text' && target.format !== 'tbl' && target.format !== 'csv') return undefined;
  const input = target.input ?? {};
  const csv = target.format === 'csv' ? { quote: (input.quote ?? '"').charCodeAt(0), escape: (input.escape ?? input.quote ?? '"').charCodeAt(0) } : undefined;
  for (let want = 64 * 1024; ; want *= 4) {
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await fh.read(buf, 0, want, 0);
    const eof = bytesRead < want || want >= 16 * 1024 * 1024;
    const found = detectLineEnd(buf.subarray(0, bytesRead), eof, csv);
    if (found !== undefined) return found;
  }
}

export function recordEndRuleFor(target: LoadTarget): RecordEndRule | undefined {
  if (target.format !== 'text' && target.format !== 'tbl') return undefined;
  return { lineEnd: target.lineEnd ?? 'nl' };
}

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
export async function splitFileRange(fh: FileHandle, range: ByteRange, parts: number, rule?: RecordEndRule): Promise<ByteRange[]> {
  const size = range.end - range.start;
  const probe = Buffer.allocUnsafe(PROBE);
  const newlineAt = new Map<number, number>();
  // alignRanges is synchronous; find each cut's newline first, then hand them over.
  for (let i = 1; i < parts; i++) {
    const pos = Math.max(0, Math.floor((size * i) / parts) - 1);
    const nl = await findNewline(fh, range.start + pos, range.end, probe, rule);
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

/**
 * The index of the last byte of the first record end at or after `from` (a newline, or
 * with `rule` the file's line ending that no backslash escapes), or -1.
 */
export async function findNewline(fh: FileHandle, from: number, size: number, probe: Buffer, rule?: RecordEndRule): Promise<number> {
  const byte = rule?.lineEnd === 'cr' ? CR : NEWLINE;
  let pos = from;
  while (pos < size) {
    const { bytesRead } = await fh.read(probe, 0, Math.min(PROBE, size - pos), pos);
    if (bytesRead === 0) return -1;
    const window = probe.subarray(0, bytesRead);
    let i = window.indexOf(byte);
    while (i >= 0) {
      if (rule === undefined || (await endsRecord(fh, pos + i, rule))) return pos + i;
      i = window.indexOf(byte, i + 1);
    }
    pos += bytesRead;
  }
  return -1;
}

/** Whether the line-ending byte at file offset `at` ends a record under `rule` (its backslashes read back from the file). */
async function endsRecord(fh: FileHandle, at: number, rule: RecordEndRule): Promise<boolean> {
  let end = at;
  if (rule.lineEnd === 'crnl') {
    // The record ends at a CR-LF: the CR must be there, and not escaped.
    if (at === 0 || (await byteAt(fh, at - 1)) !== CR) return false;
    end = at - 1;
  }
  return (await backslashesBefore(fh, end)) % 2 === 0;
}

async function byteAt(fh: FileHandle, at: number): Promise<number> {
  const b = Buffer.alloc(1);
  const { bytesRead } = await fh.read(b, 0, 1, at);
  return bytesRead === 1 ? b[0]! : -1;
}

/** The run of backslashes right before file offset `at`. */
async function backslashesBefore(fh: FileHandle, at: number): Promise<number> {
  const back = Buffer.allocUnsafe(256);
  let n = 0;
  let pos = at;
  while (pos > 0) {
    const from = Math.max(0, pos - back.length);
    const { bytesRead } = await fh.read(back, 0, pos - from, from);
    if (bytesRead < pos - from) return n;
    for (let i = pos - from - 1; i >= 0; i--) {
      if (back[i] !== BACKSLASH) return n;
      n++;
    }
    pos = from;
  }
  return n;
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
