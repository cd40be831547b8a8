/**
 * part rows and their four partsupp rows.
 */
import type { GenContext } from './context.js';
import { NEWLINE, PIPE, writeCents, writeUint, writeWord } from './byte-writer.js';
import { writeComment } from './fields.js';
import { STREAM } from './prng.js';
import { partSupplier, retailPriceCents, SUPPLIERS_PER_PART } from './scale.js';

/** dbgen's P_CMNT_LEN and PS_CMNT_LEN. */
const PART_COMMENT = 14;
const PARTSUPP_COMMENT = 124;
const NAME_WORDS = 5;
const SPACE = 0x20;

const picked = new Int32Array(NAME_WORDS);

export function writePartRow(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.part, row);
  const key = row + 1;
  pos = writeUint(buf, pos, key);
  buf[pos++] = PIPE;
  // five distinct colours
  const colors = ctx.colors;
  for (let w = 0; w < NAME_WORDS; w++) {
    let c: number;
    let again: boolean;
    do {
      c = rng.int(0, colors.length - 1);
      again = false;
      for (let k = 0; k < w; k++) if (picked[k] === c) again = true;
    } while (again);
    picked[w] = c;
    if (w > 0) buf[pos++] = SPACE;
    pos = writeWord(buf, pos, colors[c]!);
  }
  buf[pos++] = PIPE;
  const mfgr = rng.int(1, 5);
  pos = writeWord(buf, pos, ctx.words.manufacturer);
  pos = writeUint(buf, pos, mfgr);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.words.brand);
  pos = writeUint(buf, pos, mfgr * 10 + rng.int(1, 5));
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.types[rng.int(0, ctx.types.length - 1)]!);
  buf[pos++] = PIPE;
  pos = writeUint(buf, pos, rng.int(1, 50));
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.containers[rng.int(0, ctx.containers.length - 1)]!);
  buf[pos++] = PIPE;
  pos = writeCents(buf, pos, retailPriceCents(key));
  buf[pos++] = PIPE;
  pos = writeComment(ctx, rng, buf, pos, PART_COMMENT);
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}

/** The four partsupp rows of part `row` (0-based). */
export function writePartsuppRows(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.partsupp, row);
  const key = row + 1;
  const suppliers = ctx.counts.supplier;
  for (let i = 0; i < SUPPLIERS_PER_PART; i++) {
    pos = writeUint(buf, pos, key);
    buf[pos++] = PIPE;
    pos = writeUint(buf, pos, partSupplier(key, i, suppliers));
    buf[pos++] = PIPE;
    pos = writeUint(buf, pos, rng.int(1, 9999));
    buf[pos++] = PIPE;
    pos = writeCents(buf, pos, rng.int(100, 100000));
    buf[pos++] = PIPE;
    pos = writeComment(ctx, rng, buf, pos, PARTSUPP_COMMENT);
    buf[pos++] = PIPE;
    buf[pos++] = NEWLINE;
  }
  return pos;
}
