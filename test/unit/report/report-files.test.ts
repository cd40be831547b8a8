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
import { countLabel, drawReport, timeAxis, windowedRates } from '../../../src/report/html-page-script.js';
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
    assert.ok(merged.notes.includes('copy, random keys (2): knee at 2M'), merged.notes.join(' | '));
    assert.equal(reportProblem(JSON.parse(JSON.stringify(merged))), undefined);
    assert.equal(mergeReports([a]), a);
    assert.throws(() => mergeReports([]), /no reports/);
  });

  it('series of one name in several reports are named after their reports (`pgsurge report w1.json w2.json`)', () => {
    const one = (rate: number): LoadReport => ({ ...fixture(), series: [makeSeries('lineitem.tbl', samples(40, rate))], notes: [`${rate}`] });
    const merged = mergeReports([one(1000), one(2000), { ...fixture(), series: [makeSeries('orders.tbl', samples(40, 5))] }], undefined, ['w1', 'w2', 'orders']);
    assert.deepEqual(merged.series.map((s) => s.name), ['lineitem.tbl (w1)', 'lineitem.tbl (w2)', 'orders.tbl']);
    assert.equal(merged.series[0]!.settings.command, 'pgsurge decay --db postgresql://u:***@h/db', 'each series keeps the command that made it');
    assert.deepEqual(merged.notes.slice(0, 2), ['lineitem.tbl (w1): 1000', 'lineitem.tbl (w2): 2000']);
  });

  it('a series of fewer than 30 intervals is flagged too short, and every chart says so under its title', () => {
    const report = fixture();
    assert.deepEqual(report.series.map((s) => s.tooShort), [true, true]);
    assert.equal(makeSeries('long', samples(31, 10)).tooShort, undefined, '30 intervals make a curve');
    const configs: any[] = [];
    class FakeChart {
      constructor(_canvas: unknown, config: unknown) {
        configs.push(config);
      }
    }
    drawReport(FakeChart, JSON.parse(JSON.stringify(report)), { getElementById: (id: string) => ({ id }) } as unknown as Document);
    for (const c of configs) assert.match(c.options.plugins.subtitle.text, /^too short for a curve: copy, random keys, 5 intervals over 7\.5 s; /);
    const long: LoadReport = { ...report, series: [makeSeries('long', samples(31, 10))] };
    configs.length = 0;
    drawReport(FakeChart, JSON.parse(JSON.stringify(long)), { getElementById: (id: string) => ({ id }) } as unknown as Document);
    for (const c of configs) assert.equal(c.options.plugins.subtitle.display, false);
  });

  it('the run panel puts a long value (the command, the target) under its name, so neither squeezes the other', async () => {
    const report = { ...fixture(), command: ['pgsurge', 'dbt3', 'load', 'sf1', '--replace', '-w', '2', '--report', 'load.html'], settings: { max_parallel_maintenance_workers_per_build: 2 } };
    const html = await reportHtml(report, '/* no chart.js */');
    assert.match(html, /<tr><th colspan="2">command<\/th><\/tr><tr><td class="long" colspan="2">pgsurge dbt3 load sf1 --replace -w 2 --report load.html<\/td><\/tr>/);
    assert.match(html, /<tr><th>max_parallel_maintenance_workers_per_build<\/th><td>2<\/td><\/tr>/);
    assert.match(html, /aside table \{[^}]*table-layout: fixed/);
  });
});

describe('chart axes and lines', () => {
  it('time ticks are 1, 2 or 5 × 10^k seconds apart with the decimals they need, m:ss from two minutes', () => {
    const labels = (max: number): string[] => {
      const a = timeAxis(max);
      const out: string[] = [];
      for (let v = 0; v <= max + a.stepSize / 2; v += a.stepSize) out.push(a.label(v));
      return out;
    };
    assert.equal(timeAxis(1.1).stepSize, 0.2);
    assert.deepEqual(labels(1.1), ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0', '1.2']);
    assert.equal(timeAxis(0.3).stepSize, 0.05);
    assert.equal(new Set(labels(0.3)).size, labels(0.3).length, 'no label twice');
    assert.equal(timeAxis(2).stepSize, 0.5);
    assert.equal(timeAxis(60).stepSize, 10);
    assert.equal(timeAxis(100).stepSize, 15);
    assert.equal(timeAxis(600).stepSize, 120);
    assert.deepEqual(labels(600).slice(0, 3), ['0:00', '2:00', '4:00']);
    assert.match(timeAxis(600).title, /m:ss/);
    assert.equal(timeAxis(3600).stepSize, 600);
    assert.deepEqual(labels(3600).slice(-2), ['50:00', '1:00:00']);
    assert.match(timeAxis(3600).title, /h:mm:ss/);
  });

  it('a timer-sampled series is drawn as rows/s over neighbouring intervals (their rows over their seconds), each interval faint beside it', () => {
    // chunks commit in steps: intervals of 0, 1 or 2 commits
    const intervals = [0, 8000, 0, 16000, 8000, 0, 8000].map((rows, k) => ({ rows, seconds: 0.05, endSeconds: 0.05 * (k + 1), rowsPerSecond: rows / 0.05 }));
    const w = windowedRates(intervals, 1, (i) => i.endSeconds);
    assert.deepEqual(w.map((p) => Math.round(p.y)), [80_000, 53_333, 160_000, 160_000, 160_000, 106_667, 80_000]);
    const configs: any[] = [];
    class FakeChart {
      constructor(_canvas: unknown, config: unknown) {
        configs.push(config);
      }
    }
    const timed = makeSeries('lineitem.tbl', samples(40, 1000), { settings: {}, spacing: { startMs: 31.25, finalMs: 62.5 } });
    drawReport(FakeChart, JSON.parse(JSON.stringify({ ...fixture(), series: [timed] })), { getElementById: (id: string) => ({ id }) } as unknown as Document);
    const time = configs[1];
    assert.deepEqual(time.data.datasets.map((d: any) => d.label), ['lineitem.tbl (over 3 intervals)', 'lineitem.tbl (each interval)']);
    // row buckets (decay): one line, each bucket's rate
    configs.length = 0;
    drawReport(FakeChart, JSON.parse(JSON.stringify({ ...fixture(), series: [makeSeries('decay', samples(40, 1000))] })), { getElementById: (id: string) => ({ id }) } as unknown as Document);
    assert.deepEqual(configs[1].data.datasets.map((d: any) => d.label), ['decay']);
  });

  it('count ticks carry the decimals of their step, never the same label twice', () => {
    assert.deepEqual([1_000_000, 1_020_000, 1_040_000].map((v) => countLabel(v, 20_000)), ['1M', '1.02M', '1.04M']);
    assert.deepEqual([0, 200_000, 400_000, 1_200_000].map((v) => countLabel(v, 200_000)), ['0', '200k', '400k', '1.2M']);
    assert.deepEqual([0, 0.5, 1, 1.5].map((v) => countLabel(v, 0.5)), ['0', '0.5', '1', '1.5']);
    assert.deepEqual([2_500_000_000].map((v) => countLabel(v, 500_000_000)), ['2.5G']);
  });
});
