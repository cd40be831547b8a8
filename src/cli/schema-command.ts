import { access, constants } from 'node:fs/promises';
import type { Command } from 'commander';
import { createTableSql, knownColumns } from '../datasets/table-ddl.js';
import { readOnce, readOnceWhat } from '../input/file-blocks.js';
import type { Format } from '../input/formats.js';
import { describeForCreate, dialectFlags, describedLine } from '../input/table-from-file.js';
import { formatOption } from './common-options.js';
import { Option } from 'commander';
import { cannotRead, LoadError } from '../core/load-error.js';
import { parseEncodingFlag, parseHeaderMode, parseSingleByte, type InputFlags } from './input-flags.js';
import { parseSample } from './parse-options.js';
import { planInputs } from './plan-inputs.js';

interface SchemaFlags extends InputFlags {
  format?: Format;
  table?: string;
  schema?: string;
  sample?: number | 'all';
  json?: boolean;
}

/**
 * `pgsurge schema <file>`: the CREATE TABLE `load --create` would run for the file, and the
 * dialect it would read a text file with (as the load flags that say it). No database.
 */
export function registerSchemaCommand(program: Command): void {
  const cmd = program
    .command('schema')
    .description('print the CREATE TABLE that `load --create` would run for a file (Parquet: its schema; CSV, text, .tbl: the dialect and types sniffed from a sample; NDJSON/JSON: the sampled keys and types) and the load flags for its dialect; no database needed')
    .argument('<file>', 'the input file')
    .addOption(formatOption())
    .option('-t, --table <name>', 'the table to name in the CREATE TABLE (default: from the file name)')
    .option('--schema <name>', 'its schema (default: none, the search_path\'s)')
    .option('--sample <N|all>', 'records to sniff the types from, taken across the file; all reads the whole file', parseSample)
    .option('--json', 'one JSON object: the table, the CREATE TABLE, the columns, the dialect and the load flags');
  // The flags that say how the file is written (as for load): a flag given is the dialect, not sniffed.
  cmd
    .addOption(new Option('--header [match]', 'the first line is a header (csv, text, tbl)').argParser(parseHeaderMode))
    .addOption(new Option('--delimiter <char>', 'field delimiter (text, csv)').argParser((v) => parseSingleByte('--delimiter', v)))
    .option('--null <string>', 'the string that means NULL')
    .addOption(new Option('--quote <char>', 'CSV quote character').argParser((v) => parseSingleByte('--quote', v)))
    .addOption(new Option('--escape <char>', 'CSV escape character').argParser((v) => parseSingleByte('--escape', v)))
    .addOption(new Option('--encoding <name>', 'input encoding').argParser(parseEncodingFlag))
    .option('--json-path <path>', 'JSON arrays: the array inside the document, keys joined by dots');
  cmd.action(async (file: string, flags: SchemaFlags) => {
    const needsFile = (what: string): LoadError => new LoadError('bad-option', `pgsurge schema reads a sample from across the file: it needs a regular file, and ${what}`, { hint: 'save the input to a file and name it' });
    if (file === '-') throw needsFile('the input is stdin');
    const [named] = planInputs([file], { ...flags, input: flags });
    const builtInSql = createTableSql(named!.table, named!.schema);
    if (builtInSql === undefined) {
      // A DBT-3 table's built-in DDL reads nothing; anything else is sniffed from a sample, which would use up a pipe,
      // and a file that is not there has no schema to print.
      if (readOnce(file)) throw needsFile(readOnceWhat(file));
      await access(file, constants.R_OK).catch((error: unknown) => {
        throw cannotRead(file, error, 'check the path');
      });
    }
    const [input] = await describeForCreate([named!], flags.sample === undefined ? {} : { sample: flags.sample });
    // The built-in DDL, unless the file has other columns than that table's (then described).
    const builtIn = input!.described === undefined || input!.described.builtIn === true ? builtInSql : undefined;
    const sql = input!.described?.createSql ?? builtIn ?? '';
    const description = input!.described?.description;
    const flagsOf = description?.dialect ? dialectFlags(input!.format, description.dialect) : [];
    const loadCommand = ['pgsurge load', file, ...(flags.table !== undefined ? ['-t', flags.table] : []), '--create', ...flagsOf].join(' ');
    if (flags.json) {
      const out = {
        file,
        format: input!.format,
        table: input!.table,
        ...(input!.schema !== undefined ? { schema: input!.schema } : {}),
        createTable: sql,
        builtIn: builtIn !== undefined,
        // The built-in table's columns are the ones it creates, not the types sniffed from the file that has them.
        columns: builtIn !== undefined ? (knownColumns(input!.table) ?? []).map(([name, type]) => ({ name, type })) : (description?.columns ?? []),
        ...(description?.dialect ? { dialect: description.dialect } : {}),
        ...(input!.described?.datestyle ? { datestyle: input!.described.datestyle } : {}),
        loadFlags: flagsOf,
        sampled: description?.sampled ?? 0,
        whole: description?.whole ?? true,
      };
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      return;
    }
    const line = describedLine(input!);
    const notes = [builtIn !== undefined ? `${file}: pgsurge's built-in DDL for ${input!.table}` : line, `load with: ${loadCommand}`].filter((n) => n !== undefined);
    process.stdout.write(`${notes.map((n) => `-- ${n}`).join('\n')}\n${sql};\n`);
  });
}
