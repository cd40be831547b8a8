import { Option, type Command } from 'commander';
import { openTarget } from '../db/target.js';
import { FORMATS, type Format } from '../framing/formats.js';
import { load } from '../load.js';
import { progressLine } from '../report/progress-line.js';
import { addLoadOptions, addTargetOptions, type LoadFlags } from './common-options.js';
import { parseFormat } from './parse-options.js';
import { planInputs } from './plan-inputs.js';
import { formatSummary } from './summary-format.js';
import { addWriterOptions, writerSpecFromFlags, type WriterFlags } from './writer-options.js';
import { writerFor } from '../writer/writer-for.js';

interface LoadCommandFlags extends LoadFlags, WriterFlags {
  format?: Format;
  table?: string;
  schema?: string;
  create?: boolean;
  truncate?: boolean;
}

export function registerLoadCommand(program: Command): void {
  const cmd = program
    .command('load')
    .description('stream files into PostgreSQL through parallel COPY (or batched INSERT with --mode insert)')
    .argument('<file...>', 'input files; `-` reads stdin')
    .addOption(new Option('-f, --format <format>', `input format: ${FORMATS.join(', ')} (default: from the file extension)`).argParser(parseFormat))
    .option('-t, --table <name>', 'target table (default: from the file name, lineitem.tbl.3 → lineitem)')
    .option('--schema <name>', 'schema of the target table (default: the search_path)')
    .option('--create', 'create a missing table from the built-in DDL (the eight DBT-3 tables, narrow)')
    .option('--truncate', 'empty the table before loading');
  addLoadOptions(cmd);
  addWriterOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  pgsurge load lineitem.tbl --create          # into the managed cluster, table lineitem
  pgsurge load data.csv -t events --db postgresql://me@db1/prod -w 4
  pgsurge load events.csv --mode insert --insert-style values --batch-rows 1000 --on-conflict skip
  pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl`,
  );
  cmd.action(async (files: string[], flags: LoadCommandFlags) => {
    const inputs = planInputs(files, flags);
    const writer = writerFor(writerSpecFromFlags(flags));
    const target = await openTarget(flags);
    const progress = flags.quiet ? undefined : progressLine();
    try {
      const summary = await load(
        inputs,
        { workers: flags.workers, chunkBytes: flags.chunkSize, create: flags.create === true, truncate: flags.truncate === true, writer },
        target,
        progress,
      );
      progress?.finish();
      process.stdout.write(`${formatSummary(summary)}\n`);
    } finally {
      progress?.finish();
      await target.release();
    }
  });
}
