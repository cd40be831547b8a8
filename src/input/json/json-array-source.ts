import { jsonParser, type Token } from 'stream-json/core/parser.js';
import pick from 'stream-json/core/filters/pick.js';
import { jsonVerifier } from 'stream-json/core/utils/verifier.js';
import type { Chunk, LoadTarget } from '../../core/chunk.js';
import { LoadError, START_OVER_HINT } from '../../core/load-error.js';
import { copyTextField, fieldFor, JsonRecordError, JsonRowMapper } from './json-record.js';
import { decoderFor, isUtf8, type InputEncoding } from '../encodings.js';
import { dropBom } from '../record-window.js';

/*
 * stream-json's core functions are synchronous "flushable" stages: call with text, get
 * nothing, one value or several; call with `none` at the end. Their markers are
 * registered symbols (stream-chain's defs), so they are named here without importing it.
 */
const NONE = Symbol.for('object-stream.none');
const STOP = Symbol.for('object-stream.stop');
const MANY = Symbol.for('object-stream.many');
type StageResult = unknown;

function values<T>(r: StageResult): T[] {
  if (r === NONE || r === STOP || r === undefined) return [];
  if (typeof r === 'object' && r !== null && MANY in r) return (r as unknown as { values: T[] }).values;
  return [r as T];
}

/** Text fed to the parser at a time: bounds how far a byte offset in a message can be from the truth. */
const PIECE = 64 * 1024;

export interface JsonArrayOptions {
  readonly target: LoadTarget;
  readonly chunkBytes: number;
  /** Offset of the first byte of `blocks` in the input (after a byte-order mark). */
  readonly startOffset: number;
  /** Opens the input again from its start, to locate a syntax error exactly (files only). */
  readonly reopen?: () => AsyncIterable<Buffer>;
}

/**
 * A JSON array — the whole document, or the one at `--json-path` inside it — streamed
 * element by element (stream-json's tokenizer and `pick`), so memory holds one element
 * and one chunk of records, whatever the document's size. Each element, an object, becomes
 * one COPY text record over the target's columns (the same mapping as NDJSON).
 *
 * A chunk's location: the bytes read while its elements were parsed (exact to within
 * 64 KB) and `firstRecord`, the index of its first element (1-based).
 */
