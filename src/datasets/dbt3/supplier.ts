/**
 * supplier rows: `s_suppkey|Supplier#000000001|address|nation|phone|acctbal|comment|`.
 */
import type { GenContext } from './context.js';
import { NEWLINE, PIPE, writeWord } from './byte-writer.js';
import { writeComment, writePartyHead } from './fields.js';
import { STREAM } from './prng.js';

/** dbgen's S_CMNT_LEN. */
const SUPPLIER_COMMENT = 63;
/** dbgen's S_CMNT_BBB: per 10,000 suppliers, this many mention customer complaints or recommendations (TPC-H Q16). */
const BBB_PER_10000 = 10;
const BBB_LENGTH = 19;

export function writeSupplierRow(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.supplier, row);
  const key = row + 1;
  pos = writePartyHead(ctx, rng, buf, pos, key, ctx.words.supplier);
  const commentStart = pos;
  pos = writeComment(ctx, rng, buf, pos, SUPPLIER_COMMENT);
  if (rng.int(1, 10000) <= BBB_PER_10000) {
    // overwrite part of the comment, keeping its length, as dbgen does
    const words = rng.int(0, 1) === 0 ? ctx.words.complaints : ctx.words.recommends;
    const at = commentStart + rng.int(0, pos - commentStart - BBB_LENGTH);
    writeWord(buf, at, words);
  }
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}
