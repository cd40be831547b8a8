import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { LoadError } from '../core/load-error.js';
import { redactUrl, type Target } from '../cluster/target.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import type { LoadSummary } from '../metrics/load-counters.js';
import { parseSampleEvery, type SampleEvery } from '../metrics/sample-every.js';
import { Sampler } from '../metrics/sampler.js';
import { allReporters, progressMode, progressReporter, type ProgressReporter } from '../report/progress-line.js';
import { makeReport, makeSeries, redactArgv, type LoadReport, type ReportSeries, type SettingValue } from '../report/report-data.js';
import { REPORT_KINDS, reportKind, writeReport } from '../report/write-report.js';
import { diagnoseLoad, type Diagnosis, type LoadContext } from '../diagnose/diagnose-load.js';
import { readProbe } from '../diagnose/probe/probe-store.js';
import { onStopSignals, type StopHandler } from './stop-signals.js';

/** How a load is watched: samples, progress output, report file. */
export interface ObserveFlags {
  sampleEvery: SampleEvery | 'off';
  json?: boolean;
  quiet?: boolean;
  /** `--report` files, at most one of each kind. */
  report?: string | readonly string[];
  /** The series' name in the report (default: the input files' names). */
  label?: string;
}

export function parseSampleEveryFlag(flag: string, value: string): SampleEvery | 'off' {
  if (value.trim() === 'off' || value.trim() === '0') return 'off';
  const parsed = parseSampleEvery(value);
  if (typeof parsed === 'string') throw new InvalidArgumentError(`Expected \`${flag}\` to be ${parsed}, got \`${value}\``);
  return parsed;
}

export function parseReportPath(value: string): string {
  if (reportKind(value) === undefined) throw new InvalidArgumentError(`Expected \`--report\` to end in ${REPORT_KINDS.map((k) => `.${k}`).join(', ')}, got \`${value}\``);
  return value;
}

/** `--report` given again: one more file, refused when a file of its kind is already asked for (it would be dropped). */
export function addReportPath(value: string, previous: readonly string[] | undefined): string[] {
  const file = parseReportPath(value);
  const kind = reportKind(file);
  const same = (previous ?? []).find((p) => reportKind(p) === kind);
  if (same !== undefined) throw new InvalidArgumentError(`\`--report ${same}\` and \`--report ${file}\` are both ${kind!.toUpperCase()} reports: give one --report of each kind (.json, .csv, .html)`);
  return [...(previous ?? []), file];
}

export const DEFAULT_SAMPLE_EVERY: SampleEvery = { ms: 1000 };

/** `--sample-every`, `--json`, `--report` (and `-q` comes from the load options). */
export function addObserveOptions(cmd: Command, options: { sampleEvery?: boolean; report?: boolean } = {}): Command {
  if (options.sampleEvery !== false) {
    cmd.addOption(
      new Option('--sample-every <every>', 'sample the server every duration (1s, 500ms) or row count (500k, 1M); `off` for none')
        .default(DEFAULT_SAMPLE_EVERY, '1s')
        .argParser((v) => parseSampleEveryFlag('--sample-every', v)),
    );
  }
  cmd.option('--json', 'print one NDJSON event per sample and a summary event on stdout (progress on stderr is off)');
  if (options.report !== false) {
    cmd.addOption(new Option('--report <file>', 'write the settings, server, machine and samples: .json, .csv or .html (charts, opens offline)').argParser(addReportPath));
    cmd.option('--label <name>', "the load's name in the report's legends, and when reports are overlaid (default: the input files' names)");
  }
  return cmd;
}

export interface ObservedLoad {
  readonly reporter: LoadReporter;
  /** Once the load started (its reporter's `start`): the sampler, when sampling. */
  readonly sampler: Sampler | undefined;
  readonly progress: ProgressReporter;
  /** Stops sampling and the progress output; the samples as a report series. */
  finish(name: string, extra?: Partial<Omit<ReportSeries, 'name' | 'samples' | 'intervals'>>): Promise<ReportSeries | undefined>;
  /** Builds the report object (needs sampling). */
  report(fields: { title: string; settings: Readonly<Record<string, SettingValue>>; series: readonly ReportSeries[]; notes?: readonly string[] }): LoadReport | undefined;
  /**
   * After `finish`: where the load's backends spent their time and the verdict, put into
   * the series too (undefined without samples or wait looks).
   */
  diagnose(summary: LoadSummary, series: ReportSeries | undefined, context: LoadContext): Promise<{ series: ReportSeries | undefined; diagnosis: Diagnosis | undefined }>;
  /** Releases the sampler's connection if `finish` was not reached. */
  close(): Promise<void>;
}

