import { median } from './machine.js';

/**
 * Runs each variant once per round, in the same order every round (A B C A B C …), the
 * table reset before each run and its row count checked after; returns rows/s per variant
 * and the median of pairwise ratios (round i of A against round i of B).
 */
export async function runInterleaved(
  variants: Readonly<Record<string, () => Promise<number>>>,
  options: { repeat: number; rows: number; reset: () => Promise<void>; count: () => Promise<number> },
): Promise<{ rates: Record<string, number[]>; ratio: (a: string, b: string) => number }> {
  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const width = Math.max(12, ...Object.keys(variants).map((k) => k.length));
  for (let round = 1; round <= options.repeat; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      await options.reset();
      const seconds = await fn();
      const count = await options.count();
      if (count !== options.rows) throw new Error(`${name} loaded ${count} rows, expected ${options.rows}`);
      rates[name]!.push(options.rows / seconds);
      console.log(`round ${round} ${name.padEnd(width)} ${seconds.toFixed(2)} s  ${Math.round(options.rows / seconds).toLocaleString('en-US')} rows/s`);
    }
  }
  console.log(`\n${'variant'.padEnd(width)}  median rows/s`);
  for (const [name, values] of Object.entries(rates)) console.log(`${name.padEnd(width)} ${Math.round(median(values)).toLocaleString('en-US').padStart(14)}`);
  return { rates, ratio: (a, b) => median(rates[a]!.map((v, i) => v / rates[b]![i]!)) };
}
