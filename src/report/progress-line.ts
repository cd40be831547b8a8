import type { LoadReporter } from '../load.js';
import { MB, perSecond } from '../metrics/rates.js';
import { formatCount } from '../cli/summary-format.js';

/**
 * A progress line on stderr every `everyMs`: on a terminal it rewrites itself in place,
 * elsewhere it is one plain line per interval. Stdout stays for results.
 */
export function progressLine(stream: NodeJS.WriteStream = process.stderr, everyMs = 2000): LoadReporter & { finish(): void } {
  let rows = 0;
  let bytes = 0;
  let totalBytes: number | undefined;
  let started = 0;
  let lastPrint = 0;
  let printed = false;
  const tty = stream.isTTY === true;

  const print = (now: number): void => {
    const seconds = (now - started) / 1000;
    const pct = totalBytes ? ` ${((100 * bytes) / totalBytes).toFixed(1)}%` : '';
    const line = `loaded ${formatCount(rows)} rows${pct}, ${(bytes / MB).toFixed(0)} MB, ${formatCount(perSecond(rows, seconds))} rows/s, ${(perSecond(bytes, seconds) / MB).toFixed(1)} MB/s`;
    stream.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
    printed = true;
  };

  return {
    start(info) {
      totalBytes = info.totalBytes;
      started = performance.now();
      lastPrint = started;
    },
    chunkLoaded(info) {
      rows += info.rows;
      bytes += info.chunk.location.byteLength;
      const now = performance.now();
      if (now - lastPrint >= everyMs) {
        lastPrint = now;
        print(now);
      }
    },
    finish() {
      if (printed && tty) stream.write('\r\x1b[K');
    },
  };
}
