/**
 * dbgen's random numbers, as TPC-H's dbgen 2.x draws them (rnd.c, speed_seed.c): Park and
 * Miller's minimal standard generator (x ← 16807·x mod 2³¹−1), one stream per column with
 * its own starting seed, each stream advanced by a fixed number of draws per row whatever
 * the row used (row_stop), and skipped ahead in O(log n) by powers of the multiplier
 * (NthElement). Only the streams of orders and lineitem and the text pool are here.
 */

const MODULUS = 2147483647;
const MULTIPLIER = 16807;

/** a·b mod 2³¹−1 for a, b below 2³¹, exact in doubles (b split in 16-bit halves). */
function mulMod(a: number, b: number): number {
  const hi = Math.floor(b / 65536);
  const lo = b % 65536;
  return (((a * hi) % MODULUS) * 65536 + a * lo) % MODULUS;
}

/** speed_seed.c's NthElement: the seed after `n` draws from `seed`. */
export function nthElement(n: number, seed: number): number {
  let mult = MULTIPLIER;
  let z = seed;
  while (n > 0) {
    if (n % 2 !== 0) z = mulMod(mult, z);
    n = Math.floor(n / 2);
    mult = mulMod(mult, mult);
  }
  return z;
}

/** The stream numbers of dss.h and shared.h that orders, lineitem and the text pool use. */
export const SD = {
  textPool: 5,
  oSupp: 10,
  oClerk: 11,
  oComment: 12,
  oDate: 13,
  lQuantity: 14,
  lDiscount: 15,
  lTax: 16,
  lInstruct: 17,
  lShipMode: 18,
  lPartkey: 19,
  lSuppkey: 20,
  lShipDate: 21,
  lCommitDate: 22,
  lReceiptDate: 23,
  lReturnFlag: 24,
  lComment: 25,
  oPriority: 38,
  hvar: 39,
  oCustkey: 40,
  oLineCount: 43,
} as const;

const LINES_MAX = 7;

/**
 * rnd.h's seed table for these streams: [stream, first seed, draws per order row]. The
 * draws per row are row_stop's boundaries: a lineitem stream moves 7 per order (one per
 * possible line), a comment stream 2 per comment (offset and length).
 */
const ORDER_STREAMS: readonly (readonly [number, number, number])[] = [
  [SD.oSupp, 1227283347, 1],
  [SD.oClerk, 1171034773, 1],
  [SD.oComment, 276090261, 2],
  [SD.oDate, 1066728069, 1],
  [SD.lQuantity, 209208115, LINES_MAX],
  [SD.lDiscount, 554590007, LINES_MAX],
  [SD.lTax, 721958466, LINES_MAX],
  [SD.lInstruct, 1371272478, LINES_MAX],
  [SD.lShipMode, 675466456, LINES_MAX],
  [SD.lPartkey, 1808217256, LINES_MAX],
  [SD.lSuppkey, 2095021727, LINES_MAX],
  [SD.lShipDate, 1769349045, LINES_MAX],
  [SD.lCommitDate, 904914315, LINES_MAX],
  [SD.lReceiptDate, 373135028, LINES_MAX],
  [SD.lReturnFlag, 717419739, LINES_MAX],
  [SD.lComment, 1095462486, LINES_MAX * 2],
  [SD.oPriority, 591449447, 1],
  [SD.hvar, 431918286, 1],
  [SD.oCustkey, 851767375, 1],
  [SD.oLineCount, 1434868289, 1],
];

const TEXT_POOL_SEED = 933588178;
const STREAM_COUNT = 48;

/** The streams' seeds and the draws each made in the current row. */
export class DbgenStreams {
  private readonly value = new Float64Array(STREAM_COUNT);
  private readonly usage = new Float64Array(STREAM_COUNT);

  constructor() {
    this.value[SD.textPool] = TEXT_POOL_SEED;
    for (const [stream, seed] of ORDER_STREAMS) this.value[stream] = seed;
  }

  /** Skip the order streams past `rows` order rows (sd_order and sd_line together). */
  skipOrderRows(rows: number): void {
    for (const [stream, , perRow] of ORDER_STREAMS) this.value[stream] = nthElement(rows * perRow, this.value[stream]!);
  }

  /** rnd.c's UnifInt: a draw from `stream`, uniform on [low, high]. */
  unifInt(low: number, high: number, stream: number): number {
    const v = (this.value[stream]! * MULTIPLIER) % MODULUS;
    this.value[stream] = v;
    return low + Math.floor((v / MODULUS) * (high - low + 1));
  }

  /** rnd.c's dss_random (the RANDOM macro): a draw that counts toward the row's usage. */
  random(low: number, high: number, stream: number): number {
    this.usage[stream]!++;
    return this.unifInt(low, high, stream);
  }

  /** row_start: no draws yet in this row. */
  startRow(): void {
    this.usage.fill(0);
  }

  /** row_stop: move every order stream on to its next row's start. */
  stopRow(): void {
    for (const [stream, , perRow] of ORDER_STREAMS) {
      const left = perRow - this.usage[stream]!;
      if (left > 0) this.value[stream] = nthElement(left, this.value[stream]!);
    }
  }
}
