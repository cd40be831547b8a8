import type pg from 'pg';
import { qualifiedName } from '../../core/identifiers.js';
import { LoadError } from '../../core/load-error.js';

/** A unique key of a table that `ON CONFLICT (…)` can name: a unique index on plain columns, collated as they are, without a predicate. */
export interface UniqueKey {
  /** The index (or the constraint it backs), as the catalog names it. */
  readonly index: string;
  readonly primary: boolean;
  readonly columns: readonly string[];
}

/** The table's unique keys an upsert or a delete can go by, the primary key first. */
export async function uniqueKeys(client: pg.Client, table: string, schema: string | undefined): Promise<UniqueKey[]> {
  const r = await client.query<{ index: string; primary: boolean; columns: string[] }>(
    `SELECT i.indexrelid::regclass::text AS index, i.indisprimary AS primary, array_agg(a.attname::text ORDER BY k.ord) AS columns
       FROM pg_index i
       CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
      WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts
      GROUP BY i.indexrelid, i.indisprimary
      -- An index that collates a column otherwise than the column (k COLLATE "ci") tells keys apart otherwise than = does.
     HAVING bool_and(i.indcollation[(k.ord - 1)::int] = a.attcollation)
      ORDER BY i.indisprimary DESC, i.indexrelid`,
    [qualifiedName(table, schema)],
  );
  return r.rows.map((row) => ({ index: row.index, primary: row.primary, columns: row.columns }));
}

const listed = (keys: readonly UniqueKey[]): string => keys.map((k) => `(${k.columns.join(', ')})${k.primary ? ' (the primary key)' : ''}`).join(', ');

/**
 * The key rows are matched by: `--key` when given (it must be a unique key of the table, in
 * any column order), else the primary key, else the table's only unique key. A table with
 * none, or with several and no primary key, is an error that names the candidates.
 */
export async function chooseKey(client: pg.Client, table: string, schema: string | undefined, asked: readonly string[] | undefined, flag: string): Promise<readonly string[]> {
  const keys = await uniqueKeys(client, table, schema);
  const name = qualifiedName(table, schema);
  if (asked !== undefined) {
    const wanted = [...asked].sort().join('\u0000');
    const found = keys.find((k) => [...k.columns].sort().join('\u0000') === wanted);
    if (found === undefined) {
      throw new LoadError('bad-option', `\`--key ${asked.join(',')}\` is not a unique key of ${name}${keys.length > 0 ? `: its unique keys are ${listed(keys)}` : ': it has no unique key'}`, {
        hint: keys.length > 0 ? 'name one of them with --key' : `add one (ALTER TABLE ${name} ADD PRIMARY KEY (…)): ${flag} matches rows by a unique key`,
      });
    }
    return asked;
  }
  const primary = keys.find((k) => k.primary);
  if (primary !== undefined) return primary.columns;
  if (keys.length === 1) return keys[0]!.columns;
  if (keys.length === 0) {
    throw new LoadError('bad-option', `${name} has no primary key and no unique key: ${flag} matches rows by one`, { hint: `add one (ALTER TABLE ${name} ADD PRIMARY KEY (…))` });
  }
  throw new LoadError('bad-option', `${name} has no primary key and ${keys.length} unique keys: ${listed(keys)}`, { hint: `name the one ${flag} matches rows by with --key col,…` });
}
