/**
 * The code that runs inside the HTML report: draws the charts with Chart.js from the
 * report object embedded in the page. Its functions are inlined with
 * `Function.prototype.toString` (PAGE_FUNCTIONS, in report-html.ts), so each stays
 * self-contained: no imports, no outside names but its arguments and the others here.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export function drawReport(Chart: any, report: any, doc: Document): number {
  const palette = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7ea4', '#57606a'];
  const MB = 1024 * 1024;
  const series: any[] = report.series;
  // one line per distinct shared_buffers among the series (merged reports may differ)
  const buffers: { value: number; color: string; label: string }[] = [];
  for (const s of series) {
    const server = s.server || report.server;
    const bytes = server && server.sharedBuffersBytes ? server.sharedBuffersBytes / MB : 0;
    if (bytes > 0 && !buffers.some((b) => b.value === bytes)) buffers.push({ value: bytes, color: '#57606a', label: 'shared_buffers ' + (server.settings.shared_buffers || '') });
  }

  const markers = markersPlugin();

  const line = lineDataset;

  // Axes of counts label each tick with the decimals its step needs (1.02M, 1.04M: never 1.0M twice).
  const countTicks = { callback: (v: number, _i: number, ticks: any[]) => countLabel(v, ticks.length > 1 ? Math.abs(ticks[1].value - ticks[0].value) : Math.abs(v)) };
  const longest = Math.max(0, ...series.flatMap((s) => s.intervals.map((i: any) => i.endSeconds)));
  // Series with fewer intervals than a curve needs: every chart says so under its title.
  const short = series.filter((s) => s.tooShort);
  const shortText = short.length === 0 ? '' : 'too short for a curve: ' + short.map((s) => (series.length > 1 ? s.name + ', ' : '') + s.intervals.length + ' intervals over ' + (s.samples.length > 0 ? s.samples[s.samples.length - 1].seconds.toFixed(1) : '0') + ' s').join('; ');

  const chart = (id: string, title: string, xTitle: string, yTitle: string, datasets: any[], markerOpts: any = {}, xAxis: any = { ticks: countTicks }, yTicks: any = countTicks, extraScales: any = {}): void => {
    const canvas = doc.getElementById(id) as HTMLCanvasElement;
    new Chart(canvas, {
      type: 'line',
      data: { datasets },
      plugins: [markers],
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        normalized: true,
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: { type: 'linear', title: { display: true, text: xTitle }, ...xAxis },
          y: { type: 'linear', beginAtZero: true, title: { display: true, text: yTitle }, ticks: yTicks },
          ...extraScales,
        },
        plugins: {
          title: { display: true, text: title, font: { size: 15 } },
          subtitle: { display: shortText !== '', text: shortText, color: '#9a6700', font: { size: 12 } },
          legend: { display: true, position: 'bottom' },
          pgsurgeMarkers: markerOpts,
        },
      },
    });
  };

  const color = (k: number): string => palette[k % palette.length] as string;
  const knees = series.flatMap((s, k) => (s.knee ? [{ value: s.knee.toRows, color: color(k), label: 'knee' }] : []));

  // A timer's short intervals hold a chunk commit or two each: rows/s over a few neighbours drawn bold, each interval's faint.
  const rates = (x: (i: any) => number): any[] =>
    series.flatMap((s, k) => {
      const each = s.intervals.map((i: any) => ({ x: x(i), y: i.rowsPerSecond }));
      if (!s.spacing || s.intervals.length < 10) return [line(s.name, color(k), each)];
      const half = Math.max(1, Math.round(s.intervals.length / 40));
      return [
        { ...line(s.name + ' (over ' + (2 * half + 1) + ' intervals)', color(k), windowedRates(s.intervals, half, x)), pointRadius: 0 },
        { ...line(s.name + ' (each interval)', color(k) + '66', each), borderWidth: 1, pointRadius: 0 },
      ];
    });
  // on a rows axis, a timer's sample sits at the rows streamed by then (rows in the table step at each commit)
  const atRows = (i: any): number => (i.toRowsStreamed === undefined ? i.toRows : i.toRowsStreamed);
  chart('decay', 'Rows/s against rows in the table (the decay curve)', 'rows in the table', 'rows/s', rates(atRows), { vertical: knees });
  const time = timeAxis(longest);
  chart(
    'time',
    'Rows/s against time',
    time.title,
    'rows/s',
    rates((i) => i.endSeconds),
    {},
    { min: 0, ticks: { stepSize: time.stepSize, callback: time.label } },
  );
  chart(
    'wal',
    'WAL bytes per row',
    'rows in the table',
    'WAL bytes / row',
    series.map((s, k) =>
      line(s.name, color(k), s.intervals.filter((i: any) => i.walBytesPerRow !== undefined && i.walBytesPerRow !== null).map((i: any) => ({ x: atRows(i), y: i.walBytesPerRow }))),
    ),
  );
  chart(
    'size',
    'Table and index size against rows in the table',
    'rows in the table',
    'MB',
    series.flatMap((s, k) => [
      line(s.name + ': table (heap)', color(k), s.samples.map((p: any) => ({ x: p.rowsInTable - p.rowsLoaded + (p.rowsStreamed === undefined ? p.rowsLoaded : p.rowsStreamed), y: p.heapBytes / MB })), true),
      line(s.name + ': indexes', color(k), s.samples.map((p: any) => ({ x: p.rowsInTable - p.rowsLoaded + (p.rowsStreamed === undefined ? p.rowsLoaded : p.rowsStreamed), y: p.indexBytes / MB }))),
    ]),
    { vertical: knees, horizontal: buffers },
  );

  // Where the backends' time went, per interval, stacked, against the table's growth; rows/s on the right axis.
  const classColors: Record<string, string> = { cpu: '#1a7f37', client: '#8c959f', wal: '#d1242f', extension: '#9a6700', dataRead: '#8250df', dataWrite: '#bf3989', buffer: '#0a7ea4', checkpoint: '#fb8500', lock: '#57606a', other: '#d0d7de' };
  const classLabels: Record<string, string> = { cpu: 'on CPU', client: 'waiting for pgsurge', wal: 'WAL', extension: 'extension lock', dataRead: 'data file reads', dataWrite: 'data file writes', buffer: 'buffer contention', checkpoint: 'checkpoints', lock: 'locks', other: 'other waits' };
  let drawn = 4;
  series.forEach((s, k) => {
    if (!doc.getElementById('waits-' + k)) return;
    const withWaits = s.intervals.filter((i: any) => i.waits);
    if (withWaits.length === 0) return;
    const classes = Object.keys(classColors).filter((c) => withWaits.some((i: any) => (i.waits[c] || 0) >= 0.005));
    const areas = classes.map((c) => ({
      label: classLabels[c],
      data: withWaits.map((i: any) => ({ x: atRows(i), y: 100 * (i.waits[c] || 0) })),
      borderColor: classColors[c],
      backgroundColor: classColors[c] + 'cc',
      borderWidth: 1,
      pointRadius: 0,
      fill: true,
      stack: 'waits',
      yAxisID: 'y',
      tension: 0,
    }));
    const rate = { ...line('rows/s', '#1f2328', s.intervals.map((i: any) => ({ x: atRows(i), y: i.rowsPerSecond }))), yAxisID: 'y2', fill: false, stack: 'rate', order: -1 };
    chart(
      'waits-' + k,
      "Where the server's time went" + (series.length > 1 ? ' — ' + s.name : '') + ', beside rows/s',
      'rows in the table',
      "% of looks at the load's backends",
      [...areas, rate],
      { vertical: s.knee ? [{ value: s.knee.toRows, color: '#1f2328', label: 'knee' }] : [] },
      { ticks: countTicks },
      { callback: (v: number) => String(v) },
      {
        y: { type: 'linear', stacked: true, min: 0, max: 100, title: { display: true, text: "% of looks at the load's backends" } },
        y2: { type: 'linear', position: 'right', beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: 'rows/s' }, ticks: countTicks },
      },
    );
    drawn++;
  });

  // dbt3 load: each table's load and each build as a floating bar from its start to its end (a Gantt chart).
  const timed = series.find((s) => Array.isArray(s.timeline) && s.timeline.length > 0);
  const canvas = doc.getElementById('timeline') as HTMLCanvasElement | null;
  if (!timed || !canvas) return drawn;
  drawTimeline(Chart, canvas, timed.timeline, color, timeAxis(Math.max(0, ...timed.timeline.map((b: any) => b.end))));
  return drawn + 1;
}

/**
 * Rows/s over each interval and its `half` neighbours on either side: their rows over
 * their seconds (a rate over a longer time, not an average of rates).
 */
