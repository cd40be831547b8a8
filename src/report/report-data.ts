import os from 'node:os';
import type { Knee } from '../metrics/series.js';
import { intervalsOf, type Interval, type Sample } from '../metrics/series.js';
import { MIN_CURVE_POINTS } from '../metrics/sample-spacing.js';
import type { ServerFacts } from '../metrics/server-snapshot.js';
import type { Diagnosis } from '../diagnose/diagnose-load.js';

/**
 * A load report: what ran, where, and the series of samples. Holds N named series, so
 * variants of one experiment (`pgsurge compare`, decay runs) overlay on the same axes.
 * Saved as JSON (this object), CSV (the series) or HTML (charts with this object inside).
 */
export const REPORT_FORMAT = 'pgsurge-report' as const;
export const REPORT_VERSION = 1;

export type SettingValue = string | number | boolean | null;

export interface MachineFacts {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly os: string;
  readonly node: string;
  /** 1-, 5- and 15-minute load averages when the report was made: a busy machine makes noisy curves. */
  readonly loadAverage?: readonly number[];
}

export interface PhaseTime {
  readonly phase: string;
  readonly seconds: number;
}

/** One task of a scheduled load (a table's load, a key or index build), seconds since the load started. */
export interface TimelineBar {
  readonly task: string;
  readonly kind: string;
  readonly table: string;
  readonly start: number;
  readonly end: number;
  readonly statement: string;
  readonly failed?: boolean;
}

export interface ReportSeries {
  /** The label in legends and CSV rows, e.g. `copy, random keys`. */
  readonly name: string;
  /** What differs for this series (mode, keys, shared_buffers …). */
  readonly settings: Readonly<Record<string, SettingValue>>;
  /** The server it ran on, when series ran on different servers or settings. */
  readonly server?: ServerFacts;
  readonly samples: readonly Sample[];
  /** Derived from `samples` (`intervalsOf`), kept for programs that read the file. */
  readonly intervals: readonly Interval[];
  /** Fewer intervals than a curve needs (30): the charts say the load was too short for one. */
  readonly tooShort?: boolean;
  /**
   * Sampled on a timer: the samples' spacing at the start and at the end, ms (it doubles as
   * the load goes on). Its intervals hold few chunk commits each, so the charts draw rows/s
   * over a few neighbouring intervals too. Absent for row buckets (decay).
   */
  readonly spacing?: { readonly startMs: number; readonly finalMs: number };
  readonly knee?: Knee | null;
  readonly phases?: readonly PhaseTime[];
  /** `dbt3 load`: every task's start and end (drawn as a Gantt chart). */
  readonly timeline?: readonly TimelineBar[];
  /** Table and index size after the last phase (e.g. after `--index after` built it). */
  readonly finalSizes?: { readonly heapBytes: number; readonly indexBytes: number };
  /** Where the load's backends spent their time, and the verdict (wait sampling on). */
  readonly diagnosis?: Diagnosis;
}

