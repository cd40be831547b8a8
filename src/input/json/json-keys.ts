import type { LoadTarget } from '../../core/chunk.js';
import { LoadError } from '../../core/load-error.js';
import { decoderFor, isUtf8 } from '../encodings.js';
import { fileBlocks } from '../file-blocks.js';
import { dropBom } from '../record-window.js';
import { arrayElements, JsonSyntaxError, scanValue, skipSpace } from './json-scan.js';

/** How much of a file is read for its keys, and how many objects are looked at. */
const HEAD_BYTES = 1 << 20;
const OBJECTS = 100;

/** The file's first bytes (after a byte-order mark), up to `HEAD_BYTES`, as text; `whole` when that is the whole file. */
async function head(target: LoadTarget): Promise<{ text: string; whole: boolean }> {
  const blocks = fileBlocks(target, 64 * 1024);
  const parts: Buffer[] = [];
  let bytes = 0;
  let whole = true;
  try {
    for await (const block of (await dropBom(blocks)).rest) {
      parts.push(block);
      bytes += block.length;
      if (bytes >= HEAD_BYTES) {
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

/** The keys a file's first objects show, how many objects were looked at, and whether they were all the file holds. */
export interface JsonKeys {
  readonly names: string[];
  readonly sampled: number;
  readonly whole: boolean;
}

/** The keys of `objects`, in the order they first appear. */
function keysOf(objects: readonly unknown[], whole: boolean): JsonKeys {
  const keys = new Set<string>();
  for (const o of objects) if (o !== null && typeof o === 'object' && !Array.isArray(o)) for (const key of Object.keys(o)) keys.add(key);
  return { names: [...keys], sampled: objects.length, whole };
}

/** The keys of an NDJSON file's first objects (lines that are not a JSON object are passed over; a line cut by the end of the head is not read). */
export async function ndjsonKeys(target: LoadTarget): Promise<JsonKeys> {
  const { text, whole } = await head(target);
  const lines = text.split('\n');
  if (!whole) lines.pop();
  const objects: unknown[] = [];
  let all = whole;
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (objects.length === OBJECTS) {
      all = false;
      break;
    }
    try {
      objects.push(JSON.parse(line));
    } catch {
      // not a JSON object: it names no columns
    }
  }
  return keysOf(objects, all);
}

/** The keys of the first objects of a JSON array: the document, or the array at `--json-path` (keys joined by dots). */
export async function jsonArrayKeys(target: LoadTarget): Promise<JsonKeys> {
  const { text, whole } = await head(target);
  const path = target.input?.jsonPath;
  if (path !== undefined) {
    if (!whole) throw new LoadError('bad-input', `${target.file}: the array at --json-path ${path} is described from documents up to ${HEAD_BYTES >> 20} MiB`);
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
