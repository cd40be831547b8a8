/**
 * Loading the same values through text COPY and through a binary COPY stream built with
 * the wire encoders, for the differential tests of `src/wire/encoders`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER, writeNull, writeRaw, writeTupleStart } from '../../src/codecs/binary-copy.js';
import { WireBuffer, type FieldEncoder, type SessionFacts } from '../../src/codecs/field-encoder.js';
import { writeInt32 } from '../../src/codecs/index.js';

/** The session facts an encoder lookup needs, as the server reports them. */
export async function sessionFacts(client: pg.Client): Promise<SessionFacts> {
  const show = async (name: string): Promise<string> => (await client.query<{ v: string }>(`SELECT current_setting('${name}') AS v`)).rows[0]!.v;
  return { serverVersionNum: Number(await show('server_version_num')), timeZone: await show('TimeZone'), dateStyle: await show('DateStyle'), serverEncoding: await show('server_encoding') };
}

/** A value as a COPY text field: backslash, newline, CR and tab escaped; null as `\N`. */
export function copyTextField(v: string | null): string {
  if (v === null) return '\\N';
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
}

export interface ServerError {
  readonly code: string;
  readonly message: string;
  readonly detail: string | undefined;
  /** The COPY's line (text) or tuple (binary) the error names, 1-based. */
  readonly line: number | undefined;
}

async function runCopy(client: pg.Client, sql: string, data: Uint8Array | string): Promise<ServerError | undefined> {
  try {
    await pipeline(Readable.from([Buffer.from(data)]), client.query(copyFrom(sql)));
    return undefined;
  } catch (e) {
    const err = e as pg.DatabaseError;
    if (!err.code) throw e;
    const line = /COPY [^,]+, line (\d+)/.exec(err.where ?? '')?.[1];
    return { code: err.code, message: err.message, detail: err.detail, line: line === undefined ? undefined : Number(line) };
  }
}

type Row = readonly [number, string | null];

/** Text COPY of `(id, v)` rows into `table`. */
export function copyText(client: pg.Client, table: string, rows: readonly Row[]): Promise<ServerError | undefined> {
  const text = rows.map(([id, v]) => `${id}\t${copyTextField(v)}\n`).join('');
  return runCopy(client, `COPY ${table} (id, v) FROM STDIN (FORMAT text)`, text);
}

/** A row whose value the encoder accepted: its field as encoded (length + bytes), or null for NULL. */
export type EncodedRow = readonly [number, Buffer | null];

/** The rows' values through the encoder: those it encodes, and those it refuses (which go as text). */
export function encodeRows(rows: readonly Row[], encoder: FieldEncoder): { encoded: EncodedRow[]; refused: Row[] } {
  const encoded: EncodedRow[] = [];
  const refused: Row[] = [];
  const out = new WireBuffer(1024);
  for (const [id, v] of rows) {
    if (v === null) {
      encoded.push([id, null]);
      continue;
    }
    const src = Buffer.from(v);
    out.pos = 0;
    if (encoder.encode(src, 0, src.length, out)) encoded.push([id, Buffer.from(out.bytes.subarray(0, out.pos))]);
    else refused.push([id, v]);
  }
  return { encoded, refused };
}

/** Binary COPY of encoded `(id, v)` rows into `table` (the id as int4). */
export function copyBinaryRows(client: pg.Client, table: string, rows: readonly EncodedRow[]): Promise<ServerError | undefined> {
  const out = new WireBuffer(1024);
  writeRaw(out, BINARY_COPY_HEADER);
  for (const [id, field] of rows) {
    writeTupleStart(out, 2);
    writeInt32(out, id);
    if (field === null) writeNull(out);
    else writeRaw(out, field);
  }
  writeRaw(out, BINARY_COPY_TRAILER);
  return runCopy(client, `COPY ${table} (id, v) FROM STDIN (FORMAT binary)`, out.bytes.subarray(0, out.pos));
}

/**
 * Loads rows with `copy`; each time the server refuses one (named by the error's line), it
 * is set aside with its error and the rest are loaded again. Returns the errors by id.
 */
export async function loadRefusingEach<R extends readonly [number, unknown]>(rows: readonly R[], copy: (rows: readonly R[]) => Promise<ServerError | undefined>): Promise<Map<number, ServerError>> {
  const errors = new Map<number, ServerError>();
  const left = [...rows];
  while (left.length > 0) {
    const err = await copy(left);
    if (!err) break;
    if (err.line === undefined || err.line < 1 || err.line > left.length) throw new Error(`a COPY error that names no row: ${JSON.stringify(err)}`);
    errors.set(left[err.line - 1]![0], err);
    left.splice(err.line - 1, 1);
  }
  return errors;
}

/** md5 of the table's rows as text, in id order. */
export async function tableMd5(client: pg.Client, table: string): Promise<{ count: number; md5: string }> {
  const r = await client.query<{ n: number; md5: string }>(`SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY id), '')) AS md5 FROM ${table} t`);
  return { count: r.rows[0]!.n, md5: r.rows[0]!.md5 };
}
