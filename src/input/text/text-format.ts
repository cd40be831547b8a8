import { promises as fs } from 'node:fs';
import type { LoadTarget } from '../../core/chunk.js';
import { openBytes } from '../byte-input.js';
import { fileLineEnd } from '../byte-ranges.js';
import { chooseColumns, namedColumns } from '../column-plan.js';
import { compressionOf } from '../file-blocks.js';
import { DELIMITED_FORMATS, type Format } from '../formats.js';
import type { Framer } from '../framer.js';
import type { InputFormat, OpenedInput, OpenOptions } from '../input-format.js';
import { LineFramer, type TextFramerOptions } from '../line-framer.js';
import { transcoded } from '../transcoded.js';
import { CsvFramer } from './csv-framer.js';
import { sniffTextFile } from './sniff-sample.js';
import { TblFramer } from './tbl-framer.js';

/** The CSV framer of an input: its quote and escape (COPY's defaults: `"`, and the quote). */
function csvFramer(target: LoadTarget, options: TextFramerOptions): CsvFramer {
  const input = target.input ?? {};
  const quote = (input.quote ?? '"').charCodeAt(0);
  const escape = (input.escape ?? input.quote ?? '"').charCodeAt(0);
  return new CsvFramer(quote, escape, options);
}

function plainFramer(format: Format, options: TextFramerOptions): Framer {
  if (format === 'tbl') return new TblFramer(options);
  if (format === 'csv') return new CsvFramer(undefined, undefined, options);
  return new LineFramer(options);
}

function framer(target: LoadTarget, options: { endsInput?: boolean }): Framer {
  const textOptions: TextFramerOptions = { lineEnd: target.lineEnd, ...options };
  return transcoded(target.format === 'csv' ? csvFramer(target, textOptions) : plainFramer(target.format, textOptions), target);
}

/**
 * Delimited text: PostgreSQL's text format (`text`), dbgen's `.tbl` (text with `|` after
 * every field) and CSV. Records are lines (in CSV, outside quotes); a header line may
 * name the columns (`--header match`).
 */
export const textFormat: InputFormat = {
  names: DELIMITED_FORMATS,
  lineFramed: (format) => format === 'tbl' || format === 'text',
  async plan(target, table) {
    const options = target.input ?? {};
    if (options.columns === undefined && options.header !== 'match') return target;
    const columns = await table();
    const { named, source } = await namedColumns(target);
    return named === undefined ? target : { ...target, columns: chooseColumns(target, columns, named, source).map((c) => c.name) };
  },
  async open(target: LoadTarget, options: OpenOptions): Promise<OpenedInput> {
    // Every chunk's records are framed by the file's line ending, from its first line.
    // (A pipe is not read here: its framer finds the line ending in its first block.)
    if (target.lineEnd === undefined && target.file !== '-' && compressionOf(target) === undefined && (await fs.stat(target.file)).isFile()) {
      const fh = await fs.open(target.file, 'r');
      try {
        const lineEnd = await fileLineEnd(fh, target);
        if (lineEnd !== undefined) target = { ...target, lineEnd };
      } finally {
        await fh.close();
      }
    }
    return openBytes(target, options, { lineFramed: textFormat.lineFramed(target.format), framer, sourceFramer: (t) => framer(t, {}) });
  },
  framer,
  plainFramer,
  sourceFramer: (target) => framer(target, {}),
  // Every record ends in `\n` on the wire, whatever the input's line ending.
  wireFramer: (target) => (target.format === 'csv' ? csvFramer(target, { lineEnd: 'nl' }) : new LineFramer({ lineEnd: 'nl' })),
  /** The dialect and the columns sniffed from a sample of the file's records (sniff-sample.ts): names from a header (or c1…cN), types from the values. */
  describe: (target, options = {}) => sniffTextFile(target, options),
};
