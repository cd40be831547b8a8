/**
 * region and nation: fixed rows, random comments.
 */
import type { GenContext } from './context.js';
import { NEWLINE, PIPE, writeUint, writeWord } from './byte-writer.js';
import { writeComment } from './fields.js';
import { STREAM } from './prng.js';

/** dbgen's R_CMNT_LEN and N_CMNT_LEN. */
const REGION_COMMENT = 72;
const NATION_COMMENT = 72;

export function writeRegionRow(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.region, row);
  pos = writeUint(buf, pos, row);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.regions[row]!);
  buf[pos++] = PIPE;
  pos = writeComment(ctx, rng, buf, pos, REGION_COMMENT);
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}

export function writeNationRow(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.nation, row);
  pos = writeUint(buf, pos, row);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.nations[row]!);
  buf[pos++] = PIPE;
  pos = writeUint(buf, pos, ctx.nationRegion[row]!);
  buf[pos++] = PIPE;
  pos = writeComment(ctx, rng, buf, pos, NATION_COMMENT);
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}
