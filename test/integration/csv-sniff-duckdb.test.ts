/**
 * pgsurge's sniffer against DuckDB's, on test/corpus/csv-sniff (CSV and PostgreSQL text
 * files from DuckDB's, PostgreSQL's and pgloader's test suites; SOURCES names each). For
 * each file: DuckDB's `DESCRIBE SELECT * FROM read_csv(…)` (of a UTF-8 copy when pgsurge
 * sniffed another encoding: DuckDB reads UTF-8, UTF-16 and Latin-1 only, and does not
 * sniff encodings), its types mapped to PostgreSQL's. Where the two read the dialect
 * differently (a header, the delimiter), DuckDB reads the file again told pgsurge's, so
 * the types are compared column for column; those files are DIALECT below, with the
 * reason (which reading COPY needs). A file agrees when pgsurge finds as many columns, each of DuckDB's type or
 * a narrower one (smallint < integer < bigint < numeric < double precision; date <
 * timestamp < timestamptz; anything < text), and the server's COPY with the sniffed dialect
 * loads every row into a table of pgsurge's types, as many rows as DuckDB reads, equal to
 * the file loaded as text and cast. At least 90% of the files must agree; the others are
 * DIFFERENT below, each with the reason, and must still differ (a file that comes to agree
 * leaves the list).
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { describeInput } from '../../src/input/format-registry.js';
import { duckRows, sqlString } from '../helpers/duckdb-parquet.js';
import { loadSniffed } from '../helpers/sniffed-load.js';
import { closeTestSchema, openTestSchema } from '../helpers/test-db.js';

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/corpus/csv-sniff');
const SCHEMA = 'it_csv_sniff_duckdb';

/** Files where pgsurge and DuckDB differ, and why (docs/inputs.md lists them too). */
const DIFFERENT: Record<string, string> = {
  // Its header names one column; its records have one field (a quoted one, with newlines) and two: no table takes every row.
  'duckdb-csv_quoted_newline_odd.csv': '1 columns, DuckDB 2',
  // Quoted empty strings (`""`): COPY reads them as an empty string, not NULL (DuckDB reads NULL), so the columns are text.
  'duckdb-real-ncvoter.csv': 'column 37: text, DuckDB bigint; column 38: text, DuckDB bigint',
  // An empty line between records: COPY refuses it (DuckDB skips it).
  'duckdb-soccer_kaggle.csv': 'COPY into the sniffed table: missing data for column "player_url"',
  // Lines continued by a backslash outside quotes (PostgreSQL text's escape, not CSV's): DuckDB's sniffer stops on them.
  'duckdb-unquoted_escape-human_eval.tsv': 'DuckDB cannot read it: Invalid Input Error: Error when sniffing file "duckdb-unquoted_escape-human_eval.tsv".',
};

/** Files whose dialect pgsurge reads otherwise than DuckDB, and why pgsurge's is the one COPY needs. */
const DIALECT: Record<string, string> = {
  // 2,450 records of one column, `T` and one other value: DuckDB takes the first `T` for a header, pgsurge sees it again below and loads it.
  'duckdb-big_not_bool.csv': 'no header',
  // Its first record names one column (see DIFFERENT).
  'duckdb-csv_quoted_newline_odd.csv': 'a header of one column',
  // PostgreSQL's regression data has no header: DuckDB takes `mike 40 (3.1,6.2)` for one.
  'pg-person.data': 'no header',
};

/** DuckDB's type as PostgreSQL's. */
function pgType(duck: string): string {
  if (/^DECIMAL/.test(duck)) return 'numeric';
  const map: Record<string, string> = {
    TINYINT: 'smallint',
    SMALLINT: 'smallint',
    INTEGER: 'integer',
    BIGINT: 'bigint',
    HUGEINT: 'numeric',
    UBIGINT: 'numeric',
    FLOAT: 'double precision',
    DOUBLE: 'double precision',
    BOOLEAN: 'boolean',
    DATE: 'date',
    TIME: 'time',
    TIMESTAMP: 'timestamp',
    'TIMESTAMP WITH TIME ZONE': 'timestamptz',
    UUID: 'uuid',
    JSON: 'jsonb',
    VARCHAR: 'text',
  };
  return map[duck] ?? `unmapped ${duck}`;
}

const CHAINS = [['smallint', 'integer', 'bigint', 'numeric', 'double precision'], ['date', 'timestamp', 'timestamptz']];

