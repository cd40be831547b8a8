import { columnIdentifiers, numberedColumns } from '../column-names.js';
import type { DescribedColumn } from '../input-format.js';
import { ColumnTypes, type DateOrder } from '../value-types.js';

/**
 * Sniffing delimited text (CSV, PostgreSQL text, `.tbl`) from decoded samples of it: the
 * dialect from the file's first records, then each column's type from all the records
 * sampled. Pure: the sampling (which bytes, which encoding) is sniff-sample.ts's.
 */

export type TextFormat = 'csv' | 'text' | 'tbl';

/** How records are split into fields. */
export interface FieldRules {
  readonly format: TextFormat;
  readonly delimiter: string;
  /** CSV only. */
  readonly quote: string;
  readonly escape: string;
}

/** A record's fields: `values` as COPY reads them; `raws[i]` what COPY compares with its NULL string (undefined: never NULL, a quoted CSV field). */
export interface SplitRecord {
  readonly values: string[];
  readonly raws: (string | undefined)[];
}

export interface ParsedBlock {
  readonly records: SplitRecord[];
  /** Characters of the text the records took (a record cut by the end of a block that is not the input's is left). */
  readonly consumed: number;
  /** CSV quotes that do not close a field where they should (a quote inside an unquoted field, text after a closing quote, one never closed). */
  readonly irregular: number;
}

const isEol = (c: string | undefined): boolean => c === '\n' || c === '\r';

function endOfLine(s: string, i: number): number {
  return s[i] === '\r' && s[i + 1] === '\n' ? i + 2 : i + 1;
}

/** CSV records of `s` from `from` on, at most `max`; `final`: `s` ends the input (its last record needs no line ending). */
function parseCsv(s: string, from: number, rules: FieldRules, final: boolean, max: number): ParsedBlock {
  const { delimiter: d, quote: q, escape: e } = rules;
  const records: SplitRecord[] = [];
  let irregular = 0;
  let i = from;
  let consumed = from;
  while (i < s.length && records.length < max) {
    const values: string[] = [];
    const raws: (string | undefined)[] = [];
    let complete = false;
    for (;;) {
      if (s[i] === q) {
        let v = '';
        let seg = ++i;
        let closed = false;
        while (i < s.length) {
          const c = s[i];
          if (c === e && e !== q && (s[i + 1] === q || s[i + 1] === e)) {
            v += s.slice(seg, i) + s[i + 1]!;
            i += 2;
            seg = i;
          } else if (c === q && e === q && s[i + 1] === q) {
            v += s.slice(seg, i) + q;
            i += 2;
            seg = i;
          } else if (c === q) {
            v += s.slice(seg, i);
            i++;
            closed = true;
            break;
          } else i++;
        }
        if (!closed) {
          if (!final) break;
          irregular++;
          v += s.slice(seg);
        }
        const after = i;
        while (i < s.length && s[i] !== d && !isEol(s[i])) i++;
        if (i > after) {
          irregular++;
          v += s.slice(after, i);
        }
        values.push(v);
        raws.push(undefined);
      } else {
        const start = i;
        while (i < s.length && s[i] !== d && !isEol(s[i])) i++;
        const v = s.slice(start, i);
        if (v.includes(q)) irregular++;
        values.push(v);
        raws.push(v);
      }
      if (i < s.length && s[i] === d) {
        i++;
        continue;
      }
      if (i < s.length) {
        i = endOfLine(s, i);
        complete = true;
      } else complete = final;
      break;
    }
    if (!complete) break;
    // The end-of-data marker alone on a line is no record.
    if (!(values.length === 1 && raws[0] === '\\.')) records.push({ values, raws });
    consumed = i;
  }
  return { records, consumed, irregular };
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** A text field's value: its backslash escapes undone as COPY undoes them. */
function unescapeText(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|[\s\S])/g, (_, c: string) => {
    if (/^[0-7]/.test(c)) return String.fromCharCode(parseInt(c, 8) & 0xff);
    if (c.length > 1 && c[0] === 'x') return String.fromCharCode(parseInt(c.slice(1), 16));
    return ESCAPES[c] ?? c;
  });
}

/** PostgreSQL text (and `.tbl`: a `|` ends every field) records of `s` from `from` on, at most `max`. */
function parseText(s: string, from: number, rules: FieldRules, final: boolean, max: number): ParsedBlock {
  const records: SplitRecord[] = [];
  let i = from;
  let consumed = from;
  while (i < s.length && records.length < max) {
    let end = i;
    while (end < s.length && !isEol(s[end])) end += s[end] === '\\' ? 2 : 1;
    if (end >= s.length && !final) break;
    let line = s.slice(i, Math.min(end, s.length));
    if (rules.format === 'tbl' && line.endsWith('|') && !line.endsWith('\\|')) line = line.slice(0, -1);
    // The end-of-data marker is no record.
    if (line !== '\\.') {
      const raws = splitText(line, rules.delimiter);
      records.push({ values: line.includes('\\') ? raws.map(unescapeText) : raws, raws });
    }
    i = end < s.length ? endOfLine(s, end) : s.length;
    consumed = i;
  }
  return { records, consumed, irregular: 0 };
}

