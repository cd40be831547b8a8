import { promises as fs } from 'node:fs';
import { formatCount } from '../core/format-count.js';
import { createRequire } from 'node:module';
import path from 'node:path';
import { drawReport, PAGE_FUNCTIONS } from './html-page-script.js';
import type { LoadReport, SettingValue } from './report-data.js';

/** The element that holds the report object inside the page; tests and other programs read it back. */
export const REPORT_DATA_ID = 'pgsurge-report';

/** Chart.js's UMD build, read from node_modules when a report is written, so the page needs no network. */
export async function chartJsSource(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('chart.js');
  const source = await fs.readFile(path.join(path.dirname(entry), 'chart.umd.min.js'), 'utf8');
  // no source map to fetch, and nothing that could close the <script> early
  return source.replace(/\/\/# sourceMappingURL=\S+\s*$/, '').replace(/<\/script/gi, '<\\/script');
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON that is safe inside `<script type="application/json">`. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Reads the report object back out of a page written by `reportHtml`. */
export function reportFromHtml(html: string): unknown {
  const m = new RegExp(`<script type="application/json" id="${REPORT_DATA_ID}">([\\s\\S]*?)</script>`).exec(html);
  if (!m) throw new Error('no report data in this HTML');
  return JSON.parse(m[1]!);
}

const showValue = (v: SettingValue): string => (v === null ? '—' : typeof v === 'number' ? (Number.isInteger(v) ? formatCount(v) : String(v)) : String(v));

/** Values longer than this get the panel's whole width, under their name (a command line, a URL). */
const LONG_VALUE = 32;

/** Name and value side by side; a long value on its own line under its name, so neither squeezes the other. */
function table(rows: readonly (readonly [string, string])[]): string {
  const row = ([k, v]: readonly [string, string]): string =>
    v.length > LONG_VALUE ? `<tr><th colspan="2">${escapeHtml(k)}</th></tr><tr><td class="long" colspan="2">${escapeHtml(v)}</td></tr>` : `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`;
  return `<table>${rows.map(row).join('')}</table>`;
}

/** The page's side panel: run settings, server and its settings, machine, per-series settings. */
function sidePanel(report: LoadReport): string {
  const gb = (b: number): string => `${(b / 1024 ** 3).toFixed(1)} GB`;
  const parts = [
    `<h2>Run</h2>${table([['command', report.command.join(' ')], ['when', report.createdAt], ['target', report.target], ...Object.entries(report.settings).map(([k, v]) => [k, showValue(v)] as const)])}`,
    `<h2>Server</h2>${table([['version', report.server.version], ...Object.entries(report.server.settings)])}`,
    `<h2>Machine</h2>${table([['CPU', report.machine.cpuModel], ['cores', String(report.machine.cores)], ['memory', gb(report.machine.memoryBytes)], ['OS', report.machine.os], ['Node', report.machine.node], ['load average', report.machine.loadAverage?.join(' ') ?? '—']])}`,
  ];
  for (const s of report.series) {
    // only what differs from the run's settings
    const rows: [string, string][] = Object.entries(s.settings).filter(([k, v]) => report.settings[k] !== v).map(([k, v]) => [k, showValue(v)]);
    if (s.server) rows.push(['shared_buffers', s.server.settings.shared_buffers ?? '']);
    for (const p of s.phases ?? []) rows.push([`${p.phase} (s)`, p.seconds.toFixed(1)]);
    if (rows.length > 0) parts.push(`<h2>${escapeHtml(s.name)}</h2>${table(rows)}`);
  }
  return parts.join('\n');
}

/** A single self-contained HTML file: Chart.js inlined, the report object embedded, charts drawn on load. */
export async function reportHtml(report: LoadReport, chartJs?: string): Promise<string> {
  const lib = chartJs ?? (await chartJsSource());
  const notes = report.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(report.title)}</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1f2328; background: #fff; }
  header { padding: 12px 20px; border-bottom: 1px solid #d0d7de; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  h2 { font-size: 14px; margin: 16px 0 4px; }
  .note { margin: 2px 0; }
  main { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 16px; padding: 12px 20px; }
  .charts { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 16px; align-self: start; }
  .chart { position: relative; height: 340px; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px; }
  aside table { border-collapse: collapse; width: 100%; font-size: 12px; table-layout: fixed; }
  aside th { text-align: left; font-weight: 600; padding: 2px 6px 2px 0; vertical-align: top; width: 50%; overflow-wrap: anywhere; }
  aside td { padding: 2px 0; overflow-wrap: anywhere; }
  aside td.long { padding: 0 0 4px 10px; font-family: ui-monospace, monospace; font-size: 11px; }
  #errors { color: #d1242f; white-space: pre-wrap; }
  @media (max-width: 1100px) { main, .charts { grid-template-columns: minmax(0, 1fr); } }
</style>
</head>
<body data-charts="0">
<header><h1>${escapeHtml(report.title)}</h1>
${notes}
<div id="errors"></div></header>
<main>
<section class="charts">
  <div class="chart"><canvas id="decay"></canvas></div>
  <div class="chart"><canvas id="time"></canvas></div>
  <div class="chart"><canvas id="wal"></canvas></div>
  <div class="chart"><canvas id="size"></canvas></div>
${report.series.map((s, k) => (s.intervals.some((i) => i.waits) ? `  <div class="chart"><canvas id="waits-${k}"></canvas></div>\n` : '')).join('')}${report.series.some((s) => (s.timeline ?? []).length > 0) ? `<div class="chart gantt" style="grid-column: 1 / -1; height: ${Math.max(240, 60 + 18 * Math.max(...report.series.map((s) => (s.timeline ?? []).length)))}px"><canvas id="timeline"></canvas></div>` : ''}
</section>
<aside>
${sidePanel(report)}
</aside>
</main>
<script type="application/json" id="${REPORT_DATA_ID}">${embedJson(report)}</script>
<script>
${lib}
</script>
<script>
(function () {
${PAGE_FUNCTIONS.map((f) => f.toString()).join('\n')}
  try {
    var report = JSON.parse(document.getElementById(${JSON.stringify(REPORT_DATA_ID)}).textContent);
    var drawn = ${drawReport.name}(window.Chart, report, document);
    document.body.setAttribute('data-charts', String(drawn));
  } catch (e) {
    document.getElementById('errors').textContent = 'could not draw the charts: ' + e;
    throw e;
  }
})();
</script>
</body>
</html>
`;
}
