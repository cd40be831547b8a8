/**
 * Runs variants interleaved (A B C A B C …), `repeat` rounds, each after `reset`, checking
 * the rows loaded; returns each variant's rows/s per round, so ratios can pair runs of one round.
 */
export async function interleave(
  variants: Record<string, () => Promise<number>>,
  options: { repeat: number; rows: number; reset: () => Promise<void>; count: () => Promise<number> },
): Promise<Record<string, number[]>> {
  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let round = 1; round <= options.repeat; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      await options.reset();
      const seconds = await fn();
      const count = await options.count();
      if (count !== options.rows) throw new Error(`${name} loaded ${count} rows, expected ${options.rows}`);
      rates[name]!.push(options.rows / seconds);
      console.log(`round ${round} ${name.padEnd(12)} ${seconds.toFixed(2)} s  ${Math.round(options.rows / seconds).toLocaleString('en-US')} rows/s`);
    }
  }
  return rates;
}
