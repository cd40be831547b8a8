import { Option, type Command } from 'commander';
import { openTarget } from '../db/target.js';
import { FORMATS, type Format } from '../framing/formats.js';
import { load } from '../load.js';
import { addLoadOptions, addTargetOptions, type LoadFlags } from './common-options.js';
import { addObserveOptions, observeLoad, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { parseFormat } from './parse-options.js';
import { planInputs } from './plan-inputs.js';
import { formatSummary } from './summary-format.js';

interface LoadCommandFlags extends LoadFlags, ObserveFlags {
  format?: Format;
  table?: string;
  schema?: string;
  create?: boolean;
  truncate?: boolean;
}

export function registerLoadCommand(program: Command): void {
  const cmd = program
    .command('load')
    .description('stream files into PostgreSQL through parallel COPY')
    .argument('<file...>', 'input files; `-` reads stdin')
    .addOption(new Option('-f, --format <format>', `input format: ${FORMATS.join(', ')} (default: from the file extension)`).argParser(parseFormat))
    .option('-t, --table <name>', 'target table (default: from the file name, lineitem.tbl.3 → lineitem)')
    .option('--schema <name>', 'schema of the target table (default: the search_path)')
    .option('--create', 'create a missing table from the built-in DDL (the eight DBT-3 tables, narrow)')
    .option('--truncate', 'empty the table before loading');
  addLoadOptions(cmd);
  addObserveOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  pgsurge load lineitem.tbl --create          # into the managed cluster, table lineitem
  pgsurge load data.csv -t events --db postgresql://me@db1/prod -w 4
  pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl`,
  );
  cmd.action(async (files: string[], flags: LoadCommandFlags) => {
    const inputs = planInputs(files, flags);
    const target = await openTarget(flags);
    try {
      const observed = await observeLoad(flags, target);
      try {
        const summary = await load(
          inputs,
          { workers: flags.workers, chunkBytes: flags.chunkSize, create: flags.create === true, truncate: flags.truncate === true },
          target,
          observed.reporter,
        );
        const series = await observed.finish(inputs.map((i) => i.table).filter((t, k, all) => all.indexOf(t) === k).join(', '));
        const report = series && observed.report({ title: `pgsurge load: ${series.name}`, settings: { workers: flags.workers, chunkBytes: flags.chunkSize, mode: 'copy' }, series: [series] });
        const written = await writeReportIfAsked(flags.report, report);
        process.stdout.write(flags.json ? `${summaryEvent(summary, written ? { report: written } : {})}\n` : `${formatSummary(summary)}\n`);
        if (written && !flags.json) process.stderr.write(`report: ${written}\n`);
      } finally {
        await observed.close();
      }
    } finally {
      await target.release();
    }
  });
}
