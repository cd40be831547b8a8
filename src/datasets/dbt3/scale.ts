/**
 * Row counts and key rules of TPC-H's dbgen, as pure functions of the scale factor.
 */
import type { Dbt3Table } from '../dbt3-schema.js';

/** Rows per unit of scale factor (TPC-H spec 4.2.5). */
const BASE_ROWS = {
  supplier: 10_000,
  customer: 150_000,
  part: 200_000,
  orders: 1_500_000,
} as const;

export const SUPPLIERS_PER_PART = 4;
export const MIN_LINES_PER_ORDER = 1;
export const MAX_LINES_PER_ORDER = 7;
/** Customers whose key is a multiple of this never place orders (dbgen's CUST_MORTALITY). */
export const CUSTOMER_MORTALITY = 3;

export interface Dbt3Counts {
  readonly scale: number;
  readonly region: number;
  readonly nation: number;
  readonly supplier: number;
  readonly customer: number;
  readonly part: number;
  /** partsupp rows: 4 per part. */
  readonly partsupp: number;
  readonly orders: number;
  /** Number of distinct clerks (dbgen: 1000 × SF, at least 1000). */
  readonly clerks: number;
}

/** dbgen rounds fractional scale factors down; every table keeps at least one row. */
function scaled(base: number, scale: number): number {
  // the epsilon keeps 0.29 × 10000 = 2899.9999… from rounding down to 2899
  return Math.max(1, Math.floor(base * scale + 1e-7));
}

export function dbt3Counts(scale: number): Dbt3Counts {
  const part = scaled(BASE_ROWS.part, scale);
  return {
    scale,
    region: 5,
    nation: 25,
    supplier: scaled(BASE_ROWS.supplier, scale),
    customer: scaled(BASE_ROWS.customer, scale),
    part,
    partsupp: part * SUPPLIERS_PER_PART,
    orders: scaled(BASE_ROWS.orders, scale),
    clerks: Math.max(1000, Math.floor(1000 * scale + 1e-7)),
  };
}

/**
 * dbgen's mk_sparse: order keys use 8 of every 32 numbers, so the refresh functions have
 * room to insert. Row index i (1-based) → key. Multiplications, not shifts: keys pass 2^31
 * from SF 358 up.
 */
export function sparseOrderKey(i: number): number {
  const low = i % 8;
  return (i - low) * 4 + low;
}

/**
 * dbgen's PART_SUPP_BRIDGE: the supplier of the `i`-th (0..3) partsupp row of a part.
 * lineitem uses the same formula, so every (l_partkey, l_suppkey) is a partsupp row.
 */
export function partSupplier(partkey: number, i: number, suppliers: number): number {
  return ((partkey + i * (Math.floor(suppliers / 4) + Math.floor((partkey - 1) / suppliers))) % suppliers) + 1;
}

/** p_retailprice in cents (TPC-H 4.2.3). */
export function retailPriceCents(partkey: number): number {
  return 90000 + (Math.floor(partkey / 10) % 20001) + 100 * (partkey % 1000);
}

/**
 * True when the partsupp formula gives every part four distinct suppliers at this scale.
 * It does at the spec's scale factors and at 0.01 and up, but not at every tiny one
 * (SF 0.001 has 10 suppliers and collides), and a duplicate would break partsupp's key.
 */
export function partsuppKeysUnique(counts: Dbt3Counts): boolean {
  const s = counts.supplier;
  if (s < SUPPLIERS_PER_PART) return false;
  const maxBlock = Math.floor((counts.part - 1) / s);
  for (let block = 0; block <= maxBlock; block++) {
    const step = Math.floor(s / 4) + block;
    for (let d = 1; d < SUPPLIERS_PER_PART; d++) if ((d * step) % s === 0) return false;
  }
  return true;
}

/**
 * The unit a table is generated and sliced by: lineitem goes with its orders and partsupp
 * with its parts, so a slice of lineitem holds whole orders.
 */
export function drivingRows(table: Dbt3Table, counts: Dbt3Counts): number {
  switch (table) {
    case 'lineitem':
      return counts.orders;
    case 'partsupp':
      return counts.part;
    default:
      return counts[table];
  }
}

/** Rows of driving unit [start, end) for slice `part` (1-based) of `parts`. */
export function sliceRange(total: number, parts: number, part: number): { start: number; end: number } {
  return {
    start: Math.floor((total * (part - 1)) / parts),
    end: Math.floor((total * part) / parts),
  };
}
