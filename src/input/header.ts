import type { LoadTarget } from '../core/chunk.js';
import { LoadError } from '../core/load-error.js';
import { decoderFor } from './encodings.js';
import { fileBlocks, readOnce, readOnceWhat } from './file-blocks.js';
import { dropBom, dropRecords, RecordEnds } from './record-window.js';

/** Record ends for an input's raw bytes: CSV's quotes matter, text's backslashes, every format's line ending. */
export function recordEndsFor(target: LoadTarget): RecordEnds {
  const options = { text: target.format === 'text' || target.format === 'tbl', lineEnd: target.lineEnd };
  if (target.format !== 'csv') return new RecordEnds(undefined, options);
  const quote = (target.input?.quote ?? '"').charCodeAt(0);
  const escape = (target.input?.escape ?? target.input?.quote ?? '"').charCodeAt(0);
  return new RecordEnds({ quote, escape }, options);
}

/** The column names in an input's first record (`--header match`), read before the load. */
export async function readHeaderNames(target: LoadTarget): Promise<string[]> {
  if (readOnce(target.file)) {
    throw new LoadError('bad-option', `\`--header match\` reads the first line before the load: it needs a regular file, and ${target.file === '-' ? 'the input is stdin' : readOnceWhat(target.file)}`, { hint: 'name the columns with --columns a,b,c and use --header to skip the line' });
  }
  const blocks = fileBlocks(target, 64 * 1024);
  let head: Buffer | undefined;
  try {
    const { rest } = await dropBom(blocks, target.file);
    const dropped = await dropRecords(rest, 1, recordEndsFor(target), true);
    head = dropped.head;
    await dropped.rest[Symbol.asyncIterator]().return?.();
  } finally {
    await blocks.return(undefined);
  }
  const line = decoderFor(target.input?.encoding)(head ?? Buffer.alloc(0)).replace(/(\r\n|\r|\n)$/, '');
  if (line === '') throw new LoadError('bad-input', `${target.file}: --header match, but the first line is empty`);
  return parseHeader(line, target);
}

/** Splits a header line as COPY would read it for the input's format. */
export function parseHeader(line: string, target: LoadTarget): string[] {
  const input = target.input ?? {};
  switch (target.format) {
    case 'tbl':
      return line.replace(/\|$/, '').split('|');
    case 'text':
      return line.split(input.delimiter ?? '\t').map((f) => f.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c));
    case 'csv':
      return splitCsv(line, input.delimiter ?? ',', input.quote ?? '"', input.escape ?? input.quote ?? '"');
    case 'ndjson':
    case 'json':
      throw new LoadError('bad-option', '`--header` is for csv, text and tbl input; JSON keys name the columns');
    case 'parquet':
      throw new LoadError('bad-option', '`--header` is for csv, text and tbl input; a Parquet file names its columns in its schema');
  }
}

function splitCsv(line: string, delimiter: string, quote: string, escape: string): string[] {
  const fields: string[] = [];
  let field = '';
  let inQuote = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (inQuote) {
      if (c === escape && (line[i + 1] === quote || (escape !== quote && line[i + 1] === escape))) field += line[++i];
      else if (c === quote) inQuote = false;
      else field += c;
    } else if (c === quote) inQuote = true;
    else if (c === delimiter) {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field);
  return fields;
}
