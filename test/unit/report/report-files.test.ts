/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Sample } from '../../../src/metrics/series.js';
import { intervalsOf } from '../../../src/metrics/series.js';
import { CSV_COLUMNS, reportCsv } from '../../../src/report/report-csv.js';
import { makeReport, makeSeries, mergeReports, redactArgv, reportProblem, type LoadReport } from '../../../src/report/report-data.js';
import { reportFromHtml, reportHtml } from '../../../src/report/report-html.js';
import { drawReport } from '../../../src/report/html-page-script.js';
import { reportKind, writeReport } from '../../../src/report/write-report.js';
import { redactUrl } from '../../../src/cluster/target.js';

function samples(n: number, rate: number): Sample[] {
  return Array.from({ length: n }, (_, k) => ({
    seconds: k * 1.5,
    rowsLoaded: Math.round(k * 1.5 * rate),
    bytesLoaded: Math.round(k * 1.5 * rate * 45),
    rowsInTable: 1000 + Math.round(k * 1.5 * rate),
    heapBytes: 8192 * k * 10,
    indexBytes: 8192 * k * 4,
    walBytes: k * 1.5 * rate * 120,
    checkpointsTimed: 0,
    checkpointsRequested: Math.floor(k / 3),
    heapBlocksRead: k,
    heapBlocksHit: 10 * k,
    indexBlocksRead: 2 * k,
    indexBlocksHit: 20 * k,
    clientCpuSeconds: k * 0.3,
  }));
}

function fixture(): LoadReport {
  return makeReport({
    title: 'a test <report> & "quotes"',
    command: ['pgsurge', 'decay', '--db', 'postgresql://u:***@h/db'],
    settings: { rows: 1000, keys: 'random', freeze: false, note: null },
    target: 'postgresql://u:***@h/db',
    server: { version: 'PostgreSQL 18.4 on x86_64', versionNum: 180004, settings: { shared_buffers: '128MB', fsync: 'on' }, sharedBuffersBytes: 128 * 1024 * 1024 },
    series: [
      makeSeries('copy, random keys', samples(6, 1000), { settings: { keys: 'random' }, knee: null }),
      makeSeries('copy, "sequential" </script> keys', samples(4, 3000), { settings: { keys: 'sequential' } }),
    ],
    notes: ['no knee: <b>not bold</b>'],
    createdAt: '2026-11-30T07:00:00.000Z',
    machine: { cpuModel: 'Test CPU', cores: 2, memoryBytes: 2 ** 34, os: 'Linux', node: 'v20' },
  });
}

