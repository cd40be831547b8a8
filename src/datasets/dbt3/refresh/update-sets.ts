/**
 * The refresh sets of `dbgen -U N`: for each set K, `orders.tbl.uK` and `lineitem.tbl.uK`
 * (new orders for RF1) and `delete.K` (the keys of orders RF2 deletes), byte for byte as
 * dbgen 2.x writes them (driver.c, build.c's mk_order, print.c's pr_order, pr_line and
 * pr_drange):
 *
 * - a set has 0.1 % of the orders: ⌊orders / 10 000⌋ × 10 rows (SF 1: 1 500);
 * - set K makes order rows (K−1)·n+1 … K·n of the update stream, whose random streams
 *   start where the base orders' end (set_state skips them past every base row);
 * - their keys are dbgen's sparse keys with sequence 1: the gaps (8 … 31 of every 32)
 *   the base keys leave, so they never meet a loaded order;
 * - `delete.K` holds the base keys of rows (K−1)·n+1 … K·n (sequence 0): loaded orders,
 *   from the start of the key space.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildDateTable, CURRENT_DAY, DATE_WIDTH } from '../dates.js';
import { dbt3Counts, partSupplier, retailPriceCents } from '../scale.js';
import { DbgenStreams, SD } from './dbgen-random.js';
import { cutFromPool, pick, picker, TEXT_POOL_SIZE, type PoolCut } from './dbgen-text.js';
import { INSTRUCT, O_OPRIO, RFLAG, SMODE } from './dists.js';

/** dss.h's UPD_PCT: update sets are 10 per 10 000 orders. */
const UPDATE_PER_10K = 10;
/** dbgen's key sparsity: 3 low bits kept, 2 bits of sequence above them. */
const KEEP = 8;
const SEQUENCES = 4;

/** Order rows in each refresh set: dbgen's ⌊base / 10 000⌋ × UPD_PCT (SF 0.01: 10; SF 1: 1 500). */
export function refreshSetRows(scale: number): number {
  return Math.floor(dbt3Counts(scale).orders / 10_000) * UPDATE_PER_10K;
}

/** build.c's mk_sparse: row `i` (1-based) with sequence `seq` (0: the base orders). */
export function sparseKey(i: number, seq: number): number {
  const low = i % KEEP;
  return ((i - low) / KEEP * SEQUENCES + seq) * KEEP + low;
}

/** The sequence of set `set`'s new orders (mk_order: 1 + set / 1000) and of its deletes (set / 1000). */
export function insertSequence(set: number): number {
  return 1 + Math.floor(set / 1000);
}

export function deleteSequence(set: number): number {
  return Math.floor(set / 1000);
}

interface Line {
  partkey: number;
  suppkey: number;
  quantity: number;
  eprice: number;
  discount: number;
  tax: number;
  rflag: string;
  lstatus: string;
  shipDay: number;
  commitDay: number;
  receiptDay: number;
  instruct: number;
  mode: number;
  comment: PoolCut;
}

interface Order {
  key: number;
  custkey: number;
  status: string;
  totalCents: number;
  orderDay: number;
  priority: number;
  clerk: number;
  comment: PoolCut;
  lines: Line[];
}

/** dss.h: the o_orderdate range (STARTDATE … the last day less the longest ship and receipt). */
const ORDER_DAYS = 2557 - (121 + 30) - 1;
const ORDER_COMMENT = { min: Math.trunc(49 * 0.4), max: Math.trunc(49 * 1.6) };
const LINE_COMMENT = { min: Math.trunc(27 * 0.4), max: Math.trunc(27 * 1.6) };

const PICK = { priority: picker(O_OPRIO), instruct: picker(INSTRUCT), mode: picker(SMODE), rflag: picker(RFLAG) };

function comment(s: DbgenStreams, range: { min: number; max: number }, stream: number): PoolCut {
  const offset = s.random(0, TEXT_POOL_SIZE - range.max, stream);
  return { offset, length: s.random(range.min, range.max, stream) };
}

/** build.c's mk_order for order row `index` of update set `set`, in its draw order. */
function drawOrder(s: DbgenStreams, index: number, set: number, counts: ReturnType<typeof dbt3Counts>): Order {
  const key = sparseKey(index, insertSequence(set));
  let custkey = s.random(1, counts.customer, SD.oCustkey);
  let delta = 1;
  while (custkey % 3 === 0) {
    custkey = Math.min(custkey + delta, counts.customer);
    delta = -delta;
  }
  const orderDay = s.random(0, ORDER_DAYS, SD.oDate);
  const priority = pick(s, PICK.priority, SD.oPriority);
  const clerk = s.random(1, counts.clerks, SD.oClerk);
  const orderComment = comment(s, ORDER_COMMENT, SD.oComment);
  const lineCount = s.random(1, 7, SD.oLineCount);
  const lines: Line[] = [];
  let total = 0;
  let shipped = 0;
  for (let l = 0; l < lineCount; l++) {
    const quantity = s.random(1, 50, SD.lQuantity);
    const discount = s.random(0, 10, SD.lDiscount);
    const tax = s.random(0, 8, SD.lTax);
    const instruct = pick(s, PICK.instruct, SD.lInstruct);
    const mode = pick(s, PICK.mode, SD.lShipMode);
    const lineComment = comment(s, LINE_COMMENT, SD.lComment);
    const partkey = s.random(1, counts.part, SD.lPartkey);
    const suppkey = partSupplier(partkey, s.random(0, 3, SD.lSuppkey), counts.supplier);
    const eprice = retailPriceCents(partkey) * quantity;
    total += Math.floor((Math.floor((eprice * (100 - discount)) / 100) * (100 + tax)) / 100);
    const shipDay = orderDay + s.random(1, 121, SD.lShipDate);
    const commitDay = orderDay + s.random(30, 90, SD.lCommitDate);
    const receiptDay = shipDay + s.random(1, 30, SD.lReceiptDate);
    const rflag = receiptDay <= CURRENT_DAY ? RFLAG[pick(s, PICK.rflag, SD.lReturnFlag)]![0] : 'N';
    if (shipDay <= CURRENT_DAY) shipped++;
    lines.push({ partkey, suppkey, quantity, eprice, discount, tax, rflag, lstatus: shipDay <= CURRENT_DAY ? 'F' : 'O', shipDay, commitDay, receiptDay, instruct, mode, comment: lineComment });
  }
  const status = shipped === lineCount ? 'F' : shipped > 0 ? 'P' : 'O';
  return { key, custkey, status, totalCents: total, orderDay, priority, clerk, comment: orderComment, lines };
}