export interface LoadReport {
  readonly format: typeof REPORT_FORMAT;
  readonly version: typeof REPORT_VERSION;
  readonly title: string;
  readonly createdAt: string;
  /** The command line, passwords removed. */
  readonly command: readonly string[];
  /** The run's settings (options). */
  readonly settings: Readonly<Record<string, SettingValue>>;
  /** The target, passwords removed. */
  readonly target: string;
  readonly server: ServerFacts;
  readonly machine: MachineFacts;
  readonly series: readonly ReportSeries[];
  /** Sentences to show beside the charts (e.g. where the knee is). */
  readonly notes: readonly string[];
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism?.() ?? cpus.length,
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** One series from samples; intervals derived here so file and charts agree. */
export function makeSeries(name: string, samples: readonly Sample[], extra: Omit<ReportSeries, 'name' | 'samples' | 'intervals' | 'tooShort'> = { settings: {} }): ReportSeries {
  const intervals = intervalsOf(samples);
  return { name, samples, intervals, ...(intervals.length < MIN_CURVE_POINTS ? { tooShort: true } : {}), ...extra };
}

export function makeReport(fields: Omit<LoadReport, 'format' | 'version' | 'createdAt' | 'machine' | 'notes'> & Partial<Pick<LoadReport, 'createdAt' | 'machine' | 'notes'>>): LoadReport {
  return {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    createdAt: fields.createdAt ?? new Date().toISOString(),
    machine: fields.machine ?? machineFacts(),
    notes: fields.notes ?? [],
    ...fields,
  };
}

/** Checks a parsed JSON file is a report this version can draw; returns a message or undefined. */
export function reportProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not a JSON object';
  const r = value as Partial<LoadReport>;
  if (r.format !== REPORT_FORMAT) return `not a pgsurge report (its "format" is ${JSON.stringify(r.format)})`;
  if (r.version !== REPORT_VERSION) return `report version ${String(r.version)}; this pgsurge reads version ${REPORT_VERSION}`;
  if (!Array.isArray(r.series)) return 'no "series" array';
  for (const s of r.series) {
    if (typeof s?.name !== 'string' || !Array.isArray(s.samples)) return 'a series without "name" or "samples"';
  }
  return undefined;
}

/** The command line for a report: the value of `--db` and any password redacted. */
export function redactArgv(argv: readonly string[], redact: (url: string) => string): string[] {
  return argv.map((a, i) => (argv[i - 1] === '--db' ? redact(a) : a.startsWith('--db=') ? `--db=${redact(a.slice(5))}` : a));
}

const sameValue = (a: SettingValue | undefined, b: SettingValue | undefined): boolean => a === b;

/**
 * Several saved reports as one, their series overlaid on the same axes (e.g. decay runs
 * with different shared_buffers). Settings common to all stay at the top; each series
 * keeps what differs, and its own server facts. Series of the same name (two loads of
 * one file) are told apart by `sources`, the reports' own names (their files' names).
 * Each series keeps the command that made it in its settings.
 */
export function mergeReports(reports: readonly LoadReport[], title?: string, sources?: readonly string[]): LoadReport {
  const first = reports[0];
  if (first === undefined) throw new RangeError('no reports to merge');
  if (reports.length === 1) return first;
  const keys = [...new Set(reports.flatMap((r) => Object.keys(r.settings)))];
  const common: Record<string, SettingValue> = {};
  for (const k of keys) if (reports.every((r) => k in r.settings && sameValue(r.settings[k], first.settings[k]))) common[k] = first.settings[k]!;
  const counts = new Map<string, number>();
  for (const s of reports.flatMap((r) => r.series)) counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
  const names = new Set<string>();
  const series = reports.flatMap((r, k) =>
    r.series.map((s) => {
      const source = sources?.[k];
      const given = (counts.get(s.name) ?? 0) > 1 && source !== undefined ? `${s.name} (${source})` : s.name;
      let name = given;
      for (let n = 2; names.has(name); n++) name = `${given} (${n})`;
      names.add(name);
      const own = Object.fromEntries(Object.entries({ ...r.settings, ...s.settings }).filter(([k, v]) => !(k in common) || !sameValue(common[k], v)));
      // the command that made it: the page's run panel shows the merging one
      return { ...s, name, settings: { command: r.command.join(' '), ...own }, server: s.server ?? r.server };
    }),
  );
  return {
    ...first,
    title: title ?? `${series.length} series: ${series.map((s) => s.name).join(' | ')}`,
    createdAt: new Date().toISOString(),
    settings: common,
    series,
    // a one-series report's first note (its knee, its verdict), under the series' name here
    notes: reports.flatMap((r, k) => (r.series.length === 1 ? r.notes.slice(0, 1).map((n) => `${series[reports.slice(0, k).reduce((a, p) => a + p.series.length, 0)]!.name}: ${n}`) : r.notes)),
  };
}