describe('report files', () => {
  it('JSON: the schema other programs read', () => {
    const r = JSON.parse(JSON.stringify(fixture())) as Record<string, unknown>;
    assert.deepEqual(Object.keys(r).sort(), ['command', 'createdAt', 'format', 'machine', 'notes', 'series', 'server', 'settings', 'target', 'title', 'version']);
    assert.equal(r.format, 'pgsurge-report');
    assert.equal(r.version, 1);
    const series = r.series as { name: string; samples: unknown[]; intervals: unknown[]; settings: unknown }[];
    assert.equal(series.length, 2);
    assert.equal(series[0]!.samples.length, 6);
    assert.equal(series[0]!.intervals.length, 5);
    assert.deepEqual(series[0]!.intervals, JSON.parse(JSON.stringify(intervalsOf(samples(6, 1000)))));
    assert.deepEqual(Object.keys(series[0]!.samples[0] as object).sort(), [...CSV_COLUMNS.slice(1, 15)].sort());
    assert.equal(reportProblem(r), undefined);
  });

  it('JSON: a file that is not a report is refused with the reason', () => {
    assert.match(reportProblem([]) ?? '', /not a pgsurge report/);
    assert.match(reportProblem({ format: 'pgsurge-report', version: 9, series: [] }) ?? '', /version 9/);
    assert.match(reportProblem({ format: 'pgsurge-report', version: 1 }) ?? '', /no "series"/);
    assert.match(reportProblem({ format: 'pgsurge-report', version: 1, series: [{ name: 'x' }] }) ?? '', /without "name" or "samples"/);
  });

  it('CSV: the header, one row per sample per series, rates empty on each series\' first row', () => {
    const csv = reportCsv(fixture());
    const lines = csv.trimEnd().split('\n');
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    assert.deepEqual(CSV_COLUMNS, [
      'series', 'seconds', 'rowsLoaded', 'bytesLoaded', 'rowsInTable', 'heapBytes', 'indexBytes', 'walBytes', 'checkpointsTimed', 'checkpointsRequested',
      'heapBlocksRead', 'heapBlocksHit', 'indexBlocksRead', 'indexBlocksHit', 'clientCpuSeconds',
      'rowsPerSecond', 'mbPerSecond', 'walBytesPerRow', 'checkpoints', 'indexHitRatio', 'clientCpu',
    ]);
    assert.equal(lines.length, 1 + 6 + 4);
    assert.equal(lines[1], 'copy, random keys,0,0,0,1000,0,0,0,0,0,0,0,0,0,0,,,,,,'.replace('copy, random keys', '"copy, random keys"'));
    const second = lines[2]!.split(',').slice(2); // the name holds a comma
    assert.equal(second[0], '1.5');
    assert.equal(second[CSV_COLUMNS.indexOf('rowsPerSecond') - 1], '1000');
    assert.equal(second[CSV_COLUMNS.indexOf('walBytesPerRow') - 1], '120');
    assert.ok(lines[7]!.startsWith('"copy, ""sequential"" </script> keys",0,'));
  });

  it('HTML: one self-contained file whose embedded data equals the JSON', async () => {
    const report = fixture();
    const html = await reportHtml(report);
    assert.deepEqual(reportFromHtml(html), JSON.parse(JSON.stringify(report)));
    assert.match(html, /Chart\.js v4/);
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|https?:\/\/[^"'\s]*\.(js|css)\b|sourceMappingURL/);
    assert.equal((html.match(/<\/script>/g) ?? []).length, 3, 'exactly three script elements closed: data, library, drawing');
    assert.match(html, /<title>a test &lt;report&gt; &amp; &quot;quotes&quot;<\/title>/);
    assert.match(html, /no knee: &lt;b&gt;not bold&lt;\/b&gt;/);
    for (const id of ['decay', 'time', 'wal', 'size']) assert.match(html, new RegExp(`<canvas id="${id}">`));
    assert.match(html, /<th>shared_buffers<\/th><td>128MB<\/td>/);
  });

  it('dbt3 load: a series with a timeline gets a Gantt chart, one floating bar per task from its start to its end', async () => {
    const base = fixture();
    const timeline = [
      { task: 'load lineitem', kind: 'load', table: 'lineitem', start: 0, end: 4, statement: 'COPY "lineitem" FROM STDIN' },
      { task: 'primary key lineitem', kind: 'primary key', table: 'lineitem', start: 4, end: 5.5, statement: 'ALTER TABLE "lineitem" ADD PRIMARY KEY ("l_orderkey", "l_linenumber")' },
      { task: 'index i_l_shipdate', kind: 'index', table: 'lineitem', start: 5.5, end: 6, statement: 'CREATE INDEX …', failed: true },
    ];
    const report: LoadReport = { ...base, series: [{ ...base.series[0]!, timeline }] };
    const html = await reportHtml(report);
    assert.match(html, /<canvas id="timeline">/);
    assert.doesNotMatch(await reportHtml(base), /<canvas id="timeline">/, 'no timeline, no Gantt chart');
    // Draw it with a stand-in for Chart.js that keeps each chart's configuration.
    const configs: any[] = [];
    class FakeChart {
      constructor(_canvas: unknown, config: unknown) {
        configs.push(config);
      }
    }
    const doc = { getElementById: (id: string) => ({ id }) } as unknown as Document;
    assert.equal(drawReport(FakeChart, JSON.parse(JSON.stringify(report)), doc), 5);
    // The page's own drawing script, as inlined (its functions by Function.prototype.toString), draws the same charts.
    const script = [...html.matchAll(/<script>\n([\s\S]*?)<\/script>/g)].at(-1)![1]!;
    const inPage: any[] = [];
    class PageChart {
      constructor(_canvas: unknown, config: unknown) {
        inPage.push(config);
      }
    }
    const attributes: Record<string, string> = {};
    const pageDoc = {
      getElementById: (id: string) => (id === 'pgsurge-report' ? { textContent: JSON.stringify(report) } : { id }),
      body: { setAttribute: (k: string, v: string) => (attributes[k] = v) },
    };
    new Function('window', 'document', script)({ Chart: PageChart }, pageDoc);
    assert.equal(attributes['data-charts'], '5', 'the page drew its five charts');
    assert.deepEqual(JSON.parse(JSON.stringify(inPage)), JSON.parse(JSON.stringify(configs)), 'the same charts as drawReport draws');
    const gantt = configs.at(-1);
    assert.equal(gantt.type, 'bar');
    assert.equal(gantt.options.indexAxis, 'y');
    assert.deepEqual(gantt.data.labels, timeline.map((t) => t.task));
    const byKind = Object.fromEntries(gantt.data.datasets.map((d: any) => [d.label, d.data]));
    assert.deepEqual(byKind['primary key'], [null, [4, 5.5], null]);
    assert.deepEqual(byKind.load, [[0, 4], null, null]);
    assert.equal(gantt.data.datasets.find((d: any) => d.label === 'index').borderWidth[2], 2, 'a failed task is outlined');
  });

  it('writes by extension and refuses others', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-report-'));
    try {
      const report = fixture();
      const json = await writeReport(path.join(dir, 'r.json'), report);
      const csv = await writeReport(path.join(dir, 'r.csv'), report);
      const html = await writeReport(path.join(dir, 'r.HTML'), report);
      assert.deepEqual(JSON.parse(await fs.readFile(json, 'utf8')), JSON.parse(JSON.stringify(report)));
      assert.equal(await fs.readFile(csv, 'utf8'), reportCsv(report));
      assert.deepEqual(reportFromHtml(await fs.readFile(html, 'utf8')), JSON.parse(await fs.readFile(json, 'utf8')));
      await assert.rejects(writeReport(path.join(dir, 'r.txt'), report), /use \.json, \.csv or \.html/);
      assert.equal(reportKind('x.htm'), 'html');
      assert.equal(reportKind('x'), undefined);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('the command line in a report never shows a password', () => {
    assert.deepEqual(redactArgv(['load', '--db', 'postgresql://me:secret@h/db', '--db=postgres://a:pw@h/x'], redactUrl), ['load', '--db', 'postgresql://me:***@h/db', '--db=postgres://a:***@h/x']);
  });

  it('merges several reports into one with N series: common settings on top, the rest per series', () => {
    const a = fixture();
    const b: LoadReport = {
      ...fixture(),
      settings: { ...fixture().settings, keys: 'sequential' },
      server: { ...fixture().server, settings: { shared_buffers: '16MB' }, sharedBuffersBytes: 16 * 1024 * 1024 },
      series: [fixture().series[0]!],
      notes: ['knee at 2M'],
    };
    const merged = mergeReports([a, b], 'overlay');
    assert.equal(merged.title, 'overlay');
    assert.deepEqual(merged.settings, { rows: 1000, freeze: false, note: null });
    assert.deepEqual(merged.series.map((s) => s.name), ['copy, random keys', 'copy, "sequential" </script> keys', 'copy, random keys (2)']);
    assert.deepEqual(merged.series.map((s) => s.settings.keys), ['random', 'sequential', 'random'], "a series' own settings win over its run's");
    assert.equal(merged.series[2]!.server?.settings.shared_buffers, '16MB');
    assert.equal(merged.series[0]!.server?.settings.shared_buffers, '128MB');
    assert.deepEqual(merged.series[2]!.samples, b.series[0]!.samples);
    assert.ok(merged.notes.includes('copy, random keys: knee at 2M'));
    assert.equal(reportProblem(JSON.parse(JSON.stringify(merged))), undefined);
    assert.equal(mergeReports([a]), a);
    assert.throws(() => mergeReports([]), /no reports/);
  });
});
