/**
 * Loading a file the way its sniffed description says, with the server's own COPY: a table
 * of the sniffed types, COPY's options from the sniffed dialect, the DateStyle it needs.
 * The oracle of the sniffer: every row of the file loads, and the table equals the file
 * loaded as text and cast by the server.
 */
import { promises as fs } from 'node:fs';
import type pg from 'pg';
import type { FileDescription, SniffedDialect } from '../../src/input/input-format.js';
import { serverCopyStdin, type ServerCopy } from './copy-oracle.js';
import { digest, tableRecords } from './test-db.js';

const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** COPY's options for a sniffed dialect (`.tbl` as text with `|`: its trailing `|` is cut from the bytes). */
export function copyOptions(d: SniffedDialect): string {
  const parts = [`FORMAT ${d.format === 'csv' ? 'csv' : 'text'}`, `DELIMITER ${literal(d.delimiter)}`, `NULL ${literal(d.null)}`, `ENCODING ${literal(d.encoding)}`];
  if (d.format === 'csv') parts.push(`QUOTE ${literal(d.quote ?? '"')}`, `ESCAPE ${literal(d.escape ?? d.quote ?? '"')}`);
  if (d.header) parts.push('HEADER true');
  return `(${parts.join(', ')})`;
}

/** The file's bytes as the server's COPY is sent them: without a byte-order mark, a `.tbl`'s trailing `|` cut. */
export async function copyBytes(file: string, d: SniffedDialect): Promise<Buffer> {
  let bytes = await fs.readFile(file);
  if (d.bom) bytes = bytes.subarray(3);
  if (d.format === 'tbl') bytes = Buffer.from(bytes.toString('latin1').replace(/\|(\r?\n|\r)/g, '$1').replace(/\|$/, ''), 'latin1');
  return bytes;
}

export interface SniffedLoad {
  /** The COPY into the table of sniffed types. */
  readonly typed: ServerCopy;
  /** The COPY into a table of text columns (the file's rows as the server reads them). */
  readonly text: ServerCopy;
  /** The typed table equals the text table cast to the sniffed types (when both loaded). */
  readonly same: boolean | undefined;
}

/** Loads `file` into `schema.table` of the sniffed columns with the server's COPY, and into a text table to compare with. */
export async function loadSniffed(client: pg.Client, schema: string, table: string, file: string, description: FileDescription): Promise<SniffedLoad> {
  const d = description.dialect;
  if (d === undefined) throw new Error('a sniffed load needs the dialect of delimited text');
  const q = (t: string): string => `${ident(schema)}.${ident(t)}`;
  const cols = description.columns;
  await client.query(`DROP TABLE IF EXISTS ${q(table)}, ${q(`${table}_text`)}, ${q(`${table}_cast`)}`);
  await client.query(`CREATE TABLE ${q(table)} (${cols.map((c) => `${ident(c.name)} ${c.type ?? 'text'}`).join(', ')})`);
  await client.query(`CREATE TABLE ${q(`${table}_text`)} (${cols.map((c) => `${ident(c.name)} text`).join(', ')})`);
  const bytes = await copyBytes(file, d);
  await client.query(`SET datestyle = ${literal(d.datestyle ?? 'ISO, MDY')}`);
  try {
    const typed = await serverCopyStdin(client, q(table), bytes, copyOptions(d));
    const text = await serverCopyStdin(client, q(`${table}_text`), bytes, copyOptions(d));
    if (typed.error !== undefined || text.error !== undefined) return { typed, text, same: undefined };
    await client.query(`CREATE TABLE ${q(`${table}_cast`)} AS SELECT ${cols.map((c) => `${ident(c.name)}::${c.type ?? 'text'} AS ${ident(c.name)}`).join(', ')} FROM ${q(`${table}_text`)}`);
    const same = digest(await tableRecords(client, q(table))) === digest(await tableRecords(client, q(`${table}_cast`)));
    return { typed, text, same };
  } finally {
    await client.query('RESET datestyle');
  }
}
