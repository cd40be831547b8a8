import { isUtf8 as isValidUtf8 } from 'node:buffer';

/**
 * Input encodings other than UTF-8 are converted on the client, before framing hands
 * records to a writer: every writer (COPY, INSERT) then sees UTF-8 and needs no option
 * of its own, JSON needs text on the client anyway, and the server's client_encoding
 * stays UTF8. Only encodings in which bytes 0x0A, 0x0D and 0x5C are always a newline, a
 * carriage return and a backslash are offered (no multi-byte character holds them), so
 * byte ranges and framers can still cut the raw bytes where COPY would.
 */
export const INPUT_ENCODINGS = ['UTF8', 'LATIN1', 'LATIN2', 'LATIN9', 'WIN1250', 'WIN1251', 'WIN1252', 'KOI8R'] as const;
export type InputEncoding = (typeof INPUT_ENCODINGS)[number];

/** PostgreSQL's names and their usual aliases. */
const ALIASES: Record<string, InputEncoding> = {
  utf8: 'UTF8',
  'utf-8': 'UTF8',
  latin1: 'LATIN1',
  'iso-8859-1': 'LATIN1',
  iso88591: 'LATIN1',
  latin2: 'LATIN2',
  'iso-8859-2': 'LATIN2',
  iso88592: 'LATIN2',
  latin9: 'LATIN9',
  'iso-8859-15': 'LATIN9',
  iso885915: 'LATIN9',
  win1250: 'WIN1250',
  'windows-1250': 'WIN1250',
  cp1250: 'WIN1250',
  win1251: 'WIN1251',
  'windows-1251': 'WIN1251',
  cp1251: 'WIN1251',
  win1252: 'WIN1252',
  'windows-1252': 'WIN1252',
  cp1252: 'WIN1252',
  koi8r: 'KOI8R',
  'koi8-r': 'KOI8R',
};

export function parseEncoding(name: string): InputEncoding | undefined {
  return ALIASES[name.trim().toLowerCase()];
}

/**
 * WHATWG labels for TextDecoder. Not for LATIN1 (TextDecoder's `latin1` means windows-1252)
 * nor WIN1252 (Node 20's TextDecoder decodes `windows-1252` as ISO-8859-1, losing € “ ” …):
 * both are done by hand below.
 */
const LABELS: Record<Exclude<InputEncoding, 'UTF8' | 'LATIN1' | 'WIN1252'>, string> = {
  LATIN2: 'iso-8859-2',
  LATIN9: 'iso-8859-15',
  WIN1250: 'windows-1250',
  WIN1251: 'windows-1251',
  KOI8R: 'koi8-r',
};

/** Windows-1252 bytes 0x80–0x9F (the rest is ISO-8859-1); the five unassigned bytes stay U+0081 … as WHATWG has them. */
const WIN1252_80_9F = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWin1252(bytes: Buffer): string {
  const latin1 = bytes.toString('latin1');
  return /[\u0080-\u009f]/.test(latin1) ? latin1.replace(/[\u0080-\u009f]/g, (c) => WIN1252_80_9F[c.charCodeAt(0) - 0x80]!) : latin1;
}

/** Thrown for bytes that are not valid UTF-8 where text must be decoded on the client (JSON). */
export class InvalidUtf8Error extends Error {
  constructor() {
    super('invalid UTF-8 (give --encoding if the input is not UTF-8)');
    this.name = 'InvalidUtf8Error';
  }
}

/**
 * Bytes in `encoding` → a string. Every byte of a single-byte encoding decodes; invalid
 * UTF-8 throws InvalidUtf8Error rather than turning into U+FFFD unseen, as the server
 * would refuse it in CSV or text input too.
 */
export function decoderFor(encoding: InputEncoding | undefined): (bytes: Buffer) => string {
  if (encoding === undefined || encoding === 'UTF8') {
    // isUtf8 (simdutf) then toString: as fast as toString alone, which would hide bad bytes.
    return (b) => {
      if (!isValidUtf8(b)) throw new InvalidUtf8Error();
      return b.toString('utf8');
    };
  }
  if (encoding === 'LATIN1') return (b) => b.toString('latin1');
  if (encoding === 'WIN1252') return decodeWin1252;
  const decoder = new TextDecoder(LABELS[encoding]);
  return (b) => decoder.decode(b);
}

export function isUtf8(encoding: InputEncoding | undefined): boolean {
  return encoding === undefined || encoding === 'UTF8';
}
