/**
 * orders and lineitem, from one draw per order: both tables read the same random numbers,
 * so o_totalprice and o_orderstatus agree with the order's lineitems whichever table is
 * written, in whichever slice.
 */
import type { GenContext } from './context.js';
import { NEWLINE, PIPE, writeBytes, writeCents, writeUint, writeUintPadded, writeWord } from './byte-writer.js';
import { CURRENT_DAY, DATE_WIDTH, MAX_ORDER_DAY } from './dates.js';
import { STREAM } from './prng.js';
import { CUSTOMER_MORTALITY, MAX_LINES_PER_ORDER, MIN_LINES_PER_ORDER, partSupplier, retailPriceCents, sparseOrderKey } from './scale.js';

/** dbgen's O_CMNT_LEN and L_CMNT_LEN. */
const ORDER_COMMENT = 49;
const LINE_COMMENT = 27;

const CHAR_F = 0x46;
const CHAR_O = 0x4f;
const CHAR_P = 0x50;
const CHAR_R = 0x52;
const CHAR_A = 0x41;
const CHAR_N = 0x4e;

/** One order and its lines, drawn; reused for every order (one per thread). */
export interface OrderDraw {
  key: number;
  custkey: number;
  orderDay: number;
  priority: number;
  clerk: number;
  commentLen: number;
  commentFrom: number;
  lines: number;
  totalCents: number;
  status: number;
  readonly partkey: Int32Array;
  readonly suppkey: Int32Array;
  readonly quantity: Int32Array;
  readonly extendedCents: Int32Array;
  readonly discount: Int32Array;
  readonly tax: Int32Array;
  readonly shipDay: Int32Array;
  readonly commitDay: Int32Array;
  readonly receiptDay: Int32Array;
  readonly returnFlag: Int32Array;
  readonly instruction: Int32Array;
  readonly shipMode: Int32Array;
  readonly lineCommentLen: Int32Array;
  readonly lineCommentFrom: Int32Array;
}

export function newOrderDraw(): OrderDraw {
  const lines = (): Int32Array => new Int32Array(MAX_LINES_PER_ORDER);
  return {
    key: 0, custkey: 0, orderDay: 0, priority: 0, clerk: 0, commentLen: 0, commentFrom: 0, lines: 0, totalCents: 0, status: 0,
    partkey: lines(), suppkey: lines(), quantity: lines(), extendedCents: lines(), discount: lines(), tax: lines(),
    shipDay: lines(), commitDay: lines(), receiptDay: lines(), returnFlag: lines(), instruction: lines(), shipMode: lines(),
    lineCommentLen: lines(), lineCommentFrom: lines(),
  };
}

/** Draw order `row` (0-based) into `o`. */
export function drawOrder(ctx: GenContext, o: OrderDraw, row: number): void {
  const rng = ctx.rng.seed(ctx.seed, STREAM.order, row);
  const { customer: customers, part: parts, supplier: suppliers, clerks } = ctx.counts;
  const poolLen = ctx.pool.length;
  o.key = sparseOrderKey(row + 1);
  // dbgen: step off customers that never order, alternately up and down
  let custkey = rng.int(1, customers);
  let delta = 1;
  while (custkey % CUSTOMER_MORTALITY === 0) {
    custkey = Math.min(custkey + delta, customers);
    delta = -delta;
  }
  o.custkey = custkey;
  const orderDay = rng.int(0, MAX_ORDER_DAY);
  o.orderDay = orderDay;
  o.priority = rng.int(0, 4);
  o.clerk = rng.int(1, clerks);
  let len = rng.int(Math.floor(ORDER_COMMENT * 0.4), Math.floor(ORDER_COMMENT * 1.6));
  o.commentLen = len;
  o.commentFrom = rng.int(0, poolLen - len);
  const lines = rng.int(MIN_LINES_PER_ORDER, MAX_LINES_PER_ORDER);
  o.lines = lines;
  let total = 0;
  let shipped = 0;
  for (let l = 0; l < lines; l++) {
    const partkey = rng.int(1, parts);
    o.partkey[l] = partkey;
    o.suppkey[l] = partSupplier(partkey, rng.int(0, 3), suppliers);
    const quantity = rng.int(1, 50);
    o.quantity[l] = quantity;
    const extended = quantity * retailPriceCents(partkey);
    o.extendedCents[l] = extended;
    const discount = rng.int(0, 10);
    o.discount[l] = discount;
    const tax = rng.int(0, 8);
    o.tax[l] = tax;
    const shipDay = orderDay + rng.int(1, 121);
    o.shipDay[l] = shipDay;
    o.commitDay[l] = orderDay + rng.int(30, 90);
    const receiptDay = shipDay + rng.int(1, 30);
    o.receiptDay[l] = receiptDay;
    const ra = rng.int(0, 1);
    o.returnFlag[l] = receiptDay <= CURRENT_DAY ? (ra === 0 ? CHAR_R : CHAR_A) : CHAR_N;
    o.instruction[l] = rng.int(0, 3);
    o.shipMode[l] = rng.int(0, 6);
    len = rng.int(Math.floor(LINE_COMMENT * 0.4), Math.floor(LINE_COMMENT * 1.6));
    o.lineCommentLen[l] = len;
    o.lineCommentFrom[l] = rng.int(0, poolLen - len);
    // dbgen's integer arithmetic in cents: truncate after the discount, then after the tax
    total += Math.floor((Math.floor((extended * (100 - discount)) / 100) * (100 + tax)) / 100);
    if (shipDay <= CURRENT_DAY) shipped++;
  }
  o.totalCents = total;
  o.status = shipped === lines ? CHAR_F : shipped === 0 ? CHAR_O : CHAR_P;
}

