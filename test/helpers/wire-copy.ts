/**
 * Loading the same values through text COPY and through a binary COPY stream built with
 * the wire encoders, for the differential tests of `src/wire/encoders`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER, writeNull, writeRaw, writeTupleStart } from '../../src/wire/binary-copy.js';
import { WireBuffer, type FieldEncoder, type SessionFacts } from '../../src/wire/field-encoder.js';
import { writeInt32 } from '../../src/wire/encoders/index.js';

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
}

async function runCopy(client: pg.Client, sql: string, data: Uint8Array | string): Promise<ServerError | undefined> {
  try {
    await pipeline(Readable.from([typeof data === 'string' ? Buffer.from(data) : Buffer.from(data)]), client.query(copyFrom(sql)));
    return undefined;
  } catch (e) {
    const err = e as pg.DatabaseError;
    if (!err.code) throw e;
    return { code: err.code, message: err.message, detail: err.detail };
  }
}

/** Text COPY of `(id, v)` rows into `table`. */
export function copyText(client: pg.Client, table: string, rows: readonly (readonly [number, string | null])[]): Promise<ServerError | undefined> {
  const text = rows.map(([id, v]) => `${id}\t${copyTextField(v)}\n`).join('');
  return runCopy(client, `COPY ${table} (id, v) FROM STDIN (FORMAT text)`, text);
}

export interface BinaryOutcome {
  /** The values the encoder refused: they went through text COPY instead (same table). */
  readonly refused: string[];
  /** The binary COPY's error, if the server refused it. */
  readonly binaryError: ServerError | undefined;
  /** The text COPY's error (for the refused values), if any. */
  readonly textError: ServerError | undefined;
  /** Each accepted value's encoded field (length + bytes), by id. */
  readonly encoded: Map<number, Buffer>;
}

/**
 * Binary COPY of the `(id, v)` rows the encoder accepts (the id as int4), and text COPY of
 * the rows whose value it refuses, into `table`.
 */
export async function copyBinary(client: pg.Client, table: string, rows: readonly (readonly [number, string | null])[], encoder: FieldEncoder): Promise<BinaryOutcome> {
  const out = new WireBuffer(1024);
  writeRaw(out, BINARY_COPY_HEADER);
  const refused: string[] = [];
  const textRows: [number, string | null][] = [];
  const encoded = new Map<number, Buffer>();
  let binaryRows = 0;
  for (const [id, v] of rows) {
    const mark = out.pos;
    writeTupleStart(out, 2);
    writeInt32(out, id);
    if (v === null) {
      writeNull(out);
    } else {
      const src = Buffer.from(v);
      const at = out.pos;
      if (!encoder.encode(src, 0, src.length, out)) {
        out.pos = mark;
        refused.push(v);
        textRows.push([id, v]);
        continue;
      }
      encoded.set(id, Buffer.from(out.bytes.subarray(at, out.pos)));
    }
    binaryRows++;
  }
  writeRaw(out, BINARY_COPY_TRAILER);
  const binaryError = binaryRows > 0 ? await runCopy(client, `COPY ${table} (id, v) FROM STDIN (FORMAT binary)`, out.bytes.subarray(0, out.pos)) : undefined;
  const textError = textRows.length > 0 ? await copyText(client, table, textRows) : undefined;
  return { refused, binaryError, textError, encoded };
}

/** md5 of the table's rows as text, in id order. */
export async function tableMd5(client: pg.Client, table: string): Promise<{ count: number; md5: string }> {
  const r = await client.query<{ n: number; md5: string }>(`SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY id), '')) AS md5 FROM ${table} t`);
  return { count: r.rows[0]!.n, md5: r.rows[0]!.md5 };
}
