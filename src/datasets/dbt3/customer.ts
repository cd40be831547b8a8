/**
 * customer rows: `c_custkey|Customer#000000001|address|nation|phone|acctbal|segment|comment|`.
 */
import type { GenContext } from './context.js';
import { NEWLINE, PIPE, writeUint, writeUintPadded, writeWord } from './byte-writer.js';
import { writeAccountBalance, writeAddress, writeComment, writePhone } from './fields.js';
import { STREAM } from './prng.js';

/** dbgen's C_CMNT_LEN. */
const CUSTOMER_COMMENT = 73;

export function writeCustomerRow(ctx: GenContext, buf: Uint8Array, pos: number, row: number): number {
  const rng = ctx.rng.seed(ctx.seed, STREAM.customer, row);
  const key = row + 1;
  pos = writeUint(buf, pos, key);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.words.customer);
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
  pos = writeWord(buf, pos, ctx.segments[rng.int(0, 4)]!);
  buf[pos++] = PIPE;
  pos = writeComment(ctx, rng, buf, pos, CUSTOMER_COMMENT);
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}