export function windowedRates(intervals: any[], half: number, x: (i: any) => number): { x: number; y: number }[] {
  return intervals.map((i, k) => {
    const around = intervals.slice(Math.max(0, k - half), k + half + 1);
    const seconds = around.reduce((a, j) => a + j.seconds, 0);
    return { x: x(i), y: seconds > 0 ? around.reduce((a, j) => a + j.rowsPerSecond * j.seconds, 0) / seconds : 0 };
  });
}

/** A count's tick label with the decimals its axis's step needs, in k, M or G: 1.02M, 250k, 0.5. */
export function countLabel(v: number, step: number): string {
  const size = Math.max(Math.abs(v), Math.abs(step));
  const [div, unit] = size >= 1e9 ? [1e9, 'G'] : size >= 1e6 ? [1e6, 'M'] : size >= 1e3 ? [1e3, 'k'] : [1, ''];
  const decimals = step > 0 ? Math.min(4, Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9))) : 0;
  let text = (v / div).toFixed(decimals);
  if (text.indexOf('.') >= 0) text = text.replace(/\.?0+$/, '');
  return (text === '-0' ? '0' : text) + (text === '0' ? '' : unit);
}

/**
 * A time axis up to `maxSeconds`: ticks 1, 2 or 5 × 10^k seconds apart (10, 15, 20 or 30 s
 * past ten seconds, whole minutes past a minute), labelled in seconds, or m:ss (h:mm:ss)
 * on axes of two minutes and more.
 */