export async function* jsonArrayChunks(blocks: AsyncIterable<Buffer>, options: JsonArrayOptions): AsyncGenerator<Chunk> {
  const { target, chunkBytes } = options;
  const input = target.input ?? {};
  if (target.jsonColumns === undefined) throw new Error('internal: JSON input without a column plan');
  const mapper = new JsonRowMapper(target.jsonColumns, { ignoreExtraKeys: input.ignoreExtraKeys === true, tableName: target.table });
  const keySets = input.missing === 'default';
  const ignoreExtraKeys = input.ignoreExtraKeys === true;
  const path = input.jsonPath;
  const where = path === undefined ? 'the document' : `--json-path ${path}`;
  const parse = jsonParser({ streamValues: false });
  const filter = path === undefined ? undefined : pick({ filter: path, pathSeparator: '.' });
  const utf8 = isUtf8(input.encoding);
  const textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const decode = decoderFor(input.encoding);
  const skip = input.skip ?? 0;
  const limit = input.limit ?? Infinity;

  let fed = options.startOffset; // bytes of input given to the parser so far
  let chunkStart = options.startOffset;
  let element = 0; // elements seen
  let arrays = 0; // arrays matched at the top of the picked stream
  let depth = 0; // nesting below the matched value
  let text = ''; // the JSON text of a nested value (or of an element that is not an object)
  const needComma: boolean[] = [];
  let records: string[] = [];
  let recordBytes = 0;
  let firstRecord = 1;
  let keySet: string | undefined;
  let chunkColumns: string[] | undefined;
  const out: Chunk[] = [];

  const flush = (): void => {
    if (records.length === 0) return;
    const data = Buffer.from(records.join('\n') + '\n', 'utf8');
    out.push({
      location: { file: target.file, byteOffset: chunkStart, byteLength: fed - chunkStart, firstLine: undefined, firstRecord },
      data,
      // Rows are kept as converted: a rejected element goes to the reject file as its COPY text line.
      source: data,
      records: records.length,
      lines: records.length,
      target: chunkColumns === undefined ? target : { ...target, columns: chunkColumns },
    });
    chunkStart = fed;
    records = [];
    recordBytes = 0;
  };

  const elementError = (error: JsonRecordError): LoadError =>
    new LoadError('bad-input', `${target.file}: array element ${element} (near byte ${fed}): ${error.message}`, {
      location: { file: target.file, byteOffset: chunkStart, byteLength: fed - chunkStart, firstLine: undefined, firstRecord: element },
      hint: START_OVER_HINT,
      startOver: true,
      cause: error,
    });

  const addRecord = (record: string, present: string | undefined): void => {
    if (present !== undefined) {
      if (!present.includes('1')) {
        throw new LoadError('bad-input', `${target.file}: array element ${element}: an object with no column keys cannot take the column defaults (--missing default)`);
      }
      if (keySet !== undefined && present !== keySet) flush();
      if (records.length === 0) chunkColumns = mapper.columnsOf(present);
      keySet = present;
    }
    if (records.length === 0) firstRecord = element - skip;
    records.push(record);
    recordBytes += record.length + 1;
    if (recordBytes >= chunkBytes) flush();
  };

  /** An element that is not an object: its text goes through the NDJSON mapper, which says what is wrong. */
  const finishOtherElement = (): void => {
    element++;
    const value = text;
    text = '';
    if (element <= skip || element - skip > limit) return;
    try {
      addRecord(mapper.toCopyText(value, keySets), keySets ? mapper.present : undefined);
    } catch (error) {
      throw error instanceof JsonRecordError ? elementError(error) : error;
    }
  };

  // The object element being read, field by field, straight from the tokens (no JSON text
  // is rebuilt for its scalar members; a nested value's text is, for its column to take).
  const { columns } = mapper;
  const columnIndex = new Map(columns.map((c, i) => [c.name, i]));
  const fields = new Array<string>(columns.length);
  const named = new Array<boolean>(columns.length);
  let inObject = false; // the current element is an object (depth 2 is its members)
  let member = -1; // column of the current member; -1 when left out

  const setField = (value: string): void => {
    if (member < 0) return;
    fields[member] = value;
    named[member] = true;
  };

  const finishObjectElement = (): void => {
    inObject = false;
    element++;
    if (element <= skip || element - skip > limit) return;
    if (!keySets) return addRecord(fields.join('\t'), undefined);
    addRecord(fields.filter((_, i) => named[i]).join('\t'), named.map((b) => (b ? '1' : '0')).join(''));
  };

  const add = (piece: string): void => {
    if (needComma.length > 0 && needComma[needComma.length - 1]) text += ',';
    text += piece;
  };

  /** Builds the JSON text of a nested value (or of an element that is not an object). */
  const capture = (t: Token): void => {
    switch (t.name) {
      case 'startObject':
      case 'startArray':
        add(t.name === 'startObject' ? '{' : '[');
        if (needComma.length > 0) needComma[needComma.length - 1] = true;
        needComma.push(false);
        depth++;
        return;
      case 'endObject':
      case 'endArray':
        depth--;
        needComma.pop();
        text += t.name === 'endObject' ? '}' : ']';
        return;
      case 'keyValue':
        add(JSON.stringify(t.value) + ':');
        needComma[needComma.length - 1] = false; // the value follows the colon
        return;
      case 'stringValue':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        add(t.name === 'stringValue' ? JSON.stringify(t.value) : t.name === 'numberValue' ? t.value : String(t.value));
        if (needComma.length > 0) needComma[needComma.length - 1] = true;
        return;
      default:
        return;
    }
  };

  const onToken = (t: Token): void => {
    if (depth === 0) {
      // The matched value itself: it must be an array.
      if (t.name !== 'startArray') {
        throw new LoadError('bad-input', `${target.file}: ${where} is not a JSON array (it starts with ${t.name.replace(/Value$/, '').replace(/^start/, '').toLowerCase() || t.name})`, {
          hint: path === undefined ? 'give --json-path to name the array inside the document (e.g. data.items), or use NDJSON (-f ndjson)' : 'check the path: keys joined by dots',
        });
      }
      if (++arrays > 1) throw new LoadError('bad-input', `${target.file}: ${where} matches more than one array`);
      depth = 1;
      return;
    }
    if (depth === 1) {
      if (t.name === 'endArray') {
        depth = 0; // the end of the matched array
      } else if (t.name === 'startObject') {
        inObject = true;
        fields.fill('\\N');
        named.fill(false);
        member = -1;
        depth = 2;
      } else {
        capture(t);
        if (depth === 1) finishOtherElement();
      }
      return;
    }
    if (!inObject) {
      capture(t);
      if (depth === 1) finishOtherElement();
      return;
    }
    if (depth === 2) {
      switch (t.name) {
        case 'keyValue': {
          const i = columnIndex.get(t.value);
          if (i === undefined && !ignoreExtraKeys) {
            element++;
            throw elementError(new JsonRecordError(`key ${JSON.stringify(t.value)} is not a column of ${target.table} (--ignore-extra-keys leaves such keys out)`, 0, 'extra-key'));
          }
          member = i ?? -1;
          return;
        }
        case 'endObject':
          depth = 1;
          finishObjectElement();
          return;
        case 'startObject':
        case 'startArray':
          text = '';
          needComma.length = 0;
          capture(t);
          return;
        case 'nullValue':
          setField('\\N');
          return;
        case 'stringValue':
          if (member >= 0) setField(copyTextField(columns[member]!.kind === 'json' ? JSON.stringify(t.value) : t.value));
          return;
        case 'numberValue':
          setField(t.value);
          return;
        case 'trueValue':
        case 'falseValue':
          setField(String(t.value));
          return;
        default:
          return;
      }
    }
    // Inside a member's object or array value.
    capture(t);
    if (depth === 2 && member >= 0) {
      try {
        setField(fieldFor(columns[member]!, text, 0, text.length));
      } catch (error) {
        throw error instanceof JsonRecordError ? elementError(error) : error;
      }
    }
  };

  const feed = (s: string | typeof NONE): void => {
    for (const token of values<Token>(parse(s as string))) {
      if (filter === undefined) onToken(token);
      else for (const picked of values<Token>(filter(token))) onToken(picked);
    }
  };

  const syntaxError = async (error: Error): Promise<LoadError> => {
    const exact = options.reopen ? await locateSyntaxError(options.reopen(), input.encoding).catch(() => undefined) : undefined;
    const place = exact ? `at line ${exact.line}, column ${exact.pos}` : `near byte ${fed}`;
    const what = error.message.replace(/^Parser cannot parse input: /, '').replace(/^Parser has expected/, 'expected');
    if (fed === options.startOffset) return new LoadError('bad-input', `${target.file}: the input is empty`, { hint: 'a JSON array input is one array of objects: [{"a": 1}, …]' });
    return new LoadError('bad-input', `${target.file}: malformed JSON ${place}: ${what}${exact ? ` (character offset ${exact.offset})` : ` (the parser had read ${fed} bytes)`}`, {
      location: { file: target.file, byteOffset: chunkStart, byteLength: fed - chunkStart, firstLine: exact?.line, firstRecord: element + 1 },
      hint: START_OVER_HINT,
      startOver: true,
      cause: error,
    });
  };

  try {
    for await (const block of blocks) {
      for (let at = 0; at < block.length; at += PIECE) {
        const bytes = block.subarray(at, at + PIECE);
        let s: string;
        try {
          s = utf8 ? textDecoder.decode(bytes, { stream: true }) : decode(bytes);
        } catch {
          throw new LoadError('bad-input', `${target.file}: invalid UTF-8 between bytes ${fed} and ${fed + bytes.length}`, {
            hint: `give --encoding if the input is not UTF-8; else ${START_OVER_HINT}`,
            startOver: true,
          });
        }
        fed += bytes.length;
        feed(s);
        for (const c of out.splice(0)) yield c;
        if (element - skip >= limit) {
          flush();
          for (const c of out.splice(0)) yield c;
          return; // --limit reached: stop reading
        }
      }
    }
    if (utf8) {
      let last: string;
      try {
        last = textDecoder.decode();
      } catch {
        throw new LoadError('bad-input', `${target.file}: the input ends inside a UTF-8 character`);
      }
      feed(last);
    }
    feed(NONE);
  } catch (error) {
    if (error instanceof LoadError) throw error;
    if (error instanceof Error && /^Parser /.test(error.message)) throw await syntaxError(error);
    throw error;
  }
  if (arrays === 0) {
    throw new LoadError('bad-input', `${target.file}: ${path === undefined ? 'the input is empty' : `no value at --json-path ${path}`}`, {
      hint: path === undefined ? 'a JSON array input is one array of objects: [{"a": 1}, …]' : 'check the path: keys joined by dots, e.g. data.items',
    });
  }
  flush();
  for (const c of out.splice(0)) yield c;
}

/** Runs stream-json's verifier over the input from its start: the exact line, column and offset of a syntax error. */
async function locateSyntaxError(input: AsyncIterable<Buffer>, encoding: InputEncoding | undefined): Promise<{ line: number; pos: number; offset: number } | undefined> {
  const verify = jsonVerifier();
  const utf8 = isUtf8(encoding);
  const textDecoder = new TextDecoder('utf-8');
  const decode = decoderFor(encoding);
  const { rest: blocks } = await dropBom(input); // the verifier takes a byte-order mark for an error
  try {
    for await (const block of blocks) verify(utf8 ? textDecoder.decode(block, { stream: true }) : decode(block));
    verify(NONE as unknown as string);
  } catch (error) {
    const e = error as { line?: number; pos?: number; offset?: number };
    if (typeof e.line === 'number' && typeof e.pos === 'number' && typeof e.offset === 'number') return { line: e.line, pos: e.pos, offset: e.offset };
  }
  return undefined;
}
