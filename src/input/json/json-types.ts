import { columnIdentifiers } from '../column-names.js';
import type { DescribedColumn } from '../input-format.js';
import { ColumnTypes, type SniffedType } from '../value-types.js';

/**
 * The PostgreSQL type of one key's JSON values: numbers → the narrowest integer type,
 * numeric or double precision; strings → date, time, timestamp(tz) or uuid when they all
 * are, else text; booleans → boolean; objects → jsonb; arrays of one scalar type → an
 * array of it, any other array → jsonb; values of several kinds → text (scalars) or jsonb.
 */
/**
 * A parsed number's text for its type (JSON.parse keeps no number's own text): an integer
 * past 2^53 is an integer when far enough inside bigint's range that rounding cannot take
 * it out, else a decimal; one out of double's range is no number.
 */
function numberText(v: number): string {
  if (!Number.isFinite(v)) return 'out of range';
  if (!Number.isInteger(v) || Number.isSafeInteger(v)) return String(v);
  if (Math.abs(v) < 9.2e18) return BigInt(v).toString();
  const s = String(v);
  return s.includes('e') ? s : `${s}.0`;
}

class JsonValueTypes {
  private numbers = 0;
  private strings = 0;
  private booleans = 0;
  private objects = 0;
  private arrays = 0;
  private readonly scalars = new ColumnTypes();
  private elements: JsonValueTypes | undefined;
  /** An array held an array or an object. */
  private nested = false;

  add(v: unknown): void {
    if (v === null || v === undefined) return;
    if (typeof v === 'number') {
      this.numbers++;
      this.scalars.add(numberText(v));
    } else if (typeof v === 'string') {
      this.strings++;
      this.scalars.add(v);
    } else if (typeof v === 'boolean') this.booleans++;
    else if (Array.isArray(v)) {
      this.arrays++;
      this.elements ??= new JsonValueTypes();
      for (const e of v) {
        if (e !== null && typeof e === 'object') this.nested = true;
        else this.elements.add(e);
      }
    } else this.objects++;
  }

  result(): string {
    const kinds = [this.numbers, this.strings, this.booleans, this.objects, this.arrays].filter((n) => n > 0).length;
    if (kinds === 0) return 'text';
    if (this.objects > 0) return 'jsonb';
    if (this.arrays > 0) {
      if (kinds > 1 || this.nested || this.elements === undefined) return 'jsonb';
      const element = this.elements.scalarResult();
      return element === undefined ? 'jsonb' : `${element}[]`;
    }
    return this.scalarResult() ?? 'text';
  }

  /** The type of scalar values of one kind (undefined for none, or several kinds: text for a column, jsonb for an array's elements). */
  private scalarResult(): SniffedType | undefined {
    const kinds = [this.numbers, this.strings, this.booleans].filter((n) => n > 0).length;
    if (kinds !== 1 || this.objects + this.arrays > 0) return kinds === 0 && this.objects + this.arrays === 0 ? 'text' : undefined;
    if (this.booleans > 0) return 'boolean';
    const { type, dateOrder } = this.scalars.result();
    if (this.numbers > 0) return type;
    // Day-first or month-first dates need a DateStyle a JSON description does not carry: text.
    if (dateOrder !== undefined) return 'text';
    return type === 'date' || type === 'time' || type === 'timestamp' || type === 'timestamptz' || type === 'uuid' ? type : 'text';
  }
}

/** The columns of JSON objects: their keys' union in the order first seen, named as identifiers, typed from every value. */
export function jsonColumns(objects: readonly unknown[]): DescribedColumn[] {
  const types = new Map<string, JsonValueTypes>();
  for (const o of objects) {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) continue;
    for (const [key, value] of Object.entries(o)) {
      let t = types.get(key);
      if (t === undefined) types.set(key, (t = new JsonValueTypes()));
      t.add(value);
    }
  }
  const keys = [...types.keys()];
  const names = columnIdentifiers(keys);
  return keys.map((key, i) => ({ name: names[i]!, ...(key !== names[i] ? { key } : {}), type: types.get(key)!.result() }));
}
