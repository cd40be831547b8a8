import { promises as fs } from 'node:fs';
import { loadSettingsFromEnv, wireWasmFromEnv } from './load-settings.js';
import { formatCount } from '../core/format-count.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { compareJson, formatCompareTable } from '../compare/result-table.js';
import { runCompare } from '../compare/run-compare.js';
import { DEFAULT_VARIANTS, parseVariants } from '../compare/variants.js';
import { LoadError } from '../core/load-error.js';
import { openTarget } from './open-target.js';
import { readOnce, readOnceWhat } from '../input/file-blocks.js';
import { FORMATS, type Format } from '../input/formats.js';
import { DEFAULT_ON_CONFLICT, ON_CONFLICT_RULES, onConflictHelp, ROW_ON_CONFLICT, type OnConflict } from '../writer/on-conflict.js';
import { addLoadOptions, addTargetOptions, formatOption, type LoadFlags } from './common-options.js';
import { parseWholeNumber } from './parse-options.js';
import { planInputs } from './plan-inputs.js';
import { addReportPath, DEFAULT_SAMPLE_EVERY, writeReportIfAsked } from './observe-options.js';
import { redactUrl } from '../cluster/target.js';
import type { Sample } from '../metrics/series.js';
import type { ServerFacts } from '../metrics/server-snapshot.js';
import { makeReport, makeSeries, redactArgv, type LoadReport, type ReportSeries } from '../report/report-data.js';
import type { CompareResult, VariantRun } from '../compare/run-compare.js';

interface CompareFlags extends LoadFlags {
  format?: Format;
  table?: string;
  schema?: string;
  create?: boolean;
  variants: string;
  repeat: number;
  rows?: number;
  onConflict: OnConflict;
  json?: boolean;
  out?: string;
  keep?: boolean;
  report?: readonly string[];
}

/** A run's samples, kept for the report. */
interface SampledRun {
  readonly run: VariantRun;
  readonly samples: readonly Sample[];
  readonly spacing: ReportSeries['spacing'];
}

/**
 * `--report`: one series per variant, its median run (by rows/s; of two middle runs the
 * slower), overlaid on the same axes.
 */
function compareReport(result: CompareResult, sampled: ReadonlyMap<string, SampledRun[]>, facts: ServerFacts, flags: CompareFlags): LoadReport {
  const series = result.results.flatMap((r) => {
    const runs = [...(sampled.get(r.variant.label) ?? [])].sort((a, b) => a.run.rowsPerSecond - b.run.rowsPerSecond);
    const median = runs[Math.floor((runs.length - 1) / 2)];
    if (median === undefined) return [];
    return [makeSeries(r.variant.label, median.samples, { settings: { workers: r.workers, round: median.run.round, rowsPerSecond: Math.round(median.run.rowsPerSecond) }, ...(median.spacing ? { spacing: median.spacing } : {}) })];
  });
  return makeReport({
    title: `pgsurge compare: ${result.file}, ${series.length} variants`,
    command: ['pgsurge', ...redactArgv(process.argv.slice(2), redactUrl)],
    settings: { table: result.table, repeat: result.repeat, rows: result.maxRows ?? null, onConflict: result.onConflict, chunkBytes: flags.chunkSize },
    target: result.target,
    server: facts,
    series,
    notes: [`each variant's median run of ${result.repeat} by rows/s, drawn from its samples; the order the runs went in: ${result.order.join(' ')}`],
  });
}