/** `ours` holds no value `theirs` does not (the same type, a narrower one of its chain, or anything where theirs is text). */
function sameOrNarrower(ours: string, theirs: string): boolean {
  if (ours === theirs || theirs === 'text') return true;
  return CHAINS.some((chain) => chain.includes(ours) && chain.includes(theirs) && chain.indexOf(ours) <= chain.indexOf(theirs));
}

let client: pg.Client;
let dir: string;
before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-csv-sniff-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** DuckDB's types of a file, read with its own sniffer or with the dialect it is told. */
async function duckTypes(file: string, told: string): Promise<{ types: string[]; count: number; header: boolean }> {
  const read = `read_csv(${sqlString(file)}${told})`;
  const types = (await duckRows(`DESCRIBE SELECT * FROM ${read}`)).map((r) => pgType(String(r[1])));
  const count = Number((await duckRows(`SELECT count(*) FROM ${read}`))[0]![0]);
  const header = (await duckRows(`SELECT HasHeader FROM sniff_csv(${sqlString(file)}${told})`))[0]![0] === true;
  return { types, count, header };
}

const quoted = (s: string): string => sqlString(s);

/** Why the file differs, or undefined when it agrees; `dialects` gets the files DuckDB reads otherwise. */
async function compare(name: string, index: number, dialects: Record<string, string>): Promise<string | undefined> {
  const file = path.join(CORPUS, name);
  const format = name.endsWith('.data') ? 'text' : 'csv';
  const ours = await describeInput({ table: 't', schema: undefined, format, file, input: {} });
  const d = ours.dialect!;
  let duckFile = file;
  if (d.encoding !== 'UTF8') {
    duckFile = path.join(dir, `${index}.utf8.csv`);
    await fs.writeFile(duckFile, new TextDecoder(d.encoding === 'LATIN1' ? 'iso-8859-1' : 'windows-1252').decode(await fs.readFile(file)));
  }
  let theirs: { types: string[]; count: number; header: boolean };
  try {
    theirs = await duckTypes(duckFile, '');
    if (theirs.types.length !== ours.columns.length || theirs.header !== d.header) {
      const was = `DuckDB: ${theirs.types.length} columns, header ${theirs.header}; pgsurge: ${ours.columns.length}, header ${d.header}`;
      const told = `, header = ${d.header}, delim = ${quoted(d.delimiter)}, quote = ${quoted(d.quote ?? '')}, escape = ${quoted(d.escape ?? '')}`;
      theirs = await duckTypes(duckFile, told);
      dialects[name] = was;
    }
  } catch (e) {
    return `DuckDB cannot read it: ${(e as Error).message.split('\n')[0]!.replaceAll(`${CORPUS}/`, '')}`;
  }
  const types = ours.columns.map((c) => c.type ?? 'text');
  if (types.length !== theirs.types.length) return `${types.length} columns, DuckDB ${theirs.types.length}`;
  const wider = types.flatMap((t, i) => (sameOrNarrower(t, theirs.types[i]!) ? [] : [`column ${i + 1}: ${t}, DuckDB ${theirs.types[i]}`]));
  if (wider.length > 0) return wider.join('; ');
  const load = await loadSniffed(client, SCHEMA, `f${index}`, file, ours);
  if (load.typed.error !== undefined) return `COPY into the sniffed table: ${load.typed.error}`;
  if (load.typed.rows !== theirs.count) return `${load.typed.rows} rows loaded, DuckDB reads ${theirs.count}`;
  if (load.same !== true) return 'the typed table differs from the file loaded as text and cast';
  return undefined;
}

describe('pgsurge sniffs the corpus as DuckDB does, or narrower, and every row loads', () => {
  it('agrees on at least 90% of the files; the others are the listed ones, for the listed reasons', async () => {
    const files = (await fs.readdir(CORPUS)).filter((f) => f !== 'SOURCES').sort();
    assert.ok(files.length >= 30, `only ${files.length} files in the corpus`);
    const differ: Record<string, string> = {};
    const dialects: Record<string, string> = {};
    for (const [i, name] of files.entries()) {
      const why = await compare(name, i, dialects);
      if (why !== undefined) differ[name] = why;
    }
    assert.deepEqual(differ, DIFFERENT);
    assert.deepEqual(Object.keys(dialects).sort(), Object.keys(DIALECT).sort(), JSON.stringify(dialects, null, 1));
    const agree = files.length - Object.keys(differ).length;
    assert.ok(agree / files.length >= 0.9, `${agree} of ${files.length} files agree`);
  });
});
