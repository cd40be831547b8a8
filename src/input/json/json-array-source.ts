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
  yield* new JsonArrayReader(options).chunks(blocks);
}

/** One run of `jsonArrayChunks`: the parser's state, the element being read, the chunk being filled. */
class JsonArrayReader {
  private readonly target: LoadTarget;
  private readonly chunkBytes: number;
  private readonly input: NonNullable<LoadTarget['input']>;
  private readonly mapper: JsonRowMapper;
  private readonly keySets: boolean;
  private readonly ignoreExtraKeys: boolean;
  private readonly path: string | undefined;
  private readonly where: string;
  private readonly parse: ReturnType<typeof jsonParser>;
  private readonly filter: ReturnType<typeof pick> | undefined;
  private readonly utf8: boolean;
  private readonly textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private readonly decode: ReturnType<typeof decoderFor>;
  private readonly skip: number;
  private readonly limit: number;

  private fed: number; // bytes of input given to the parser so far
  private chunkStart: number;
  private element = 0; // elements seen
  private arrays = 0; // arrays matched at the top of the picked stream
  private depth = 0; // nesting below the matched value
  private text = ''; // the JSON text of a nested value (or of an element that is not an object)
  private readonly needComma: boolean[] = [];
  private records: string[] = [];
  private recordBytes = 0;
  private firstRecord = 1;
  private keySet: string | undefined;
  private chunkColumns: string[] | undefined;
  private readonly out: Chunk[] = [];

  // The object element being read, field by field, straight from the tokens (no JSON text
  // is rebuilt for its scalar members; a nested value's text is, for its column to take).
  private readonly columns: JsonRowMapper['columns'];
  private readonly columnIndex: Map<string, number>;
  private readonly fields: string[];
  private readonly named: boolean[];
  private inObject = false; // the current element is an object (depth 2 is its members)
  private member = -1; // column of the current member; -1 when left out

  constructor(private readonly options: JsonArrayOptions) {
    const { target, chunkBytes } = options;
    this.target = target;
    this.chunkBytes = chunkBytes;
    const input = (this.input = target.input ?? {});
    if (target.jsonColumns === undefined) throw new Error('internal: JSON input without a column plan');
    this.mapper = new JsonRowMapper(target.jsonColumns, { ignoreExtraKeys: input.ignoreExtraKeys === true, tableName: target.table });
    this.keySets = input.missing === 'default';
    this.ignoreExtraKeys = input.ignoreExtraKeys === true;
    const path = (this.path = input.jsonPath);
    this.where = path === undefined ? 'the document' : `--json-path ${path}`;
    this.parse = jsonParser({ streamValues: false });
    this.filter = path === undefined ? undefined : pick({ filter: path, pathSeparator: '.' });
    this.utf8 = isUtf8(input.encoding);
    this.decode = decoderFor(input.encoding);
    this.skip = input.skip ?? 0;
    this.limit = input.limit ?? Infinity;
    this.fed = options.startOffset;
    this.chunkStart = options.startOffset;
    this.columns = this.mapper.columns;
    this.columnIndex = new Map(this.columns.map((c, i) => [c.name, i]));
    this.fields = new Array<string>(this.columns.length);
    this.named = new Array<boolean>(this.columns.length);
  }

  /** Feeds the input to the parser a piece at a time and yields the chunks its elements fill. */
  async *chunks(blocks: AsyncIterable<Buffer>): AsyncGenerator<Chunk> {
    try {
      for await (const block of blocks) {
        for (let at = 0; at < block.length; at += PIECE) {
          const bytes = block.subarray(at, at + PIECE);
          let s: string;
          try {
            s = this.utf8 ? this.textDecoder.decode(bytes, { stream: true }) : this.decode(bytes);
          } catch {
            throw new LoadError('bad-input', `${this.target.file}: invalid UTF-8 between bytes ${this.fed} and ${this.fed + bytes.length}`, {
              hint: `give --encoding if the input is not UTF-8; else ${START_OVER_HINT}`,
              startOver: true,
            });
          }
          this.fed += bytes.length;
          this.feed(s);
          for (const c of this.out.splice(0)) yield c;
          if (this.element - this.skip >= this.limit) {
            this.flush();
            for (const c of this.out.splice(0)) yield c;
            return; // --limit reached: stop reading
          }
        }
      }
      if (this.utf8) {
        let last: string;
        try {
          last = this.textDecoder.decode();
        } catch {
          throw new LoadError('bad-input', `${this.target.file}: the input ends inside a UTF-8 character`);
        }
        this.feed(last);
      }
      this.feed(NONE);
    } catch (error) {
      if (error instanceof LoadError) throw error;
      if (error instanceof Error && /^Parser /.test(error.message)) throw await this.syntaxError(error);
      throw error;
    }
    if (this.arrays === 0) {
      throw new LoadError('bad-input', `${this.target.file}: ${this.path === undefined ? 'the input is empty' : `no value at --json-path ${this.path}`}`, {
        hint: this.path === undefined ? 'a JSON array input is one array of objects: [{"a": 1}, …]' : 'check the path: keys joined by dots, e.g. data.items',
      });
    }
    this.flush();
    for (const c of this.out.splice(0)) yield c;
  }