/** Starts what watches a load: the sampler on its own connection, and the progress output. */
export async function observeLoad(flags: ObserveFlags, target: Target, options: { totalRows?: number; argv?: readonly string[] } = {}): Promise<ObservedLoad> {
  if (flags.report !== undefined && flags.sampleEvery === 'off') throw new LoadError('bad-option', '--report needs samples: drop `--sample-every off`');
  const progress = progressReporter({ mode: progressMode(flags, process.stderr), stream: process.stderr, out: process.stdout, totalRows: options.totalRows });
  // The sampler's sessions open while the load plans (it is needed at the load's start, before the first row):
  // its failure to connect is the load's there (or at the end), not before.
  const opening = flags.sampleEvery === 'off' ? undefined : Sampler.open(target, { every: flags.sampleEvery }, [progress]);
  opening?.catch(() => undefined);
  let sampler: Sampler | undefined;
  const opened = async (): Promise<Sampler | undefined> => (sampler ??= await opening);
  const sampling: LoadReporter = {
    async start(info) {
      await (await opened())?.start(info);
    },
    chunkLoaded(info) {
      sampler?.chunkLoaded(info);
    },
    workersNamed(prefix) {
      if (sampler) sampler.workersNamed(prefix);
      else void opened().then((s) => s?.workersNamed(prefix), () => undefined);
    },
  };
  let finished = false;
  // The load names its target as it found it (e.g. with the Citus cluster's nodes and shards).
  let described = target.description;
  const named: LoadReporter = {
    start(info) {
      described = info.target;
    },
  };
  return {
    reporter: allReporters(opening ? sampling : undefined, progress, named),
    get sampler() {
      return sampler;
    },
    progress,
    async finish(name, extra = {}) {
      finished = true;
      try {
        const sampler = await opened();
        const samples = sampler ? await sampler.stop() : undefined;
        if (!samples) return undefined;
        const spacing = sampler?.spacing;
        const series = makeSeries(name, samples, { settings: {}, ...(spacing ? { spacing } : {}), ...extra });
        // rows already in a big table come from the planner's estimate: say so in the file
        return sampler?.rowsBeforeEstimated ? { ...series, settings: { ...series.settings, rowsBeforeEstimated: true } } : series;
      } finally {
        progress.finish();
      }
    },
    async diagnose(summary, series, context) {
      const waits = sampler?.waitSummary;
      if (!sampler || !waits || !series) return { series, diagnosis: undefined };
      const probe = target.managed ? await readProbe(target.managed.dataDir) : undefined;
      const diagnosis = diagnoseLoad({ waits, samples: series.samples, summary, facts: sampler.facts, context, ...(probe ? { probe } : {}) });
      return { series: { ...series, diagnosis }, diagnosis };
    },
    report(fields) {
      if (!sampler) return undefined;
      return makeReport({
        ...fields,
        command: ['pgsurge', ...redactArgv(options.argv ?? process.argv.slice(2), redactUrl)],
        target: described,
        server: sampler.facts,
      });
    },
    async close() {
      progress.finish();
      if (!finished) await (await opened().catch(() => undefined))?.stop().catch(() => undefined);
    },
  };
}

/** A load's series name: `--label`, else its files' names (the first two and how many more). */
export function seriesLabel(label: string | undefined, files: readonly string[]): string {
  if (label !== undefined && label.trim() !== '') return label.trim();
  const names = files.map((f) => (f === '-' ? 'stdin' : path.basename(f)));
  return names.length <= 3 ? names.join(', ') : `${names.slice(0, 2).join(', ')} and ${names.length - 2} more`;
}

/** Writes every `--report` asked for; returns where (one path, or a list of several), for the CLI to say so. */
export async function writeReportIfAsked(files: string | readonly string[] | undefined, report: LoadReport | undefined): Promise<string | string[] | undefined> {
  if (files === undefined || report === undefined) return undefined;
  const written: string[] = [];
  for (const file of typeof files === 'string' ? [files] : files) written.push(await writeReport(file, report));
  return written.length === 1 ? written[0] : written.length === 0 ? undefined : written;
}

/** What stopped a load, for the --json summary event's `stopped`: the error's code, message and hint, and the command that goes on. */
export function stoppedEvent(error: LoadError, next: { readonly resume?: string; readonly startOver?: string }): Record<string, unknown> {
  return { code: error.code, message: error.message, ...(error.details.hint !== undefined ? { hint: error.details.hint } : {}), ...next };
}

/** The final NDJSON event. */
export function summaryEvent(summary: LoadSummary, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ event: 'summary', ...summary, ...extra });
}

/**
 * A load's stop handler (Ctrl-C, SIGTERM, SIGHUP: `what` is what a stop does) and its
 * observation, started together; when the observation cannot start, the handler is taken
 * off and the target released before the error goes on.
 */
export async function observeWithStop(flags: ObserveFlags, target: Target, what: string, options: { totalRows?: number; argv?: readonly string[] } = {}): Promise<{ stop: StopHandler; observed: ObservedLoad }> {
  const stop = onStopSignals(what);
  const observed = await observeLoad(flags, target, options).catch(async (error: unknown) => {
    stop.off();
    await target.release();
    throw error;
  });
  return { stop, observed };
}
