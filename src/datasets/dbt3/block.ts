/**
 * A block: the rows of one table for a range of driving rows (orders for lineitem, parts
 * for partsupp), written into one buffer. Blocks are the unit workers generate.
 */
import type { Dbt3Table } from '../dbt3-schema.js';
import type { GenContext } from './context.js';
import { writeCustomerRow } from './customer.js';
import { drawOrder, newOrderDraw, writeLineitemRows, writeOrdersRow } from './orders.js';
import { writePartRow, writePartsuppRows } from './part.js';
import { writeNationRow, writeRegionRow } from './small-tables.js';
import { writeSupplierRow } from './supplier.js';

/** Upper bound on the bytes one driving row can produce, per table. */
export const MAX_BYTES_PER_UNIT: Record<Dbt3Table, number> = {
  region: 256,
  nation: 256,
  supplier: 256,
  customer: 320,
  part: 256,
  partsupp: 4 * 256,
  orders: 256,
  lineitem: 7 * 192,
};

/** Driving rows per block: about 1 MB of output. */
export const BLOCK_UNITS: Record<Dbt3Table, number> = {
  region: 5,
  nation: 25,
  supplier: 8192,
  customer: 8192,
  part: 8192,
  partsupp: 2048,
  orders: 8192,
  lineitem: 2048,
};

export interface Block {
  readonly buf: Buffer;
  readonly rows: number;
}

const order = newOrderDraw();

/** Rows of `table` for driving rows [start, end), into a fresh buffer. */
export function writeBlock(ctx: GenContext, table: Dbt3Table, start: number, end: number): Block {
  const buf = Buffer.allocUnsafeSlow((end - start) * MAX_BYTES_PER_UNIT[table]);
  let pos = 0;
  let rows = end - start;
  switch (table) {
    case 'region':
      for (let r = start; r < end; r++) pos = writeRegionRow(ctx, buf, pos, r);
      break;
    case 'nation':
      for (let r = start; r < end; r++) pos = writeNationRow(ctx, buf, pos, r);
      break;
    case 'supplier':
      for (let r = start; r < end; r++) pos = writeSupplierRow(ctx, buf, pos, r);
      break;
    case 'customer':
      for (let r = start; r < end; r++) pos = writeCustomerRow(ctx, buf, pos, r);
      break;
    case 'part':
      for (let r = start; r < end; r++) pos = writePartRow(ctx, buf, pos, r);
      break;
    case 'partsupp':
      for (let r = start; r < end; r++) pos = writePartsuppRows(ctx, buf, pos, r);
      rows *= 4;
      break;
    case 'orders':
      for (let r = start; r < end; r++) {
        drawOrder(ctx, order, r);
        pos = writeOrdersRow(ctx, order, buf, pos);
      }
      break;
    case 'lineitem':
      rows = 0;
      for (let r = start; r < end; r++) {
        drawOrder(ctx, order, r);
        pos = writeLineitemRows(ctx, order, buf, pos);
        rows += order.lines;
      }
      break;
  }
  return { buf: buf.subarray(0, pos), rows };
}