function splitText(line: string, d: string): string[] {
  const fields: string[] = [];
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === d) {
      fields.push(line.slice(start, i));
      start = i + 1;
    }
  }
  fields.push(line.slice(start));
  return fields;
}

/** Records of `s` from `from` on (at most `max`), split by `rules`. */
export function parseRecords(s: string, from: number, rules: FieldRules, final: boolean, max = Infinity): ParsedBlock {
  return rules.format === 'csv' ? parseCsv(s, from, rules, final, max) : parseText(s, from, rules, final, max);
}

/** The most common field count of `records` and the share of them that have it. */
export function modalFields(records: readonly SplitRecord[]): { fields: number; share: number } {
  const counts = new Map<number, number>();
  for (const r of records) counts.set(r.values.length, (counts.get(r.values.length) ?? 0) + 1);
  let fields = 0;
  let most = 0;
  for (const [n, c] of counts) if (c > most || (c === most && n > fields)) [fields, most] = [n, c];
  return { fields, share: records.length === 0 ? 0 : most / records.length };
}

/** What the user already said of the dialect (each is taken as given). */
export interface GivenDialect {
  readonly delimiter?: string | undefined;
  readonly quote?: string | undefined;
  readonly escape?: string | undefined;
}

const DELIMITERS: Record<TextFormat, readonly string[]> = { csv: [',', ';', '\t', '|'], text: ['\t', ',', ';', '|'], tbl: ['|'] };
/** The records of a file's start the dialect is chosen from. */
const DIALECT_RECORDS = 200;

/**
 * The delimiter, quote and escape that split the file's first records most consistently
 * into more than one field: the most records with the most common field count, then the
 * fewest stray quotes, then a quote that encloses fields, then the most fields; ties go to
 * COPY's defaults.
 */
export function sniffFieldRules(head: string, format: TextFormat, final: boolean, given: GivenDialect = {}): FieldRules {
  const delimiters = given.delimiter !== undefined ? [given.delimiter] : DELIMITERS[format];
  const quotes = format !== 'csv' ? ['"'] : given.quote !== undefined ? [given.quote] : ['"', "'"];
  let best: { rules: FieldRules; score: number[] } | undefined;
  for (const [di, delimiter] of delimiters.entries()) {
    for (const [qi, quote] of quotes.entries()) {
      const escapes = format !== 'csv' ? [quote] : given.escape !== undefined ? [given.escape] : [quote, '\\'];
      for (const [ei, escape] of escapes.entries()) {
        const rules = { format, delimiter, quote, escape };
        const parsed = parseRecords(head, 0, rules, final, DIALECT_RECORDS);
        const { fields, share } = modalFields(parsed.records);
        // The first record (a header, often) as wide as the rest counts first: `a|b` over `1|2,5` is split at `|`.
        const firstFits = parsed.records[0]?.values.length === fields ? 1 : 0;
        // No candidate splitting records into several fields: COPY's default delimiter.
        // A quote that encloses fields beats one the records never use: a quote absent from the file splits a quoted
        // `"Berlin, Germany"` in every row into one field more, as consistently (its quotes then kept in the values).
        const quotes = parsed.records.some((r) => r.raws.includes(undefined)) ? 1 : 0;
        const score = fields > 1 ? [1, firstFits, Math.round(share * 100), -parsed.irregular, quotes, fields, -di, -qi, -ei] : [0, 0, 0, 0, 0, 0, -di, -qi, -ei];
        if (best === undefined || compareScores(score, best.score) > 0) best = { rules, score };
      }
    }
  }
  return best!.rules;
}

