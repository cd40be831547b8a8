import type { LoadTarget } from '../../core/chunk.js';
import { openBytes } from '../byte-input.js';
import { chooseColumns, namedColumns } from '../column-plan.js';
import { decoderFor } from '../encodings.js';
import type { Framer } from '../framer.js';
import type { InputFormat } from '../input-format.js';
import { LineFramer } from '../line-framer.js';
import { transcoded } from '../transcoded.js';
import { jsonArrayChunks } from './json-array-source.js';
import { jsonArrayKeys, ndjsonKeys } from './json-keys.js';
import { type JsonColumn, JsonRowMapper } from './json-record.js';
import { NdjsonFramer } from './ndjson-framer.js';

/** JSON records become one COPY text line each before a chunk exists: those lines are framed as COPY text. */
const copyLines = (): Framer => new LineFramer({ lineEnd: 'nl' });

function framer(target: LoadTarget): Framer {
  if (target.format === 'json') return transcoded(copyLines(), target);
  const input = target.input ?? {};
  if (target.jsonColumns === undefined) throw new Error('internal: NDJSON input without a column plan');
  const mapper = new JsonRowMapper(target.jsonColumns, { ignoreExtraKeys: input.ignoreExtraKeys === true, tableName: target.table });
  return new NdjsonFramer(mapper, decoderFor(input.encoding), input.missing === 'default');
}

/**
 * JSON objects mapped to columns by key: NDJSON (one object a line, so a file is cut into
 * byte ranges at line ends) and JSON arrays (streamed element by element by one reader).
 */
export const jsonFormat: InputFormat = {
  names: ['ndjson', 'json'],
  lineFramed: (format) => format === 'ndjson',
  /** The table's columns (or `--columns`), and how each takes a JSON value. */
  async plan(target, table) {
    const columns = await table();
    const { named, source } = await namedColumns(target);
    const chosen = chooseColumns(target, columns, named, source);
    const keys = target.input?.keys ?? {};
    const jsonColumns: JsonColumn[] = chosen.map((c) => ({ name: c.name, ...(keys[c.name] !== undefined ? { key: keys[c.name] } : {}), kind: c.kind, elementJson: c.elementJson }));
    return { ...target, columns: chosen.map((c) => c.name), jsonColumns };
  },
  open: (target, options) =>
    openBytes(target, options, {
      lineFramed: target.format === 'ndjson',
      framer,
      sourceFramer: jsonFormat.sourceFramer,
      ...(target.format === 'json' ? { fromStart: (blocks, t, o) => jsonArrayChunks(blocks, { target: t, ...o }) } : {}),
    }),
  framer,
  plainFramer: copyLines,
  // A JSON array's chunks keep their rows as converted (one COPY text line each).
  sourceFramer: (target) => (target.format === 'json' ? copyLines() : framer(target)),
  wireFramer: copyLines,
  /** The keys of the first objects (or of all of them), typed from their values. */
  describe: (target, options = {}) => (target.format === 'ndjson' ? ndjsonKeys(target, options) : jsonArrayKeys(target, options)),
};
