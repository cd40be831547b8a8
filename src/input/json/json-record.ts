import { arrayElements, JsonSyntaxError, objectMembers, stringValue } from './json-scan.js';

declare module '../../core/chunk.js' {
  interface TargetInputFields {
    /** JSON inputs: how each of `columns` takes a JSON value (json, array or scalar). */
    readonly jsonColumns?: readonly JsonColumn[];
  }
}

/**
 * How a JSON value becomes a column value: what PostgreSQL's own `json_populate_record`
 * makes of it, so a user can predict it.
 * - `null` → NULL; a missing key → NULL (or the column default, see `--missing`).
 * - json/jsonb column → the value's JSON text (a string stays a JSON string).
 * - array column ← a JSON array → a PostgreSQL array literal (nested arrays: dimensions).
 * - numbers, strings, booleans → their text, for the column type's input function
 *   (numbers keep their exact text: 1.50 stays 1.50, 2^64 stays exact).
 * - an object or array into any other column → its JSON text.
 */
export type JsonColumnKind = 'json' | 'array' | 'scalar';

export interface JsonColumn {
  readonly name: string;
  /** The key that fills it, when that is not its name (`InputOptions.keys`). */
  readonly key?: string;
  readonly kind: JsonColumnKind;
  /** For an array column: its elements are json/jsonb, so they keep their JSON text. */
  readonly elementJson?: boolean;
}

/** A problem with one record's content; `at` is its index in the record's text. */
export class JsonRecordError extends Error {
  constructor(
    message: string,
    readonly at: number,
    readonly kind: 'syntax' | 'extra-key' | 'not-object',
  ) {
    super(message);
    this.name = 'JsonRecordError';
  }
}

export interface JsonMappingOptions {
  /** Keys that name no column are left out instead of being an error. */
  readonly ignoreExtraKeys: boolean;
  /** For messages: the table. */
  readonly tableName: string;
}

const COPY_NULL = '\\N';
const NEEDS_COPY_ESCAPE = /[\\\n\r\t]/;

/** A value as a field of COPY's text format (tab-delimited, `\N` for NULL). */
export function copyTextField(v: string): string {
  if (!NEEDS_COPY_ESCAPE.test(v)) return v;
  return v.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

function arrayElementLiteral(s: string, start: number, end: number, elementJson: boolean): string {
  const c = s.charCodeAt(start);
  if (c === 0x6e) return 'NULL';
  if (c === 0x5b && !elementJson) return arrayLiteral(s, start, elementJson);
  let text: string;
  if (elementJson) text = s.slice(start, end);
  else if (c === 0x22) text = stringValue(s, start, end);
  else text = s.slice(start, end);
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

/** A JSON array `[…]` at `start` → a PostgreSQL array literal `{…}`. */
export function arrayLiteral(s: string, start: number, elementJson: boolean): string {
  const parts = arrayElements(s, start).map((e) => arrayElementLiteral(s, e.start, e.end, elementJson));
  return `{${parts.join(',')}}`;
}

/** One member's value as a COPY text field for `column`. */
export function fieldFor(column: JsonColumn, s: string, start: number, end: number): string {
  const c = s.charCodeAt(start);
  if (c === 0x6e) return COPY_NULL; // null
  if (column.kind === 'json') return copyTextField(s.slice(start, end));
  if (c === 0x22) return copyTextField(stringValue(s, start, end));
  if (c === 0x5b && column.kind === 'array') return copyTextField(arrayLiteral(s, start, column.elementJson === true));
  return copyTextField(s.slice(start, end)); // number, true/false, or an object/array's JSON text
}

/**
 * Maps JSON objects to COPY text records over a fixed list of columns (the COPY column
 * list, in order). `present` tells which columns the last record named (for `--missing default`).
 */
export class JsonRowMapper {
  private readonly index = new Map<string, number>();
  private readonly fields: string[];
  /** Columns named by the last record mapped, as a string of 0/1 (a key-set id). */
  present = '';

  constructor(
    readonly columns: readonly JsonColumn[],
    private readonly options: JsonMappingOptions,
  ) {
    columns.forEach((c, i) => this.index.set(c.key ?? c.name, i));
    this.fields = new Array<string>(columns.length);
  }

  /** One object's text → one COPY text record (no newline). With `keySet`, leaves out unnamed columns. */
  toCopyText(s: string, keySet = false): string {
    let members;
    try {
      members = objectMembers(s);
    } catch (error) {
      if (error instanceof JsonSyntaxError) {
        throw new JsonRecordError(`malformed JSON: ${error.message}`, error.at, error.message.startsWith('expected a JSON object') ? 'not-object' : 'syntax');
      }
      throw error;
    }
    const { fields, columns } = this;
    fields.fill(COPY_NULL);
    const named = keySet ? new Array<boolean>(columns.length).fill(false) : undefined;
    for (const m of members) {
      const i = this.index.get(m.key);
      if (i === undefined) {
        if (this.options.ignoreExtraKeys) continue;
        throw new JsonRecordError(`key ${JSON.stringify(m.key)} is not a column of ${this.options.tableName} (--ignore-extra-keys leaves such keys out)`, m.keyAt, 'extra-key');
      }
      fields[i] = fieldFor(columns[i]!, s, m.start, m.end);
      if (named) named[i] = true;
    }
    if (!named) return fields.join('\t');
    this.present = named.map((b) => (b ? '1' : '0')).join('');
    return fields.filter((_, i) => named[i]).join('\t');
  }

  /** Column names for a key-set id from `present`. */
  columnsOf(present: string): string[] {
    return this.columns.filter((_, i) => present[i] === '1').map((c) => c.name);
  }
}
