import { InvalidArgumentError, Option, type Command } from 'commander';
import { LoadError } from '../core/load-error.js';
import { DEFAULT_BATCH_ROWS, INSERT_STYLES, type InsertStyle } from '../writer/insert-writer.js';
import { DEFAULT_ON_CONFLICT, ON_CONFLICT, ON_CONFLICT_RULES, onConflictHelp, type OnConflict } from '../writer/on-conflict.js';
import { LOAD_MODES, type LoadMode, type WriterSpec } from '../writer/writer-for.js';
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
  mode: LoadMode;
  insertStyle?: InsertStyle;
  batchRows?: number;
  commitEvery?: number;
  onConflict: OnConflict;
  wire?: WireChoice;
}

function oneOf<T extends string>(flag: string, allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as readonly string[]).includes(value)) throw new InvalidArgumentError(`Expected \`${flag}\` to be one of ${allowed.join(', ')}, got \`${value}\``);
    return value as T;
  };
}

export function addWriterOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--mode <mode>', `how rows reach the server: ${LOAD_MODES.join(' or ')}`).default('copy').argParser(oneOf('--mode', LOAD_MODES)))
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
    );
}

/** Validated once: INSERT's knobs make no sense with COPY. */
export function writerSpecFromFlags(flags: WriterFlags): WriterSpec {
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
