/**
 * customer rows: `c_custkey|Customer#000000001|address|nation|phone|acctbal|segment|comment|`.
 */
import type { GenContext } from './context.js';
import { NEWLINE, PIPE, writeWord } from './byte-writer.js';
import { writeComment, writePartyHead } from './fields.js';
import { STREAM } from './prng.js';

/** dbgen's C_CMNT_LEN. */
const CUSTOMER_COMMENT = 73;

export function writeCustomerRow(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.customer, row);
  const key = row + 1;
  pos = writePartyHead(ctx, rng, buf, pos, key, ctx.words.customer);
  pos = writeWord(buf, pos, ctx.segments[rng.int(0, 4)]!);
  buf[pos++] = PIPE;
  pos = writeComment(ctx, rng, buf, pos, CUSTOMER_COMMENT);
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}
