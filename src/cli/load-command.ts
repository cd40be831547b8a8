import { Option, type Command } from 'commander';
import { openTarget } from '../db/target.js';
import { FORMATS, type Format } from '../framing/formats.js';
import { loadWithDurability } from '../durability/durable-load.js';
import { UNSAFE_WARNING } from '../durability/presets.js';
import { progressLine } from '../report/progress-line.js';
import { addLoadOptions, addTargetOptions, type LoadFlags } from './common-options.js';
import { addInputOptions, type InputFlags } from './input-flags.js';
import { parseFormat } from './parse-options.js';
import { planInputs } from './plan-inputs.js';
import { formatDurability } from './durability-format.js';
import { formatSummary } from './summary-format.js';

interface LoadCommandFlags extends LoadFlags, InputFlags {
  format?: Format;
  table?: string;
  schema?: string;
  create?: boolean;
  truncate?: boolean;
}

export function registerLoadCommand(program: Command): void {
  const cmd = program
    .command('load')
    .description('stream files (tbl, csv, text, NDJSON, JSON arrays; .gz too) into PostgreSQL through parallel COPY')
    .argument('<file...>', 'input files; `-` reads stdin')
    .addOption(new Option('-f, --format <format>', `input format: ${FORMATS.join(', ')} (default: from the file extension)`).argParser(parseFormat))
    .option('-t, --table <name>', 'target table (default: from the file name, lineitem.tbl.3 → lineitem)')
    .option('--schema <name>', 'schema of the target table (default: the search_path)')
    .option('--create', 'create a missing table from the built-in DDL (the eight DBT-3 tables, narrow)')
    .option('--truncate', 'empty the table before loading');
  addInputOptions(cmd);
  addLoadOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  pgsurge load lineitem.tbl --create          # into the managed cluster, table lineitem
  pgsurge load data.csv -t events --db postgresql://me@db1/prod -w 4
  pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl
  pgsurge load events.ndjson.gz -t events --ignore-extra-keys
  pgsurge load export.json --json-path data.items -t items
  pgsurge load people.csv --header match --encoding WIN1252 --null NA`,
  );
  cmd.action(async (files: string[], flags: LoadCommandFlags) => {
    const inputs = planInputs(files, { ...flags, input: flags });
    const target = await openTarget(flags);
    if (flags.durability === 'unsafe' && target.managed !== undefined) process.stderr.write(UNSAFE_WARNING);
    const progress = flags.quiet ? undefined : progressLine();
    try {
      const summary = await loadWithDurability(
        inputs,
        {
          workers: flags.workers,
          chunkBytes: flags.chunkSize,
          create: flags.create === true,
          truncate: flags.truncate === true,
          durability: { preset: flags.durability, unlogged: flags.unlogged === true },
        },
        target,
        progress,
      );
      progress?.finish();
      process.stdout.write(`${formatSummary(summary)}\n${formatDurability(summary)}\n`);
    } finally {
      progress?.finish();
      await target.release();
    }
  });
}