export function timeAxis(maxSeconds: number): { stepSize: number; label: (v: number) => string; title: string } {
  const target = Math.max(maxSeconds, 0.001) / 8;
  let step: number;
  if (target >= 60) step = [60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600].find((m) => m >= target) ?? Math.ceil(target / 3600) * 3600;
  else if (target > 5) step = [10, 15, 20, 30, 60].find((m) => m >= target)!;
  else {
    const p = Math.pow(10, Math.floor(Math.log10(target)));
    step = [1, 2, 5, 10].map((m) => m * p).find((m) => m >= target * (1 - 1e-9))!;
  }
  const decimals = step < 1 ? Math.ceil(-Math.log10(step) - 1e-9) : 0;
  const clock = maxSeconds >= 120;
  const two = (n: number): string => (n < 10 ? '0' : '') + n;
  const label = (v: number): string => {
    if (!clock) return v.toFixed(decimals);
    const t = Math.round(v);
    const h = Math.floor(t / 3600);
    const m = Math.floor((t % 3600) / 60);
    return h > 0 ? h + ':' + two(m) + ':' + two(t % 60) : m + ':' + two(t % 60);
  };
  return { stepSize: step, label, title: clock ? 'time since the load started (' + (maxSeconds >= 3600 ? 'h:mm:ss' : 'm:ss') + ')' : 'seconds since the load started' };
}

