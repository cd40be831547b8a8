/**
 * A small, strict JSON scanner over a string that keeps the source text of every value.
 * JSON.parse would turn 12345678901234567890 or 1.10 into a double and a nested object
 * into a JS object whose text is lost; PostgreSQL's json_populate_record keeps both (the
 * number's text goes to the column's input function, a json column stores the value's
 * text), so the scanner returns spans of the line instead of values.
 */

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    /** Index in the scanned string where the problem is. */
    readonly at: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** A member of the top-level object: its key and the span `[start, end)` of its value. */
export interface Member {
  readonly key: string;
  /** Where the key's opening quote is. */
  readonly keyAt: number;
  readonly start: number;
  readonly end: number;
}

const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const CONTROL = /[\u0000-\u001f]/;

export function skipSpace(s: string, at: number): number {
  for (; at < s.length; at++) {
    const c = s.charCodeAt(at);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
  }
  return at;
}

function describe(s: string, at: number): string {
  if (at >= s.length) return 'end of input';
  return `\`${s.slice(at, at + 12)}\``;
}

/** End of the string starting at the `"` at `at` (just past the closing quote); validates escapes. */
export function scanString(s: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const q = s.indexOf('"', i);
    const b = s.indexOf('\\', i);
    if (q < 0) throw new JsonSyntaxError('unterminated string', at);
    if (b >= 0 && b < q) {
      if (CONTROL.test(s.slice(i, b))) throw new JsonSyntaxError('control character in a string', i);
      const e = s.charAt(b + 1);
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(s.slice(b + 2, b + 6))) throw new JsonSyntaxError('bad \\u escape in a string', b);
        i = b + 6;
      } else if ('"\\/bfnrt'.includes(e) && e !== '') {
        i = b + 2;
      } else {
        throw new JsonSyntaxError(`bad escape \\${e} in a string`, b);
      }
      continue;
    }
    if (CONTROL.test(s.slice(i, q))) throw new JsonSyntaxError('control character in a string', i);
    return q + 1;
  }
}

/** The value of the string token `[start, end)`. */
export function stringValue(s: string, start: number, end: number): string {
  const inner = s.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(s.slice(start, end)) as string) : inner;
}

/** End of the value starting at `at` (no leading space); throws JsonSyntaxError on anything not JSON. */
export function scanValue(s: string, at: number, depth = 0): number {
  const c = s.charCodeAt(at);
  if (c === 0x22) return scanString(s, at);
  if (c === 0x7b || c === 0x5b) {
    if (depth >= MAX_DEPTH) throw new JsonSyntaxError(`nested deeper than ${MAX_DEPTH}`, at);
    const close = c === 0x7b ? 0x7d : 0x5d;
    let i = skipSpace(s, at + 1);
    if (s.charCodeAt(i) === close) return i + 1;
    for (;;) {
      if (c === 0x7b) {
        if (s.charCodeAt(i) !== 0x22) throw new JsonSyntaxError(`expected a key, found ${describe(s, i)}`, i);
        i = skipSpace(s, scanString(s, i));
        if (s.charCodeAt(i) !== 0x3a) throw new JsonSyntaxError(`expected \`:\`, found ${describe(s, i)}`, i);
        i = skipSpace(s, i + 1);
      }
      i = skipSpace(s, scanValue(s, i, depth + 1));
      const d = s.charCodeAt(i);
      if (d === close) return i + 1;
      if (d !== 0x2c) throw new JsonSyntaxError(`expected \`,\` or \`${String.fromCharCode(close)}\`, found ${describe(s, i)}`, i);
      i = skipSpace(s, i + 1);
    }
  }
  if (c === 0x74 && s.startsWith('true', at)) return at + 4;
  if (c === 0x66 && s.startsWith('false', at)) return at + 5;
  if (c === 0x6e && s.startsWith('null', at)) return at + 4;
  NUMBER.lastIndex = at;
  if (NUMBER.test(s) && NUMBER.lastIndex > at) return NUMBER.lastIndex;
  throw new JsonSyntaxError(`expected a JSON value, found ${describe(s, at)}`, at);
}

/**
 * The members of the object that is the whole of `s` (space around it allowed), in order.
 * Throws JsonSyntaxError when `s` is not exactly one JSON object.
 */
export function objectMembers(s: string): Member[] {
  let i = skipSpace(s, 0);
  if (s.charCodeAt(i) !== 0x7b) {
    if (i < s.length) scanValue(s, i); // a syntax error says so first
    throw new JsonSyntaxError(`expected a JSON object, found ${describe(s, i)}`, i);
  }
  const members: Member[] = [];
  i = skipSpace(s, i + 1);
  if (s.charCodeAt(i) === 0x7d) i++;
  else {
    for (;;) {
      if (s.charCodeAt(i) !== 0x22) throw new JsonSyntaxError(`expected a key, found ${describe(s, i)}`, i);
      const keyAt = i;
      const keyEnd = scanString(s, i);
      const key = stringValue(s, i, keyEnd);
      i = skipSpace(s, keyEnd);
      if (s.charCodeAt(i) !== 0x3a) throw new JsonSyntaxError(`expected \`:\`, found ${describe(s, i)}`, i);
      const start = skipSpace(s, i + 1);
      const end = scanValue(s, start, 1);
      members.push({ key, keyAt, start, end });
      i = skipSpace(s, end);
      const d = s.charCodeAt(i);
      if (d === 0x7d) {
        i++;
        break;
      }
      if (d !== 0x2c) throw new JsonSyntaxError(`expected \`,\` or \`}\`, found ${describe(s, i)}`, i);
      i = skipSpace(s, i + 1);
    }
  }
  i = skipSpace(s, i);
  if (i < s.length) throw new JsonSyntaxError(`unexpected ${describe(s, i)} after the object`, i);
  return members;
}

/** The elements of the (valid) array `[start, end)`: spans. */
export function arrayElements(s: string, start: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let i = skipSpace(s, start + 1);
  if (s.charCodeAt(i) === 0x5d) return out;
  for (;;) {
    const end = scanValue(s, i);
    out.push({ start: i, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) === 0x5d) return out;
    i = skipSpace(s, i + 1);
  }
}
