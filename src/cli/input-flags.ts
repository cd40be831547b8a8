import { InvalidArgumentError, Option, type Command } from 'commander';
import { LoadError } from '../core/load-error.js';
import type { Format } from '../input/formats.js';
import { INPUT_ENCODINGS, parseEncoding, type InputEncoding } from '../input/encodings.js';
import type { InputOptions } from '../input/input-options.js';
import { parseWholeNumber } from './parse-options.js';

/** The `load` options that say how to read an input (header, columns, delimiters, encoding, JSON, skip/limit). */
export interface InputFlags {
  header?: 'skip' | 'match';
  columns?: string[];
  delimiter?: string;
  null?: string;
  quote?: string;
  escape?: string;
  encoding?: InputEncoding;
  compression?: 'gzip' | 'none';
  jsonPath?: string;
  ignoreExtraKeys?: boolean;
  missing?: 'null' | 'default';
  skip?: number;
  limit?: number;
}

export function parseHeaderMode(value: string | boolean): 'skip' | 'match' {
  if (value === true || value === 'skip') return 'skip';
  if (value === 'match') return 'match';
  throw new InvalidArgumentError(`Expected \`--header\` to be given alone, or as \`--header match\`, got \`${String(value)}\``);
}

export function parseColumnList(value: string): string[] {
  const names = value.split(',').map((n) => n.trim());
  if (names.some((n) => n === '')) throw new InvalidArgumentError(`Expected \`--columns\` to be column names separated by commas, got \`${value}\``);
  return names;
}

/** COPY takes a single one-byte character for DELIMITER, QUOTE and ESCAPE. */
export function parseSingleByte(flag: string, value: string): string {
  if (Buffer.byteLength(value) !== 1 || value === '\n' || value === '\r') {
    throw new InvalidArgumentError(`Expected \`${flag}\` to be one single-byte character (not a newline), got \`${value}\``);
  }
  return value;
}

export function parseEncodingFlag(value: string): InputEncoding {
  const e = parseEncoding(value);
  if (e === undefined) throw new InvalidArgumentError(`Expected \`--encoding\` to be one of ${INPUT_ENCODINGS.join(', ')} (or an alias such as windows-1252, iso-8859-1), got \`${value}\``);
  return e;
}

export function addInputOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--header [match]', 'the first line is a header: skip it (csv, text, tbl); `--header match` loads columns in the order it names them').argParser(parseHeaderMode))
    .addOption(new Option('--columns <a,b,c>', 'load into these columns, in this order (COPY\'s column list); the others get their defaults').argParser(parseColumnList))
    .addOption(new Option('--delimiter <char>', 'field delimiter, as COPY\'s DELIMITER (text: tab, csv: comma)').argParser((v) => parseSingleByte('--delimiter', v)))
    .option('--null <string>', 'the string that means NULL, as COPY\'s NULL (text: \\N, csv: an empty unquoted field)')
    .addOption(new Option('--quote <char>', 'CSV quote character, as COPY\'s QUOTE (default ")').argParser((v) => parseSingleByte('--quote', v)))
    .addOption(new Option('--escape <char>', 'CSV escape character, as COPY\'s ESCAPE (default: the quote)').argParser((v) => parseSingleByte('--escape', v)))
    .addOption(new Option('--encoding <name>', `input encoding, converted to UTF-8 by pgsurge: ${INPUT_ENCODINGS.join(', ')}`).argParser(parseEncodingFlag))
    .addOption(new Option('--compression <kind>', 'input compression (default: from the name, .gz is gzip)').choices(['gzip', 'none']))
    .option('--json-path <path>', 'JSON arrays: the array inside the document, keys joined by dots (e.g. data.items)')
    .option('--ignore-extra-keys', 'JSON: leave out keys that are not columns (default: stop at the first one)')
    .addOption(new Option('--missing <null|default>', 'JSON: a missing key is NULL (default), or takes the column default').choices(['null', 'default']))
    .addOption(new Option('--skip <rows>', 'leave out the first rows (after a header); reads the input sequentially').argParser((v) => parseWholeNumber('--skip', v, 0)))
    .addOption(new Option('--limit <rows>', 'load at most this many rows; reads the input sequentially').argParser((v) => parseWholeNumber('--limit', v, 0)));
}

/** The flags as input options, checked against the input's format: each message names the flag. */
export function inputOptionsFor(format: Format, flags: InputFlags): InputOptions {
  const json = format === 'ndjson' || format === 'json';
  const parquet = format === 'parquet';
  const only = (flag: string, value: unknown, ok: boolean, formats: string): void => {
    if (value !== undefined && !ok) throw new LoadError('bad-option', `\`${flag}\` is for ${formats} input, not ${format}`);
  };
  only('--header', flags.header, !json && !parquet, 'csv, text and tbl');
  only('--delimiter', flags.delimiter, format === 'text' || format === 'csv', 'text and csv');
  only('--null', flags.null, !json && !parquet, 'csv, text and tbl');
  // A Parquet file is typed and self-describing: no text options; rows are addressed by row group, not counted from the start.
  for (const [flag, value] of [['--encoding', flags.encoding], ['--compression', flags.compression], ['--skip', flags.skip], ['--limit', flags.limit]] as const) {
    only(flag, value, !parquet, 'text-based (tbl, text, csv, ndjson, json)');
  }
  only('--quote', flags.quote, format === 'csv', 'csv');
  only('--escape', flags.escape, format === 'csv', 'csv');
  only('--json-path', flags.jsonPath, format === 'json', 'json (array)');
  only('--ignore-extra-keys', flags.ignoreExtraKeys, json, 'json and ndjson');
  only('--missing', flags.missing, json, 'json and ndjson');
  if (flags.header === 'match' && flags.columns !== undefined) {
    throw new LoadError('bad-option', '`--header match` and `--columns` both name the columns: give one of them');
  }
  const out: { -readonly [K in keyof InputOptions]: InputOptions[K] } = {};
  for (const key of ['header', 'columns', 'delimiter', 'null', 'quote', 'escape', 'encoding', 'compression', 'jsonPath', 'ignoreExtraKeys', 'missing', 'skip', 'limit'] as const) {
    if (flags[key] !== undefined) (out as Record<string, unknown>)[key] = flags[key];
  }
  return out;
}
