import { formatBytes } from '../core/format-count.js';
import { loadSettingsFromEnv, wireWasmFromEnv } from './load-settings.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ManagedCluster } from '../cluster/managed-cluster.js';
import { LoadError } from '../core/load-error.js';
import { type Target } from '../cluster/target.js';
import { openTarget, usesManagedCluster } from './open-target.js';
import { tableFlag } from './plan-inputs.js';
import { DECAY_INDEX, DECAY_MODES, runDecay, type DecayIndex, type DecayMode } from '../decay/decay.js';
import { NARROW_KEYS, type NarrowKeys } from '../decay/narrow-rows.js';
import { asciiDecayChart, decayTable, describeKnee, waitClassTable } from '../report/decay-text.js';
import { addTargetOptions, type TargetFlags } from './common-options.js';
import { wireOption } from './writer-options.js';
import { wireLines, type WireChoice } from '../wire/wire-report.js';
import { addObserveOptions, observeLoad, parseReportPath, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { defaultWorkers, parseChunkSize, parseSize, parseWholeNumber } from './parse-options.js';
import { formatDiagnosis, formatSummary } from '../report/summary-format.js';
import { formatCount } from '../core/format-count.js';

interface DecayFlags extends TargetFlags, Omit<ObserveFlags, 'sampleEvery'> {
  rows: number;
  bucket?: number;
  keys: NarrowKeys;
  index: DecayIndex;
  mode: DecayMode;
  wire?: WireChoice;
  sharedBuffers?: number;
  workers: number;
  chunkSize: number;
  table: string;
  schema?: string;
  seed: number;
  keepData?: string;
  quiet?: boolean;
  verbose?: boolean;
}

const COUNT_UNITS: Record<string, number> = { '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9 };

/** `10M`, `250k`, `5000000` → a whole number of rows. */
export function parseRowCount(flag: string, value: string, min = 1): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKMG]?)\s*$/.exec(value);
  const n = m ? Math.round(Number(m[1]) * COUNT_UNITS[m[2]!]!) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`Expected \`${flag}\` to be a row count from ${min} up such as 250k or 10M, got \`${value}\``);
  return n;
}

function choice<T extends string>(flag: string, allowed: readonly T[]): (v: string) => T {
  return (v) => {
    if (!(allowed as readonly string[]).includes(v)) throw new InvalidArgumentError(`Expected \`${flag}\` to be one of ${allowed.join(', ')}, got \`${v}\``);
    return v as T;
  };
}

/**
 * The bucket when `--bucket` is not given: about a fortieth of the rows, rounded down to
 * 1, 2, 2.5 or 5 times a power of ten (250k for the default 10M rows, 10k for 500k), so
 * that every run has the 40 or more buckets the knee search needs.
 */
export function defaultDecayBucket(rows: number): number {
  const target = rows / 40;
  if (target < 1) return 1;
  const power = 10 ** Math.floor(Math.log10(target));
  const step = [5, 2.5, 2, 1].find((m) => m * power <= target)!;
  return Math.max(1, Math.floor(step * power));
}

/** `decay-2026-11-30T07-12-03.html`: sortable, no colons. */
export function defaultDecayReportName(now = new Date()): string {
  return `decay-${now.toISOString().slice(0, 19).replace(/:/g, '-')}.html`;
}

/**
 * With `--shared-buffers`, the managed cluster runs with that setting for this command:
 * started with `-c shared_buffers=…`, or, when it was already running, restarted with it
 * and restarted again without it afterwards.
 */
async function openDecayTarget(flags: DecayFlags): Promise<Target> {
  if (flags.sharedBuffers === undefined) return openTarget(flags);
  if (!usesManagedCluster(flags)) {
    throw new LoadError('bad-option', '--shared-buffers applies only to the managed cluster, not to a server named by --db or the PG* environment', {
      hint: 'set shared_buffers on that server yourself (ALTER SYSTEM SET shared_buffers = …; then restart it), or drop --db to use the managed cluster',
    });
  }
  const cluster = await ManagedCluster.open({ ...flags, env: process.env });
  const wasRunning = await cluster.isRunning();
  if (wasRunning) {
    process.stderr.write(`restarting the managed cluster with shared_buffers=${formatBytes(flags.sharedBuffers)}; it is restarted with its own settings afterwards\n`);
    await cluster.stop();
  }
  const target = await openTarget({ ...flags, settings: { shared_buffers: `${Math.max(128, Math.round(flags.sharedBuffers / 1024))}kB` } }).catch(async (error: unknown) => {
    if (wasRunning) await cluster.start();
    throw error;
  });
  return {
    ...target,
    release: async () => {
      await target.release();
      if (wasRunning) await cluster.start();
    },
  };
}

