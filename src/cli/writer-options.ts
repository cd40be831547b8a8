import { InvalidArgumentError, Option, type Command } from 'commander';
import { LoadError } from '../core/load-error.js';
import { DEFAULT_BATCH_ROWS, INSERT_STYLES, type InsertStyle } from '../writer/insert-writer.js';
import { DEFAULT_ON_CONFLICT, ON_CONFLICT, ON_CONFLICT_RULES, onConflictHelp, type OnConflict } from '../writer/on-conflict.js';
import { LOAD_COMMAND_MODES, type LoadCommandMode, type WriterSpec } from '../writer/writer-for.js';
import { parseWholeNumber } from './parse-options.js';
import { WIRES, type WireChoice } from '../wire/wire-report.js';

/** `--wire`, on every command that loads through COPY (load, dbt3 load, decay). */
export function wireOption(): Option {
  return new Option(
    '--wire <wire>',
    'what COPY sends: text (the input as framed; the server parses every value), binary (pgsurge encodes each value as its column type, where that is exact; a table with a type it cannot encode goes as text, and a chunk with a value it cannot encode exactly, such as infinity, goes as text), auto (binary where the table\'s shape measured faster; the default)',
  ).argParser(oneOf('--wire', WIRES));
}

/** The flags that choose how chunks reach the server (`load`). */
export interface WriterFlags {
  mode: LoadCommandMode;
  insertStyle?: InsertStyle;
  batchRows?: number;
  commitEvery?: number;
  onConflict: OnConflict;
  wire?: WireChoice;
  key?: string[];
  updateColumns?: string[];
}

function oneOf<T extends string>(flag: string, allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as readonly string[]).includes(value)) throw new InvalidArgumentError(`Expected \`${flag}\` to be one of ${allowed.join(', ')}, got \`${value}\``);
    return value as T;
  };
}

function columnList(flag: string): (value: string) => string[] {
  return (value) => {
    const names = value.split(',').map((n) => n.trim());
    if (names.some((n) => n === '')) throw new InvalidArgumentError(`Expected \`${flag}\` to be column names separated by commas, got \`${value}\``);
    return names;
  };
}

export function addWriterOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--mode <mode>', 'how rows reach the server: copy or insert; or delete: each line holds a key (the --key columns), and the row with that key is deleted (a key that matches no row is counted as not found)')
        .default('copy')
        .argParser(oneOf('--mode', LOAD_COMMAND_MODES)),
    )
    .addOption(
      new Option('--insert-style <style>', 'with --mode insert: unnest (one INSERT … SELECT FROM unnest($1::type[], …) per batch; the default), values (multi-row VALUES), row (one row per statement)')
        .argParser(oneOf('--insert-style', INSERT_STYLES)),
    )
    .addOption(
      new Option(
        '--batch-rows <n>',
        `with --mode insert: rows per statement (values: capped at 65,535 parameters); for row, the rows --commit-every counts as a batch (default: ${Object.entries(DEFAULT_BATCH_ROWS).map(([style, n]) => `${style} ${n}`).join(', ')})`,
      ).argParser((v) => parseWholeNumber('--batch-rows', v)),
    )
    .addOption(
      new Option('--commit-every <n>', 'with --mode insert: commit every n batches; 0 = autocommit, each statement its own transaction (default: one transaction per chunk)')
        .argParser((v) => parseWholeNumber('--commit-every', v, 0)),
    )
    .addOption(wireOption())
    .addOption(
      new Option('--on-conflict <action>', onConflictHelp())
        .default(DEFAULT_ON_CONFLICT)
        .argParser(oneOf('--on-conflict', ON_CONFLICT)),
    )
    .addOption(
      new Option('--key <a,b>', 'with --on-conflict update or --mode delete: the unique key rows are matched by (default: the primary key, else the only unique key)').argParser(columnList('--key')),
    )
    .addOption(new Option('--update-columns <a,b>', 'with --on-conflict update: the columns a row sets on the row it replaces (default: every column of the file but the key; the others keep their values)').argParser(columnList('--update-columns')));
}

/** Validated once: INSERT's knobs make no sense with COPY. */
export function writerSpecFromFlags(flags: WriterFlags): WriterSpec {
  const keyed = flags.mode === 'delete' || flags.onConflict === 'update';
  if (flags.key !== undefined && !keyed) throw new LoadError('bad-option', '`--key` applies only to --on-conflict update and --mode delete', { hint: 'add one of them, or drop --key' });
  if (flags.updateColumns !== undefined && flags.onConflict !== 'update') throw new LoadError('bad-option', '`--update-columns` applies only to --on-conflict update', { hint: 'add --on-conflict update, or drop --update-columns' });
  if (keyed) {
    if (flags.mode === 'insert') throw new LoadError('bad-option', '`--on-conflict update` loads through COPY into a staging table', { hint: 'drop --mode insert' });
    if (flags.mode === 'delete' && flags.onConflict !== DEFAULT_ON_CONFLICT) throw new LoadError('bad-option', '`--mode delete` deletes by key: `--on-conflict` does not apply', { hint: 'drop --on-conflict' });
    const stray = ([['--insert-style', flags.insertStyle], ['--batch-rows', flags.batchRows], ['--commit-every', flags.commitEvery]] as const).find(([, v]) => v !== undefined);
    if (stray) throw new LoadError('bad-option', `\`${stray[0]}\` applies only to --mode insert`, { hint: 'drop the option' });
    return { mode: flags.mode, onConflict: flags.onConflict, key: flags.key, updateColumns: flags.updateColumns, ...(flags.wire !== undefined ? { wire: flags.wire } : {}) };
  }
  if (flags.mode === 'copy') {
    const stray = ([['--insert-style', flags.insertStyle], ['--batch-rows', flags.batchRows], ['--commit-every', flags.commitEvery]] as const).find(([, v]) => v !== undefined);
    if (stray) throw new LoadError('bad-option', `\`${stray[0]}\` applies only to --mode insert`, { hint: 'add --mode insert, or drop the option' });
    if (flags.wire === 'binary' && ON_CONFLICT_RULES[flags.onConflict].leavesOut) {
      throw new LoadError('bad-option', '`--wire binary` needs plain COPY, and `--on-conflict skip` loads through a staging table with INSERT', { hint: 'drop one of them' });
    }
    return { mode: 'copy', onConflict: flags.onConflict, ...(flags.wire !== undefined ? { wire: flags.wire } : {}) };
  }
  if (flags.wire !== undefined && flags.wire !== 'text') throw new LoadError('bad-option', `\`--wire ${flags.wire}\` applies only to --mode copy (INSERT binds its values as text parameters)`, { hint: 'drop --wire, or use --mode copy' });
  return {
    mode: 'insert',
    style: flags.insertStyle ?? 'unnest',
    ...(flags.batchRows !== undefined ? { batchRows: flags.batchRows } : {}),
    ...(flags.commitEvery !== undefined ? { commitEvery: flags.commitEvery } : {}),
    onConflict: flags.onConflict,
  };
}