function compareScores(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** Strings read as NULL that files use; COPY reads one of them (`null`) as NULL. */
const NULL_MARKERS = new Set(['', '\\N', 'NULL', 'null', 'NA', 'N/A', 'n/a', 'None', 'nil']);
const DEFAULT_NULL: Record<TextFormat, string> = { csv: '', text: '\\N', tbl: '\\N' };

/** The columns of a delimited file, as sniffed. */
export interface SniffedColumns {
  readonly columns: DescribedColumn[];
  readonly header: boolean;
  readonly null: string;
  readonly nullMarkers: string[];
  readonly datestyle?: string;
  /** Records whose values were looked at (a header left out). */
  readonly sampled: number;
}

/**
 * The columns of a delimited file, from its records given in any order (the first record
 * of the file first: it may be a header). Every value is looked at; NULL markers are
 * counted, the most common becomes COPY's NULL, and the others are values.
 */
export class TextColumns {
  private first: SplitRecord | undefined;
  private readonly body: ColumnTypes[] = [];
  /** Per column: the first record's value appears in the body too (so it names nothing). */
  private readonly firstSeen: boolean[] = [];
  private readonly markers = new Map<string, number[]>();
  private readonly widths = new Map<number, number>();
  private records = 0;

  constructor(
    private readonly format: TextFormat,
    private readonly header: boolean | undefined,
    private readonly givenNull?: string,
  ) {}

  /** The next records (the file's first record must come in the first call). */
  add(records: readonly SplitRecord[]): void {
    for (const r of records) {
      if (this.first === undefined) {
        this.first = r;
        continue;
      }
      this.records++;
      this.widths.set(r.values.length, (this.widths.get(r.values.length) ?? 0) + 1);
      this.addValues(r);
    }
  }

  private addValues(r: SplitRecord): void {
    for (let i = 0; i < r.values.length; i++) {
      const col = (this.body[i] ??= new ColumnTypes());
      const raw = r.raws[i];
      if (raw !== undefined && this.isMarker(raw)) {
        let counts = this.markers.get(raw);
        if (counts === undefined) this.markers.set(raw, (counts = []));
        counts[i] = (counts[i] ?? 0) + 1;
      } else col.add(r.values[i]!);
      if (this.first !== undefined && r.values[i] === this.first.values[i]) this.firstSeen[i] = true;
    }
  }

  private isMarker(raw: string): boolean {
    return this.givenNull !== undefined ? raw === this.givenNull : raw.length <= 4 && NULL_MARKERS.has(raw);
  }

  result(): SniffedColumns {
    const first = this.first;
    const nullString = this.givenNull ?? this.chooseNull();
    const seen = [...this.markers.keys()].sort((a, b) => (a === nullString ? -1 : b === nullString ? 1 : 0));
    const types = (cols: readonly ColumnTypes[]): ColumnTypes[] =>
      cols.map((c, i) => {
        const copy = c.clone();
        for (const [m, counts] of this.markers) if (m !== nullString && (counts[i] ?? 0) > 0) copy.add(m);
        return copy;
      });
    const body = types(this.body);
    const header = this.header ?? (first === undefined ? false : this.looksLikeHeader(first, body, nullString));
    if (!header && first !== undefined) {
      first.values.forEach((v, i) => {
        const col = (body[i] ??= new ColumnTypes());
        if (first.raws[i] !== nullString) col.add(v);
      });
    }
    let width = header && first !== undefined ? first.values.length : this.modalWidth(first);
    width = Math.max(width, 0);
    const names = header && first !== undefined ? columnIdentifiers(first.values) : numberedColumns(width);
    const results = names.map((_, i) => (body[i] ?? new ColumnTypes()).result());
    const datestyle = agreeOnDateOrder(results);
    const columns = names.map((name, i) => {
      const key = header ? first?.values[i] : undefined;
      return { name, ...(key !== undefined && key !== name ? { key } : {}), type: results[i]!.type };
    });
    const sampled = this.records + (header || first === undefined ? 0 : 1);
    return { columns, header, null: nullString, nullMarkers: seen.includes(nullString) ? seen : [nullString, ...seen], ...(datestyle ? { datestyle } : {}), sampled };
  }

  /** The marker seen most often (COPY's default NULL for the format when none, or on a tie). */
  private chooseNull(): string {
    let best = DEFAULT_NULL[this.format];
    let most = sum(this.markers.get(best));
    for (const [m, counts] of this.markers) {
      const n = sum(counts);
      if (n > most) [best, most] = [m, n];
    }
    return best;
  }

  private modalWidth(first: SplitRecord | undefined): number {
    let width = first?.values.length ?? 0;
    let most = 0;
    for (const [n, c] of this.widths) if (c > most || (c === most && n > width)) [width, most] = [n, c];
    return width;
  }

  /**
   * The first record is a header when one of its values does not fit the type the rest of
   * its column has; when every column is text, when its values are all there, distinct,
   * not numbers, and none of them appears again below it.
   */
  private looksLikeHeader(first: SplitRecord, body: readonly ColumnTypes[], nullString: string): boolean {
    let typed = false;
    for (let i = 0; i < first.values.length; i++) {
      const col = body[i];
      if (col === undefined || col.values === 0) continue;
      const type = col.result().type;
      if (type === 'text') continue;
      typed = true;
      if (first.raws[i] === nullString) continue;
      const withFirst = col.clone();
      withFirst.add(first.values[i]!);
      if (withFirst.result().type !== type) return true;
    }
    if (typed) return false;
    const names = first.values;
    return names.every((v, i) => v.trim() !== '' && !/^[+-]?[0-9.]+$/.test(v.trim()) && this.firstSeen[i] !== true) && new Set(names).size === names.length;
  }
}

function sum(counts: readonly number[] | undefined): number {
  let n = 0;
  for (const c of counts ?? []) n += c ?? 0;
  return n;
}

/**
 * One DateStyle for the whole file: the order most date columns read in; a column that
 * needs the other one is made text. Undefined when no column has day-first or month-first dates.
 */
function agreeOnDateOrder(results: { type: string; dateOrder?: DateOrder }[]): string | undefined {
  const votes = { DMY: 0, MDY: 0 };
  for (const r of results) if (r.dateOrder !== undefined) votes[r.dateOrder]++;
  if (votes.DMY + votes.MDY === 0) return undefined;
  const order: DateOrder = votes.DMY >= votes.MDY ? 'DMY' : 'MDY';
  for (const r of results) if (r.dateOrder !== undefined && r.dateOrder !== order) r.type = 'text';
  return `ISO, ${order}`;
}