/** One refresh set as dbgen writes it. */
export interface RefreshSet {
  readonly set: number;
  /** `orders.tbl.uK`, `lineitem.tbl.uK`, `delete.K`. */
  readonly orders: Buffer;
  readonly lineitem: Buffer;
  readonly deletes: Buffer;
  readonly orderRows: number;
  readonly lineitemRows: number;
  readonly deleteRows: number;
}

/** print.c's PR_MONEY: cents as dollars with two decimals. */
function money(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function formatSet(set: number, orders: readonly Order[], firstRow: number): RefreshSet {
  const dates = buildDateTable();
  const day = (d: number): string => dates.toString('latin1', d * DATE_WIDTH, (d + 1) * DATE_WIDTH);
  const text = (c: PoolCut): string => c.text!.toString('latin1');
  const o: string[] = [];
  const l: string[] = [];
  const d: string[] = [];
  for (const order of orders) {
    o.push(`${order.key}|${order.custkey}|${order.status}|${money(order.totalCents)}|${day(order.orderDay)}|${O_OPRIO[order.priority]![0]}|Clerk#${String(order.clerk).padStart(9, '0')}|0|${text(order.comment)}|\n`);
    order.lines.forEach((x, i) => {
      l.push(
        `${order.key}|${x.partkey}|${x.suppkey}|${i + 1}|${x.quantity}|${money(x.eprice)}|${money(x.discount)}|${money(x.tax)}|${x.rflag}|${x.lstatus}|` +
          `${day(x.shipDay)}|${day(x.commitDay)}|${day(x.receiptDay)}|${INSTRUCT[x.instruct]![0]}|${SMODE[x.mode]![0]}|${text(x.comment)}|\n`,
      );
    });
  }
  for (let i = 0; i < orders.length; i++) d.push(`${sparseKey(firstRow + i, deleteSequence(set))}|\n`);
  return {
    set,
    orders: Buffer.from(o.join(''), 'latin1'),
    lineitem: Buffer.from(l.join(''), 'latin1'),
    deletes: Buffer.from(d.join(''), 'latin1'),
    orderRows: o.length,
    lineitemRows: l.length,
    deleteRows: d.length,
  };
}

/**
 * Refresh sets 1 … `sets` of a scale factor, as `dbgen -s <scale> -U <sets>` writes them.
 * Makes dbgen's 300 MiB text pool once (a few seconds) for the comments.
 */
export function makeRefreshSets(scale: number, sets: number): RefreshSet[] {
  const counts = dbt3Counts(scale);
  const perSet = refreshSetRows(scale);
  if (perSet === 0) throw new Error(`Scale factor ${scale} has ${counts.orders} orders; dbgen's refresh sets need 10,000 or more (scale factor 0.007 and up)`);
  const streams = new DbgenStreams();
  streams.skipOrderRows(counts.orders);
  const drawn: Order[][] = [];
  const cuts: PoolCut[] = [];
  for (let set = 1; set <= sets; set++) {
    const orders: Order[] = [];
    for (let i = 0; i < perSet; i++) {
      streams.startRow();
      const order = drawOrder(streams, (set - 1) * perSet + 1 + i, set, counts);
      streams.stopRow();
      orders.push(order);
      cuts.push(order.comment, ...order.lines.map((x) => x.comment));
    }
    drawn.push(orders);
  }
  cutFromPool(streams, cuts);
  return drawn.map((orders, i) => formatSet(i + 1, orders, i * perSet + 1));
}

/** Write refresh sets 1 … `sets` into `outDir` under dbgen's names; returns the files. */
export async function writeRefreshSets(outDir: string, scale: number, sets: number): Promise<{ path: string; rows: number; bytes: number }[]> {
  await mkdir(outDir, { recursive: true });
  const files: { path: string; rows: number; bytes: number }[] = [];
  for (const s of makeRefreshSets(scale, sets)) {
    for (const [name, buf, rows] of [
      [`orders.tbl.u${s.set}`, s.orders, s.orderRows],
      [`lineitem.tbl.u${s.set}`, s.lineitem, s.lineitemRows],
      [`delete.${s.set}`, s.deletes, s.deleteRows],
    ] as const) {
      const file = path.join(outDir, name);
      await writeFile(file, buf);
      files.push({ path: file, rows, bytes: buf.length });
    }
  }
  return files;
}
