import type { LoadTarget } from '../core/chunk.js';
import { LoadError } from '../core/load-error.js';
import { readOnce, readOnceWhat } from './file-blocks.js';
import type { Format } from './formats.js';
import type { DescribeOptions, FileDescription, InputFormat } from './input-format.js';
import { jsonFormat } from './json/json-format.js';
import { parquetFormat } from './parquet/parquet-format.js';
import { textFormat } from './text/text-format.js';

/** Every input format pgsurge reads, one folder each: adding a format is adding its folder and its line here. */
const PLUG_INS: readonly InputFormat[] = [textFormat, jsonFormat, parquetFormat];

const BY_NAME = new Map<Format, InputFormat>(PLUG_INS.flatMap((p) => p.names.map((name) => [name, p] as const)));

/** The plug-in that reads `format`. */
export function inputFormat(format: Format): InputFormat {
  const plugIn = BY_NAME.get(format);
  if (plugIn === undefined) throw new Error(`internal: no input format reads ${format}`);
  return plugIn;
}

/** The columns an input declares (a Parquet schema, with types) or shows (a header line, JSON keys, sniffed values), and its dialect. */
export async function describeInput(target: LoadTarget, options: DescribeOptions = {}): Promise<FileDescription> {
  // Reading a sample would use up what the load is to read.
  if (readOnce(target.file)) throw new LoadError('bad-option', `describing an input needs a regular file, not ${readOnceWhat(target.file)}`, { hint: 'save the input to a file first, or create the table and load into it' });
  return inputFormat(target.format).describe(target, options);
}
