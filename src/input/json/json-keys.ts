import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { LoadTarget } from '../../core/chunk.js';
import { LoadError } from '../../core/load-error.js';
import { decoderFor, isUtf8 } from '../encodings.js';
import { compressionOf, fileBlocks, readOnce } from '../file-blocks.js';
import { DEFAULT_SAMPLE, type DescribeOptions, type FileDescription } from '../input-format.js';
import { dropBom } from '../record-window.js';
import { jsonColumns } from './json-types.js';
import { arrayElements, JsonSyntaxError, scanValue, skipSpace } from './json-scan.js';

/** How much of a file is read for its keys and their types (`sample: 'all'`: all of it), and how many objects are looked at by default. */
const HEAD_BYTES = 16 << 20;

/** The file's first bytes (after a byte-order mark), up to `limit`, as text; `whole` when that is the whole file. */
async function head(target: LoadTarget, limit: number): Promise<{ text: string; whole: boolean }> {
  const blocks = fileBlocks(target, 64 * 1024);
  const parts: Buffer[] = [];
  let bytes = 0;
  let whole = true;
  try {
    for await (const block of (await dropBom(blocks, target.file)).rest) {
      parts.push(block);
      bytes += block.length;
      if (bytes >= limit) {
        whole = false;
        break;
      }
    }
  } finally {
    await blocks.return(undefined);
  }
  const buf = Buffer.concat(parts);
  // A cut may split a UTF-8 character: read the head leniently (only whole objects before the cut are looked at).
  const text = isUtf8(target.input?.encoding) ? buf.toString('utf8') : decoderFor(target.input?.encoding)(buf);
  return { text, whole };
}

/** The keys a file's first objects show, in the order they first appear, typed from their values. */
function keysOf(objects: readonly unknown[], whole: boolean): FileDescription {
  return { columns: jsonColumns(objects), sampled: objects.length, whole };
}

const limits = (options: DescribeOptions): { bytes: number; objects: number } =>
  options.sample === 'all' ? { bytes: Infinity, objects: Infinity } : { bytes: HEAD_BYTES, objects: options.sample ?? DEFAULT_SAMPLE };

/** Up to `max` objects of NDJSON `lines` (lines that are not a JSON object are passed over); `more`: lines were left. */
function ndjsonObjects(lines: readonly string[], max: number): { objects: unknown[]; more: boolean } {
  const objects: unknown[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (objects.length === max) return { objects, more: true };
    try {
      objects.push(JSON.parse(line));
    } catch {
      // not a JSON object: it names no columns
    }
  }
  return { objects, more: false };
}

const PROBE_BYTES = 64 * 1024;

async function readAt(fh: FileHandle, at: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  const { bytesRead } = await fh.read(buf, 0, length, at);
  return buf.subarray(0, bytesRead);
}

/**
 * The lines of three blocks of a plain NDJSON file, its start, middle and end, each
 * holding about a third of `objects` (whole lines only); undefined when the file is
 * small enough to read from its start.
 */
async function ndjsonBlocks(target: LoadTarget, objects: number): Promise<string[][] | undefined> {
  if (readOnce(target.file) || compressionOf(target) !== undefined) return undefined;
  const fh = await fs.open(target.file, 'r');
  try {
    const size = (await fh.stat()).size;
    const probe = await readAt(fh, 0, Math.min(size, PROBE_BYTES));
    const lines = Math.max(1, probe.filter((b) => b === 0x0a).length);
    const block = Math.min(HEAD_BYTES, Math.max(PROBE_BYTES, Math.ceil(((objects / 3) * probe.length * 1.25) / lines) + PROBE_BYTES));
    if (size <= 3 * block) return undefined;
    const decode = isUtf8(target.input?.encoding) ? (b: Buffer): string => b.toString('utf8') : decoderFor(target.input?.encoding);
    const cut = (b: Buffer, from: boolean, to: boolean): string[] => {
      const start = from ? b.indexOf(0x0a) + 1 : 0;
      const end = to ? b.lastIndexOf(0x0a) + 1 : b.length;
      return end > start ? decode(b.subarray(start, end)).split('\n') : [];
    };
    return [
      cut(await readAt(fh, 0, block), false, true),
      cut(await readAt(fh, Math.floor(size / 2 - block / 2), block), true, true),
      cut(await readAt(fh, size - block, block), true, false),
    ];
  } finally {
    await fh.close();
  }
}

/**
 * The keys of an NDJSON file's objects and their types: a third of the sample from the
 * file's start, middle and end (a plain file larger than that), else from its start
 * (a line cut by the end of what is read is not looked at).
 */
export async function ndjsonKeys(target: LoadTarget, options: DescribeOptions): Promise<FileDescription> {
  const { bytes, objects: max } = limits(options);
  const blocks = options.sample === 'all' ? undefined : await ndjsonBlocks(target, max);
  if (blocks !== undefined) {
    const third = Math.floor(max / 3);
    const [start, middle, end] = blocks.map((lines) => ndjsonObjects(lines, Infinity).objects);
    return keysOf([...start!.slice(0, max - 2 * third), ...middle!.slice(0, third), ...(third > 0 ? end!.slice(-third) : [])], false);
  }
  const { text, whole } = await head(target, bytes);
  const lines = text.split('\n');
  if (!whole) lines.pop();
  const { objects, more } = ndjsonObjects(lines, max);
  return keysOf(objects, whole && !more);
}

/** The keys of the first objects of a JSON array: the document, or the array at `--json-path` (keys joined by dots). */
export async function jsonArrayKeys(target: LoadTarget, options: DescribeOptions): Promise<FileDescription> {
  const { bytes, objects: OBJECTS } = limits(options);
  const { text, whole } = await head(target, bytes);
  const path = target.input?.jsonPath;
  if (path !== undefined) {
    if (!whole) throw new LoadError('bad-input', `${target.file}: the array at --json-path ${path} is described from documents up to ${HEAD_BYTES >> 20} MiB`, { hint: 'give --sample all to read the whole document' });
    let value: unknown = JSON.parse(text);
    for (const key of path.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(value)) throw new LoadError('bad-input', `${target.file}: no array at --json-path ${path}`);
    return keysOf(value.slice(0, OBJECTS), value.length <= OBJECTS);
  }
  const start = skipSpace(text, 0);
  if (text.charCodeAt(start) !== 0x5b) throw new LoadError('bad-input', `${target.file}: the document is not a JSON array`, { hint: 'give --json-path to name the array inside the document' });
  if (whole) {
    const elements = arrayElements(text, start);
    return keysOf(elements.slice(0, OBJECTS).map((e) => JSON.parse(text.slice(e.start, e.end)) as unknown), elements.length <= OBJECTS);
  }
  // The head ends inside the array: its elements up to the cut.
  const objects: unknown[] = [];
  let at = skipSpace(text, start + 1);
  while (objects.length < OBJECTS && at < text.length && text.charCodeAt(at) !== 0x5d) {
    let end: number;
    try {
      end = scanValue(text, at);
    } catch (error) {
      if (error instanceof JsonSyntaxError) break;
      throw error;
    }
    if (end >= text.length) break;
    objects.push(JSON.parse(text.slice(at, end)));
    at = skipSpace(text, end);
    if (text.charCodeAt(at) === 0x2c) at = skipSpace(text, at + 1);
  }
  return keysOf(objects, false);
}
