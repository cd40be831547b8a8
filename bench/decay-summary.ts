/**
 * One markdown table row per saved decay report, for the README:
 *
 *   node dist/bench/decay-summary.js <report.json...>
 *
 * Columns: the series, rows/s early (median of buckets 2–4), over the last 3 buckets and
 * on average, the knee (or the lowest share of the early level), the load and index-build
 * seconds, WAL bytes per row, index blocks read from outside shared_buffers, final sizes,
 * and the machine's load average when the run ended.
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import { earlyLevel, lowestShare, median } from '../src/metrics/series.js';
import type { LoadReport } from '../src/report/report-data.js';

const count = (n: number): string => Math.round(n).toLocaleString('en-US');
const mb = (b: number): string => `${(b / 2 ** 20).toFixed(0)}`;
const rows: string[] = [
  '| run | shared_buffers | early rows/s | last 3 buckets rows/s | average rows/s | knee | load s | index build s | WAL B/row | index blocks read | table MB | index MB | load avg |',
  '| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const file of process.argv.slice(2)) {
  const report = JSON.parse(await fs.readFile(file, 'utf8')) as LoadReport;
  for (const s of report.series) {
    const iv = s.intervals;
    const last = s.samples.at(-1)!;
    const early = earlyLevel(iv) ?? 0;
    const tail = median(iv.slice(-3).map((i) => i.rowsPerSecond)) ?? 0;
    const low = lowestShare(iv);
    const knee = s.knee ? `at ${(s.knee.toRows / 1e6).toFixed(2)}M rows (${(100 * s.knee.share).toFixed(0)}%)` : `none (lowest ${low ? (100 * low.share).toFixed(0) : '-'}%)`;
    const phase = (name: string): string => s.phases?.find((p) => p.phase === name)?.seconds.toFixed(1) ?? '-';
    rows.push(
      `| ${report.settings.keys} keys, index ${report.settings.index} | ${(s.server ?? report.server).settings.shared_buffers} | ${count(early)} | ${count(tail)} | ${count(last.rowsLoaded / last.seconds)} | ${knee} | ${phase('load')} | ${phase('build unique key')} | ${(last.walBytes / last.rowsLoaded).toFixed(0)} | ${count(last.indexBlocksRead)} | ${mb(s.finalSizes?.heapBytes ?? last.heapBytes)} | ${mb(s.finalSizes?.indexBytes ?? last.indexBytes)} | ${report.machine.loadAverage?.[0] ?? '-'} |`,
    );
  }
}
process.stdout.write(`${rows.join('\n')}\n`);
