/**
 * Field shapes several tables share: comments, addresses, phone numbers, balances.
 */
import type { GenContext } from './context.js';
import type { RowRng } from './prng.js';
import { PIPE, writeBytes, writeCents, writeUint, writeUintPadded, writeWord } from './byte-writer.js';

const DASH = 0x2d;

/**
 * A comment of the spec's length for an average `avg` (uniform in [0.4 avg, 1.6 avg], as
 * dbgen's TEXT does): a substring of the text pool at a random offset.
 */
export function writeComment(ctx: GenContext, rng: RowRng, buf: Uint8Array, pos: number, avg: number): number {
  const len = rng.int(Math.floor(avg * 0.4), Math.floor(avg * 1.6));
  const from = rng.int(0, ctx.pool.length - len);
  return writeBytes(buf, pos, ctx.pool, from, len);
}

/** dbgen's V_STR address: 10 to 40 random characters (average 25). */
export function writeAddress(ctx: GenContext, rng: RowRng, buf: Uint8Array, pos: number): number {
  const len = rng.int(10, 40);
  const chars = ctx.addressChars;
  const n = chars.length;
  for (let i = 0; i < len; i += 4) {
    // one 32-bit draw gives four characters
    let bits = rng.next();
    const stop = Math.min(len, i + 4);
    for (let j = i; j < stop; j++) {
      buf[pos + j] = chars[(bits & 0xff) % n]!;
      bits >>>= 8;
    }
  }
  return pos + len;
}

/** `CC-XXX-XXX-XXXX` with country code nationkey + 10. */
export function writePhone(rng: RowRng, buf: Uint8Array, pos: number, nationkey: number): number {
  pos = writeUint(buf, pos, nationkey + 10);
  buf[pos++] = DASH;
  pos = writeUint(buf, pos, rng.int(100, 999));
  buf[pos++] = DASH;
  pos = writeUint(buf, pos, rng.int(100, 999));
  buf[pos++] = DASH;
  return writeUint(buf, pos, rng.int(1000, 9999));
}

/** Account balances: -999.99 to 9999.99. */
export function writeAccountBalance(rng: RowRng, buf: Uint8Array, pos: number): number {
  return writeCents(buf, pos, rng.int(-99999, 999999));
}

/**
 * The first six fields customer and supplier rows share, each followed by `|`:
 * `key|Customer#000000001|address|nation|phone|acctbal|` (the name word passed in).
 */
export function writePartyHead(ctx: GenContext, rng: RowRng, buf: Uint8Array, pos: number, key: number, nameWord: Uint8Array): number {
  pos = writeUint(buf, pos, key);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, nameWord);
  pos = writeUintPadded(buf, pos, key, 9);
  buf[pos++] = PIPE;
  pos = writeAddress(ctx, rng, buf, pos);
  buf[pos++] = PIPE;
  const nation = rng.int(0, 24);
  pos = writeUint(buf, pos, nation);
  buf[pos++] = PIPE;
  pos = writePhone(rng, buf, pos, nation);
  buf[pos++] = PIPE;
  pos = writeAccountBalance(rng, buf, pos);
  buf[pos++] = PIPE;
  return pos;
}
