import type { Sample } from './series.js';

/**
 * How a time-sampled load keeps its series: samples start about `startMs` apart, and once more
 * than `maxSamples` are kept, every other one is dropped (two neighbouring intervals
 * become one) and the spacing doubles. A load of 4 s so gets ~30 points, any longer one
 * between 32 and 64, and the series never holds more than `maxSamples` + 1. Each sample is
 * a few queries on the server the load is busy with: 8 a second at the start cost its
 * backends about 1% (bench/sampling-overhead.ts); 40 a second cost 2.7%.
 */
export interface SampleSpacing {
  readonly startMs: number;
  readonly maxSamples: number;
}

export const DEFAULT_SPACING: SampleSpacing = { startMs: 125, maxSamples: 64 };

/** Fewer intervals than this make no curve: the report says the load was too short to draw one. */
export const MIN_CURVE_POINTS = 30;

/**
 * Every other sample dropped, the first and the last kept: each pair of neighbouring
 * intervals merged into one (samples are cumulative, so the merged interval's rates are
 * exactly those of the two together).
 */
export function halveSamples(samples: readonly Sample[]): Sample[] {
  if (samples.length <= 2) return [...samples];
  const kept = samples.filter((_, k) => k % 2 === 0);
  const last = samples.at(-1)!;
  if (kept.at(-1) !== last) kept.push(last);
  return kept;
}

/**
 * The last interval of a load is cut short by its end: a few commits in a few
 * milliseconds would read as a spike of rows/s. When it is shorter than half the one
 * before, the two are merged, so its rows count for its length and no more.
 */
export function weighLastInterval(samples: readonly Sample[]): Sample[] {
  if (samples.length < 3) return [...samples];
  const [a, b, c] = samples.slice(-3) as [Sample, Sample, Sample];
  if (c.seconds - b.seconds >= (b.seconds - a.seconds) / 2) return [...samples];
  return [...samples.slice(0, -2), c];
}

/**
 * A series sampled on a timer, kept at its spacing: `offer` each sample taken; the timer
 * should tick every `tickMs` (the smaller of the spacing and how often the listeners
 * want a sample), which doubles with the spacing when the series is halved.
 */
export class SpacedSeries {
  readonly samples: Sample[] = [];
  /** The spacing of the samples kept now, and the first one, ms. */
  spacingMs: number;
  readonly startMs: number;

  constructor(
    private readonly spacing: SampleSpacing,
    private readonly everyMs: number,
  ) {
    // `everyMs` halved until it is no more than `startMs`: once the spacing doubles past `everyMs` it stays a multiple of it (the timer's ticks)
    this.spacingMs = everyMs / 2 ** Math.max(0, Math.floor(Math.log2(everyMs / spacing.startMs)));
    this.startMs = this.spacingMs;
  }

  get tickMs(): number {
    return Math.min(this.spacingMs, this.everyMs);
  }

  /** Keeps the sample when it is due (half a tick's slack for the timer's jitter), or `always`. */
  offer(sample: Sample, always = false): void {
    const previous = this.samples.at(-1);
    if (!always && previous !== undefined && sample.seconds - previous.seconds < (this.spacingMs - this.tickMs / 2) / 1000) return;
    this.samples.push(sample);
    if (this.samples.length <= this.spacing.maxSamples) return;
    this.samples.splice(0, this.samples.length, ...halveSamples(this.samples));
    this.spacingMs *= 2;
  }

  /** At the load's end: the last, partial interval weighed by its length. */
  finish(): void {
    this.samples.splice(0, this.samples.length, ...weighLastInterval(this.samples));
  }
}

/** A sample whose streamed rows and bytes are still being added to (the sampler's own, until it stops). */
export type Streamed = Sample & { rowsStreamed?: number; bytesStreamed?: number };

/**
 * A chunk committed at `end` (seconds since the load started) whose rows were sent from
 * `start`: each sample taken in between counts the share of its rows and bytes that had
 * passed as streamed. Walks back from the newest sample, so its cost is the samples the
 * chunk spans.
 */
export function spreadChunk(samples: readonly Streamed[], chunk: { start: number; end: number; rows: number; bytes: number }): void {
  const { start, end } = chunk;
  if (end <= start) return;
  for (let k = samples.length - 1; k >= 0; k--) {
    const s = samples[k]!;
    if (s.seconds <= start) break;
    if (s.seconds >= end) continue;
    const share = (s.seconds - start) / (end - start);
    s.rowsStreamed = Math.round((s.rowsStreamed ?? s.rowsLoaded) + chunk.rows * share);
    s.bytesStreamed = Math.round((s.bytesStreamed ?? s.bytesLoaded) + chunk.bytes * share);
  }
}