export function registerCompareCommand(program: Command): void {
  const cmd = program
    .command('compare')
    .description('load the same input through several variants (COPY, INSERT styles, workers, batch sizes) on the same server and print one table')
    .argument('<file>', `input file (${FORMATS.slice(0, -1).join(', ')} or ${FORMATS.at(-1)!}; the format from its name, or -f)`)
    .addOption(formatOption())
    .option('-t, --table <name>', 'base table whose definition each variant\'s fresh table copies: table or schema.table, as psql writes it (default: from the file name)')
    .option('--schema <name>', 'schema of the base table; the variants\' tables go there too (default: the search_path)')
    .option('--create', 'create a missing base table from the built-in DDL (the eight DBT-3 tables)')
    .option('--variants <list>', 'comma-separated: copy[:text|binary|auto] or insert[:unnest|values|row], each with optional :w<workers> :b<batch rows> :c<commit every> (copy is copy:auto; see --wire on load)', DEFAULT_VARIANTS)
    .addOption(new Option('--repeat <n>', 'runs per variant, interleaved (A B C A B C …); medians are reported').default(3).argParser((v) => parseWholeNumber('--repeat', v)))
    .addOption(new Option('--rows <n>', 'load only the first n rows of the input (read by one reader), e.g. to include insert:row').argParser((v) => parseWholeNumber('--rows', v)))
    .addOption(
      new Option('--on-conflict <action>', `for every variant, ${onConflictHelp(ROW_ON_CONFLICT)}`).default(DEFAULT_ON_CONFLICT).argParser((v) => {
        if (!(ROW_ON_CONFLICT as readonly string[]).includes(v)) throw new InvalidArgumentError(`Expected \`--on-conflict\` to be one of ${ROW_ON_CONFLICT.join(', ')}, got \`${v}\``);
        return v as OnConflict;
      }),
    )
    .option('--json', 'print the results as JSON on stdout (every run included) instead of the table')
    .option('--out <file>', 'also write the results as JSON to this file')
    .option('--keep', 'keep each variant\'s table (of the last round) instead of dropping it')
    .addOption(new Option('--report <file>', "sample each run and write each variant's median run as a series: .html (charts, overlaid), .json or .csv (once per kind)").argParser(addReportPath));
  addLoadOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Each variant loads into a fresh table <table>_cmp<k> created with
CREATE TABLE … (LIKE <table> INCLUDING ALL), measured, then dropped (unless --keep).
Columns: rows/s (median, min–max), MB/s, ratio to the fastest, ratio to the first variant
(median of per-round ratios), WAL bytes per row (pg_current_wal_lsn before/after; the WAL
position is cluster-wide), this process's CPU seconds, pg_total_relation_size.

Examples:
  pgsurge compare lineitem.tbl --create
  pgsurge compare lineitem.tbl --create --variants copy:w1,copy:w2,insert:unnest:b5000,insert:values:b1000 --repeat 5
  pgsurge compare lineitem.tbl --create --variants copy,insert:row,insert:row:c0 --rows 20000 --json
  pgsurge compare lineitem.tbl --create --variants copy:text,copy:binary,copy:text:w2,copy:binary:w2 --repeat 3
  pgsurge compare lineitem.tbl --create --variants copy:w1,copy:w2 --repeat 3 --report compare.html`,
  );
  cmd.action(async (file: string, flags: CompareFlags) => {
    const variants = parseVariants(flags.variants);
    const binary = variants.find((v) => v.wire === 'binary');
    if (binary && ON_CONFLICT_RULES[flags.onConflict].leavesOut) throw new LoadError('bad-option', `\`${binary.label}\` needs plain COPY, and \`--on-conflict skip\` loads through a staging table with INSERT`, { hint: 'drop one of them' });
    const [input] = planInputs([file], flags);
    if (input === undefined || readOnce(file)) {
      throw new LoadError('bad-option', `compare reads its input once per run: give a regular file, not ${readOnceWhat(file)}`, { hint: 'save the input to a file first' });
    }
    const target = await openTarget(flags);
    const sampled = new Map<string, SampledRun[]>();
    let facts: ServerFacts | undefined;
    try {
      const result = await runCompare(
        {
          file: input.file,
          format: input.format,
          table: input.table,
          schema: input.schema,
          create: flags.create === true,
          variants,
          repeat: flags.repeat,
          workers: flags.workers,
          chunkBytes: flags.chunkSize,
          wasm: wireWasmFromEnv(),
          settings: loadSettingsFromEnv(),
          ...(flags.rows !== undefined ? { maxRows: flags.rows } : {}),
          onConflict: flags.onConflict,
          keep: flags.keep === true,
          ...(flags.report !== undefined ? { sampleEvery: DEFAULT_SAMPLE_EVERY } : {}),
        },
        target,
        {
          runSampled: ({ variant, run, samples, facts: read, spacing }) => {
            facts ??= read;
            sampled.set(variant.label, [...(sampled.get(variant.label) ?? []), { run, samples, spacing }]);
          },
          runDone: ({ variant, run, index, total }) => {
            if (flags.quiet) return;
            process.stderr.write(`[${index}/${total}] ${variant.label}: ${formatCount(run.rows)} rows in ${run.seconds.toFixed(2)} s, ${formatCount(run.rowsPerSecond)} rows/s\n`);
          },
        },
      );
      if (flags.out) await fs.writeFile(flags.out, compareJson(result));
      const written = await writeReportIfAsked(flags.report, facts && compareReport(result, sampled, facts, flags));
      process.stdout.write(flags.json ? compareJson(result) : `${formatCompareTable(result)}\n`);
      if (written !== undefined && !flags.json) process.stderr.write(`report: ${typeof written === 'string' ? written : written.join(', ')}\n`);
    } finally {
      await target.release();
    }
  });
}