export function registerDecayCommand(program: Command): void {
  const cmd = program
    .command('decay')
    .description('the classic experiment: grow a table of narrow rows with a unique key and watch the load rate fall as it outgrows memory')
    .addOption(new Option('--rows <n>', 'rows to load into the fresh table (10M, 500k)').default(10_000_000, '10M').argParser((v) => parseRowCount('--rows', v)))
    .addOption(new Option('--bucket <n>', 'sample every this many rows loaded (default: about --rows/40, 250k for 10M)').argParser((v) => parseRowCount('--bucket', v)))
    .addOption(new Option('--keys <order>', `key order: ${NARROW_KEYS.join(', ')}`).default('random').argParser(choice('--keys', NARROW_KEYS)))
    .addOption(new Option('--index <when>', 'the unique key on id: before (there during the load), after (built once the rows are in, timed), none').default('before').argParser(choice('--index', DECAY_INDEX)))
    .addOption(new Option('--mode <mode>', `how rows reach the server: ${DECAY_MODES.join(', ')}`).default('copy').argParser(choice('--mode', DECAY_MODES)))
    .addOption(wireOption())
    .addOption(new Option('--shared-buffers <size>', 'run the managed cluster with this shared_buffers (16MB, 1GB) for this command').argParser((v) => parseSize('--shared-buffers', v)))
    .addOption(new Option('--report <file>', 'report file: .html (charts), .json or .csv (default: decay-<timestamp>.html in the current folder)').argParser(parseReportPath))
    .addOption(new Option('-w, --workers <n>', 'parallel connections').default(defaultWorkers(), 'the number of CPUs').argParser((v) => parseWholeNumber('--workers', v)))
    .addOption(new Option('--chunk-size <bytes>', 'bytes per chunk (one transaction each)').default(1024 * 1024, '1MB').argParser((v) => parseChunkSize('--chunk-size', v)))
    .option('--table <name>', 'the table to create (dropped first if it exists): table or schema.table, as psql writes it', 'pgsurge_decay')
    .option('--schema <name>', 'schema of the table (default: the search_path)')
    .addOption(new Option('--seed <n>', 'seed of the random key order').default(1).argParser((v) => parseWholeNumber('--seed', v, 0)))
    .option('--keep-data <dir>', 'keep the generated rows in this folder and reuse them in later runs with the same --rows, --keys and --seed')
    .option('-q, --quiet', 'no progress; print only the results')
    .option('--verbose', 'print stack traces with errors');
  addObserveOptions(cmd, { sampleEvery: false, report: false });
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Drops and creates the table (id bigint, val integer, note text; ~45-byte rows), loads --rows
rows, samples the server every --bucket rows, prints the curve as a table and an ASCII
chart, names the knee (the first bucket after the fourth whose rows/s falls below half
the early level, the median of buckets 2-4, and stays there for two buckets) and writes
the report. Pick --bucket well below the row count at which the index outgrows
shared_buffers, or the early level already holds the fall.

Examples:
  pgsurge decay --rows 5M --keys random
  pgsurge decay --rows 5M --keys random --shared-buffers 16MB --report small-sb.html
  pgsurge decay --rows 2M --index after --json > decay.ndjson`,
  );
  cmd.action(async (flags: DecayFlags) => {
    const { table, schema } = tableFlag('--table', flags.table, flags.schema);
    const named = { table: table ?? flags.table, schema };
    if (flags.wire !== undefined && flags.wire !== 'text' && flags.mode !== 'copy') {
      throw new LoadError('bad-option', `\`--wire ${flags.wire}\` applies only to --mode copy`, { hint: 'drop --wire, or use --mode copy' });
    }
    const reportFile = flags.report ?? defaultDecayReportName();
    const bucket = flags.bucket ?? defaultDecayBucket(flags.rows);
    const observeFlags: ObserveFlags = { sampleEvery: { rows: bucket }, json: flags.json, quiet: flags.quiet, report: reportFile };
    const target = await openDecayTarget(flags);
    try {
      const observed = await observeLoad(observeFlags, target, { totalRows: flags.rows });
      try {
        const say = (line: string): void => {
          if (!flags.quiet && !flags.json) process.stderr.write(`${line}\n`);
        };
        const result = await runDecay(
          { rows: flags.rows, keys: flags.keys, index: flags.index, mode: flags.mode, ...(flags.wire !== undefined ? { wire: flags.wire } : {}), wasm: wireWasmFromEnv(), settings: loadSettingsFromEnv(), workers: flags.workers, chunkBytes: flags.chunkSize, seed: flags.seed, ...named, ...(flags.keepData !== undefined ? { dataDir: flags.keepData } : {}) },
          target,
          {
            reporter: observed.reporter,
            loaded: async () => {
              await observed.sampler?.stop();
              observed.progress.finish();
            },
            phase: (p) => say(`${p} …`),
          },
        );
        const facts = observed.sampler!.facts;
        const settings = { rows: flags.rows, bucket, keys: flags.keys, index: flags.index, mode: flags.mode, wire: flags.mode === 'copy' ? (flags.wire ?? 'auto') : 'n/a', workers: flags.workers, chunkBytes: flags.chunkSize, seed: flags.seed };
        const name = `${flags.mode}, ${flags.keys} keys, index ${flags.index}, shared_buffers ${facts.settings.shared_buffers ?? '?'}`;
        const finished = (await observed.finish(name, { settings, phases: result.phases, finalSizes: result.finalSizes }))!;
        const { series: diagnosed, diagnosis } = await observed.diagnose(result.summary, finished, { input: 'files' });
        const series = diagnosed!;
        const { knee, text } = describeKnee(series.intervals, facts.sharedBuffersBytes, facts.settings.shared_buffers ?? '?');
        const withKnee = { ...series, knee: knee ?? null };
        const notes = [text, ...(diagnosis ? [diagnosis.verdict.text, ...(diagnosis.againstProbe ?? [])] : []), `${target.description}; ${facts.version.split(' on ')[0]}`, ...wireLines(result.summary.wire)];
        const report = observed.report({ title: `pgsurge decay: ${formatCount(flags.rows)} narrow rows, ${name}`, settings, series: [withKnee], notes })!;
        const written = await writeReportIfAsked(reportFile, report);
        if (flags.json) {
          process.stdout.write(`${summaryEvent(result.summary, { phases: result.phases, knee: knee ?? null, kneeText: text, finalSizes: result.finalSizes, report: written, ...(diagnosis ? { diagnosis } : {}) })}\n`);
          return;
        }
        const phases = result.phases.map((p) => `${p.phase} ${p.seconds.toFixed(1)} s`).join(', ');
        process.stdout.write(
          [
            decayTable(series.intervals, knee),
            '',
            asciiDecayChart(series.intervals, knee),
            '',
            ...(series.intervals.some((i) => i.waits) ? [waitClassTable(series.intervals), ''] : []),
            text,
            '',
            formatSummary(result.summary),
            ...(diagnosis ? [formatDiagnosis(diagnosis)] : []),
            `phases: ${phases}; final size: table ${formatBytes(result.finalSizes.heapBytes)}, index ${formatBytes(result.finalSizes.indexBytes)}`,
            `server: ${facts.version.split(' on ')[0]}; ${Object.entries(facts.settings).map(([k, v]) => `${k}=${v}`).join(' ')}`,
            `machine: ${report.machine.cpuModel}, ${report.machine.cores} cores, load average ${report.machine.loadAverage?.join(' ') ?? '?'}`,
            `report: ${written}`,
            '',
          ].join('\n'),
        );
      } finally {
        await observed.close();
      }
    } finally {
      await target.release();
    }
  });
}