  private flush(): void {
    if (this.records.length === 0) return;
    const data = Buffer.from(this.records.join('\n') + '\n', 'utf8');
    this.out.push({
      location: { file: this.target.file, byteOffset: this.chunkStart, byteLength: this.fed - this.chunkStart, firstLine: undefined, firstRecord: this.firstRecord },
      data,
      // Rows are kept as converted: a rejected element goes to the reject file as its COPY text line.
      source: data,
      records: this.records.length,
      lines: this.records.length,
      target: this.chunkColumns === undefined ? this.target : { ...this.target, columns: this.chunkColumns },
    });
    this.chunkStart = this.fed;
    this.records = [];
    this.recordBytes = 0;
  }

  private elementError(error: JsonRecordError): LoadError {
    return new LoadError('bad-input', `${this.target.file}: array element ${this.element} (near byte ${this.fed}): ${error.message}`, {
      location: { file: this.target.file, byteOffset: this.chunkStart, byteLength: this.fed - this.chunkStart, firstLine: undefined, firstRecord: this.element },
      hint: START_OVER_HINT,
      startOver: true,
      cause: error,
    });
  }

  private addRecord(record: string, present: string | undefined): void {
    if (present !== undefined) {
      if (!present.includes('1')) {
        throw new LoadError('bad-input', `${this.target.file}: array element ${this.element}: an object with no column keys cannot take the column defaults (--missing default)`);
      }
      if (this.keySet !== undefined && present !== this.keySet) this.flush();
      if (this.records.length === 0) this.chunkColumns = this.mapper.columnsOf(present);
      this.keySet = present;
    }
    if (this.records.length === 0) this.firstRecord = this.element - this.skip;
    this.records.push(record);
    this.recordBytes += record.length + 1;
    if (this.recordBytes >= this.chunkBytes) this.flush();
  }

  /** An element that is not an object: its text goes through the NDJSON mapper, which says what is wrong. */
  private finishOtherElement(): void {
    this.element++;
    const value = this.text;
    this.text = '';
    if (this.element <= this.skip || this.element - this.skip > this.limit) return;
    try {
      this.addRecord(this.mapper.toCopyText(value, this.keySets), this.keySets ? this.mapper.present : undefined);
    } catch (error) {
      throw error instanceof JsonRecordError ? this.elementError(error) : error;
    }
  }

  private setField(value: string): void {
    if (this.member < 0) return;
    this.fields[this.member] = value;
    this.named[this.member] = true;
  }

  private finishObjectElement(): void {
    this.inObject = false;
    this.element++;
    if (this.element <= this.skip || this.element - this.skip > this.limit) return;
    if (!this.keySets) return this.addRecord(this.fields.join('\t'), undefined);
    this.addRecord(this.fields.filter((_, i) => this.named[i]).join('\t'), this.named.map((b) => (b ? '1' : '0')).join(''));
  }

  private add(piece: string): void {
    if (this.needComma.length > 0 && this.needComma[this.needComma.length - 1]) this.text += ',';
    this.text += piece;
  }

  /** Builds the JSON text of a nested value (or of an element that is not an object). */
  private capture(t: Token): void {
    switch (t.name) {
      case 'startObject':
      case 'startArray':
        this.add(t.name === 'startObject' ? '{' : '[');
        if (this.needComma.length > 0) this.needComma[this.needComma.length - 1] = true;
        this.needComma.push(false);
        this.depth++;
        return;
      case 'endObject':
      case 'endArray':
        this.depth--;
        this.needComma.pop();
        this.text += t.name === 'endObject' ? '}' : ']';
        return;
      case 'keyValue':
        this.add(JSON.stringify(t.value) + ':');
        this.needComma[this.needComma.length - 1] = false; // the value follows the colon
        return;
      case 'stringValue':
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.add(t.name === 'stringValue' ? JSON.stringify(t.value) : t.name === 'numberValue' ? t.value : String(t.value));
        if (this.needComma.length > 0) this.needComma[this.needComma.length - 1] = true;
        return;
      default:
        return;
    }
  }

