import { promises as fs } from 'node:fs';
import type pg from 'pg';
import type { LoadTarget } from '../batching/chunk.js';
import { framerFor } from '../framing/framer-for.js';
import { LoadError } from './load-error.js';
import { compressionOf } from '../source/file-blocks.js';

/** Columns COPY without a column list expects: every live column but generated ones. */
export async function tableColumnCount(client: pg.Client, tableOid: number): Promise<number> {
  const r = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = ''",
    [tableOid],
  );
  return r.rows[0]?.n ?? 0;
}

const FIRST_READ = 64 * 1024;
const MAX_READ = 16 * 1024 * 1024;

/** The first record of a file in the writer's wire format, or undefined for an empty file. */
export async function firstRecord(input: LoadTarget): Promise<Buffer | undefined> {
  const framer = framerFor(input.format);
  const fh = await fs.open(input.file, 'r');
  try {
    for (let want = FIRST_READ; ; want *= 4) {
      const buf = Buffer.alloc(want);
      const { bytesRead } = await fh.read(buf, 0, want, 0);
      const eof = bytesRead < want || want >= MAX_READ;
      let at = 0;
      let framed = framer.frame(buf.subarray(0, bytesRead), eof);
      // Records that never reach the server (the end-of-data marker, a record COPY would refuse) are no first record.
      while (framed.unframable !== undefined && framed.consumed > 0) {
        at += framed.consumed;
        framed = framer.frame(buf.subarray(at, bytesRead), eof);
      }
      if (framed.records > 0 && framed.out.length > 0) {
        // The records framed end in `\n`, whatever the file's line ending.
        const spans = framerFor(input.format === 'csv' ? 'csv' : 'text', { lineEnd: 'nl' }).recordSpans(framed.out);
        return framed.out.subarray(0, spans.ends[0]);
      }
      if (eof) return undefined;
    }
  } finally {
    await fh.close();
  }
}

/** Fields in one wire-format record (tbl: `|`, text: tab, both with backslash escapes; csv: commas outside quotes). */
export function countFields(record: Buffer, format: LoadTarget['format']): number {
  let end = record.length;
  if (record[end - 1] === 0x0a) end--;
  if (record[end - 1] === 0x0d) end--;
  let fields = 1;
  if (format === 'csv') {
    let inQuote = false;
    for (let i = 0; i < end; i++) {
      const c = record[i];
      if (c === 0x22) inQuote = !inQuote;
      else if (c === 0x2c && !inQuote) fields++;
    }
    return fields;
  }
  const delimiter = format === 'tbl' ? 0x7c : 0x09;
  for (let i = 0; i < end; i++) {
    const c = record[i];
    if (c === 0x5c) i++;
    else if (c === delimiter) fields++;
  }
  return fields;
}

/**
 * Checks the first record of an input against the table before anything is written: a
 * wrong file, table or format then fails with one line instead of rejecting every row.
 */
export async function checkColumnCount(client: pg.Client, input: LoadTarget, tableOid: number, tableName: string): Promise<void> {
  if (input.file === '-' || compressionOf(input) !== undefined) return;
  // JSON maps keys to columns by name; other delimiters, quotes or encodings: COPY itself says it, row by row.
  if (input.format !== 'tbl' && input.format !== 'text' && input.format !== 'csv') return;
  const options = input.input ?? {};
  if (options.delimiter !== undefined || options.quote !== undefined || options.escape !== undefined || options.encoding !== undefined) return;
  const st = await fs.stat(input.file);
  if (!st.isFile()) return;
  const record = await firstRecord(input);
  if (record === undefined) return;
  const expected = input.columns?.length ?? (await tableColumnCount(client, tableOid));
  const found = countFields(record, input.format);
  if (found !== expected) {
    throw new LoadError('bad-input', `${input.file}:1: table ${tableName} has ${expected} column${expected === 1 ? '' : 's'}, the first record has ${found} field${found === 1 ? '' : 's'} (format ${input.format})`, {
      hint: 'check the table (-t), the format (-f) and the file; nothing was loaded',
    });
  }
}