function writeDate(ctx: GenContext, buf: Uint8Array, pos: number, day: number): number {
  return writeBytes(buf, pos, ctx.dates, day * DATE_WIDTH, DATE_WIDTH);
}

/** Write a drawn order as an orders row. */
export function writeOrdersRow(ctx: GenContext, o: OrderDraw, buf: Uint8Array, pos: number): number {
  pos = writeUint(buf, pos, o.key);
  buf[pos++] = PIPE;
  pos = writeUint(buf, pos, o.custkey);
  buf[pos++] = PIPE;
  buf[pos++] = o.status;
  buf[pos++] = PIPE;
  pos = writeCents(buf, pos, o.totalCents);
  buf[pos++] = PIPE;
  pos = writeDate(ctx, buf, pos, o.orderDay);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.priorities[o.priority]!);
  buf[pos++] = PIPE;
  pos = writeWord(buf, pos, ctx.words.clerk);
  pos = writeUintPadded(buf, pos, o.clerk, 9);
  buf[pos++] = PIPE;
  buf[pos++] = 0x30; // o_shippriority is always 0
  buf[pos++] = PIPE;
  pos = writeBytes(buf, pos, ctx.pool, o.commentFrom, o.commentLen);
  buf[pos++] = PIPE;
  buf[pos++] = NEWLINE;
  return pos;
}

/** Write a drawn order's lines as lineitem rows. */
export function writeLineitemRows(ctx: GenContext, o: OrderDraw, buf: Uint8Array, pos: number): number {
  const key = o.key;
  for (let l = 0; l < o.lines; l++) {
    pos = writeUint(buf, pos, key);
    buf[pos++] = PIPE;
    pos = writeUint(buf, pos, o.partkey[l]!);
    buf[pos++] = PIPE;
    pos = writeUint(buf, pos, o.suppkey[l]!);
    buf[pos++] = PIPE;
    buf[pos++] = 0x31 + l; // linenumber 1..7
    buf[pos++] = PIPE;
    pos = writeCents(buf, pos, o.quantity[l]! * 100);
    buf[pos++] = PIPE;
    pos = writeCents(buf, pos, o.extendedCents[l]!);
    buf[pos++] = PIPE;
    pos = writeCents(buf, pos, o.discount[l]!);
    buf[pos++] = PIPE;
    pos = writeCents(buf, pos, o.tax[l]!);
    buf[pos++] = PIPE;
    buf[pos++] = o.returnFlag[l]!;
    buf[pos++] = PIPE;
    buf[pos++] = o.shipDay[l]! > CURRENT_DAY ? CHAR_O : CHAR_F;
    buf[pos++] = PIPE;
    pos = writeDate(ctx, buf, pos, o.shipDay[l]!);
    buf[pos++] = PIPE;
    pos = writeDate(ctx, buf, pos, o.commitDay[l]!);
    buf[pos++] = PIPE;
    pos = writeDate(ctx, buf, pos, o.receiptDay[l]!);
    buf[pos++] = PIPE;
    pos = writeWord(buf, pos, ctx.instructions[o.instruction[l]!]!);
    buf[pos++] = PIPE;
    pos = writeWord(buf, pos, ctx.shipModes[o.shipMode[l]!]!);
    buf[pos++] = PIPE;
    pos = writeBytes(buf, pos, ctx.pool, o.lineCommentFrom[l]!, o.lineCommentLen[l]!);
    buf[pos++] = PIPE;
    buf[pos++] = NEWLINE;
  }
  return pos;
}