/** The charts' plugin: vertical lines at each series' knee, horizontal ones at shared_buffers, drawn after the datasets. */
function markersPlugin(): any {
  return {
    id: 'pgsurgeMarkers',
    afterDatasetsDraw(chart: any, _args: unknown, opts: any) {
      const { ctx, chartArea, scales } = chart;
      ctx.save();
      ctx.setLineDash([6, 4]);
      ctx.lineWidth = 1.5;
      ctx.font = '12px sans-serif';
      for (const m of opts.vertical || []) {
        const x = scales.x.getPixelForValue(m.value);
        if (x < chartArea.left || x > chartArea.right) continue;
        ctx.strokeStyle = m.color;
        ctx.fillStyle = m.color;
        ctx.beginPath();
        ctx.moveTo(x, chartArea.top);
        ctx.lineTo(x, chartArea.bottom);
        ctx.stroke();
        ctx.fillText(m.label, x + 4, chartArea.top + 14);
      }
      (opts.horizontal || []).forEach((m: any, k: number) => {
        const y = scales.y.getPixelForValue(m.value);
        if (y < chartArea.top || y > chartArea.bottom) return;
        ctx.strokeStyle = m.color;
        ctx.fillStyle = m.color;
        ctx.beginPath();
        ctx.moveTo(chartArea.left, y);
        ctx.lineTo(chartArea.right, y);
        ctx.stroke();
        // alternate sides, so two nearby lines keep readable labels
        const width = ctx.measureText(m.label).width;
        ctx.fillText(m.label, k % 2 === 0 ? chartArea.left + 6 : chartArea.right - width - 6, y - 4);
      });
      ctx.restore();
    },
  };
}

/** One series as a Chart.js line dataset. */
function lineDataset(label: string, color: string, points: { x: number; y: number }[], dashed = false): any {
  return {
    label,
    data: points,
    borderColor: color,
    backgroundColor: color,
    borderWidth: 2,
    borderDash: dashed ? [5, 4] : [],
    pointRadius: points.length > 30 || dashed ? 0 : 2.5,
    tension: 0,
  };
}

/** dbt3 load: each table's load and each build as a floating bar from its start to its end (a Gantt chart). */
function drawTimeline(Chart: any, canvas: HTMLCanvasElement, bars: any[], color: (k: number) => string, time: { stepSize: number; label: (v: number) => string; title: string }): void {
  const kinds = ['load', 'primary key', 'index', 'foreign key', 'analyze'];
  new Chart(canvas, {
    type: 'bar',
    data: {
      labels: bars.map((b) => b.task),
      datasets: kinds.map((kind, k) => ({
        label: kind,
        data: bars.map((b) => (b.kind === kind ? [b.start, b.end] : null)),
        backgroundColor: color(k),
        borderColor: bars.map((b) => (b.failed ? '#d1242f' : color(k))),
        borderWidth: bars.map((b) => (b.failed ? 2 : 0)),
        barPercentage: 0.9,
        categoryPercentage: 1,
        grouped: false,
      })),
    },
    options: {
      indexAxis: 'y',
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: {
        x: { type: 'linear', beginAtZero: true, title: { display: true, text: time.title }, ticks: { stepSize: time.stepSize, callback: time.label } },
        y: { ticks: { autoSkip: false, font: { size: 11 } } },
      },
      plugins: {
        title: { display: true, text: 'Where the time went: each table\'s load and each key and index build', font: { size: 15 } },
        legend: { display: true, position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (item: any) => {
              const b = bars[item.dataIndex];
              return b ? b.start.toFixed(2) + '–' + b.end.toFixed(2) + ' s (' + (b.end - b.start).toFixed(2) + ' s): ' + b.statement : '';
            },
          },
        },
      },
    },
  });
}

/** The page's functions, inlined in this order; the page calls `drawReport` by the name it has here. */
export const PAGE_FUNCTIONS: readonly ((...args: any[]) => unknown)[] = [drawReport, markersPlugin, lineDataset, drawTimeline, countLabel, timeAxis, windowedRates];