  private onToken(t: Token): void {
    if (this.depth === 0) {
      // The matched value itself: it must be an array.
      if (t.name !== 'startArray') {
        throw new LoadError('bad-input', `${this.target.file}: ${this.where} is not a JSON array (it starts with ${t.name.replace(/Value$/, '').replace(/^start/, '').toLowerCase() || t.name})`, {
          hint: this.path === undefined ? 'give --json-path to name the array inside the document (e.g. data.items), or use NDJSON (-f ndjson)' : 'check the path: keys joined by dots',
        });
      }
      if (++this.arrays > 1) throw new LoadError('bad-input', `${this.target.file}: ${this.where} matches more than one array`);
      this.depth = 1;
      return;
    }
    if (this.depth === 1) {
      if (t.name === 'endArray') {
        this.depth = 0; // the end of the matched array
      } else if (t.name === 'startObject') {
        this.inObject = true;
        this.fields.fill('\\N');
        this.named.fill(false);
        this.member = -1;
        this.depth = 2;
      } else {
        this.capture(t);
        if (this.depth === 1) this.finishOtherElement();
      }
      return;
    }
    if (!this.inObject) {
      this.capture(t);
      if (this.depth === 1) this.finishOtherElement();
      return;
    }
    if (this.depth === 2) {
      switch (t.name) {
        case 'keyValue': {
          const i = this.columnIndex.get(t.value);
          if (i === undefined && !this.ignoreExtraKeys) {
            this.element++;
            throw this.elementError(new JsonRecordError(`key ${JSON.stringify(t.value)} is not a column of ${this.target.table} (--ignore-extra-keys leaves such keys out)`, 0, 'extra-key'));
          }
          this.member = i ?? -1;
          return;
        }
        case 'endObject':
          this.depth = 1;
          this.finishObjectElement();
          return;
        case 'startObject':
        case 'startArray':
          this.text = '';
          this.needComma.length = 0;
          this.capture(t);
          return;
        case 'nullValue':
          this.setField('\\N');
          return;
        case 'stringValue':
          if (this.member >= 0) this.setField(copyTextField(this.columns[this.member]!.kind === 'json' ? JSON.stringify(t.value) : t.value));
          return;
        case 'numberValue':
          this.setField(t.value);
          return;
        case 'trueValue':
        case 'falseValue':
          this.setField(String(t.value));
          return;
        default:
          return;
      }
    }
    // Inside a member's object or array value.
    this.capture(t);
    if (this.depth === 2 && this.member >= 0) {
      try {
        this.setField(fieldFor(this.columns[this.member]!, this.text, 0, this.text.length));
      } catch (error) {
        throw error instanceof JsonRecordError ? this.elementError(error) : error;
      }
    }
  }

  private feed(s: string | typeof NONE): void {
    for (const token of values<Token>(this.parse(s as string))) {
      if (this.filter === undefined) this.onToken(token);
      else for (const picked of values<Token>(this.filter(token))) this.onToken(picked);
    }
  }

  private async syntaxError(error: Error): Promise<LoadError> {
    const exact = this.options.reopen ? await locateSyntaxError(this.options.reopen(), this.input.encoding).catch(() => undefined) : undefined;
    const place = exact ? `at line ${exact.line}, column ${exact.pos}` : `near byte ${this.fed}`;
    const what = error.message.replace(/^Parser cannot parse input: /, '').replace(/^Parser has expected/, 'expected');
    if (this.fed === this.options.startOffset) return new LoadError('bad-input', `${this.target.file}: the input is empty`, { hint: 'a JSON array input is one array of objects: [{"a": 1}, …]' });
    return new LoadError('bad-input', `${this.target.file}: malformed JSON ${place}: ${what}${exact ? ` (character offset ${exact.offset})` : ` (the parser had read ${this.fed} bytes)`}`, {
      location: { file: this.target.file, byteOffset: this.chunkStart, byteLength: this.fed - this.chunkStart, firstLine: exact?.line, firstRecord: this.element + 1 },
      hint: START_OVER_HINT,
      startOver: true,
      cause: error,
    });
  }
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
