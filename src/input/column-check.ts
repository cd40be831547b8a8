import { promises as fs } from 'node:fs';
import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { framerFor } from './framer-for.js';
import { LoadError } from '../core/load-error.js';
import { compressionOf } from './file-blocks.js';
import { copyColumns, readTableColumns, type TableColumnCache } from '../core/table-columns.js';

const FIRST_READ = 64 * 1024;
const MAX_READ = 16 * 1024 * 1024;

/**
 * The record at `index` (0: the first) of a file in the writer's wire format, or undefined
 * when the file has no such record (or it lies past the first 16 MB).
 */
export async function firstRecord(input: LoadTarget, index = 0): Promise<Buffer | undefined> {
  const framer = framerFor(input.format);
  const fh = await fs.open(input.file, 'r');
  try {
    for (let want = FIRST_READ; ; want *= 4) {
      const buf = Buffer.alloc(want);
      const { bytesRead } = await fh.read(buf, 0, want, 0);
      const eof = bytesRead < want || want >= MAX_READ;
      // Stopped at the read limit, not at the file's end: the last record framed may be cut short.
      const cut = eof && bytesRead === want;
      // The records framed end in `\n`, whatever the file's line ending.
      const wire = framerFor(input.format === 'csv' ? 'csv' : 'text', { lineEnd: 'nl' });
      let at = 0;
      let before = 0;
      for (;;) {
        const framed = framer.frame(buf.subarray(at, bytesRead), eof);
        if (framed.consumed === 0 || framed.records === 0) break;
        // Records that never reach the server (the end-of-data marker, a record COPY would refuse) are no first record.
        const sent = framed.unframable === undefined && framed.out.length > 0;
        if (sent && before + framed.records > index) {
          const k = Math.max(0, index - before);
          const last = at + framed.consumed === bytesRead && k === framed.records - 1;
          if (cut && index > 0 && last) break;
          const spans = wire.recordSpans(framed.out);
          return framed.out.subarray(k === 0 ? 0 : spans.ends[k - 1], spans.ends[k]);
        }
        before += framed.records;
        at += framed.consumed;
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
export async function checkColumnCount(client: pg.Client, input: LoadTarget, tableName: string, cache?: TableColumnCache): Promise<void> {
  if (input.file === '-' || compressionOf(input) !== undefined) return;
  // JSON maps keys to columns by name; other delimiters, quotes or encodings: COPY itself says it, row by row.
  if (input.format !== 'tbl' && input.format !== 'text' && input.format !== 'csv') return;
  const options = input.input ?? {};
  if (options.delimiter !== undefined || options.quote !== undefined || options.escape !== undefined || options.encoding !== undefined) return;
  const st = await fs.stat(input.file);
  if (!st.isFile()) return;
  // The header line is left out whatever it holds (COPY's HEADER does not count its fields), and so are --skip's records.
  const header = options.header !== undefined ? 1 : 0;
  const index = header + (options.skip ?? 0);
  const record = await firstRecord(input, index);
  if (record === undefined) return;
  // COPY without a column list expects every live column but generated ones.
  const expected = input.columns?.length ?? copyColumns(await readTableColumns(client, input.table, input.schema, cache)).length;
  const found = countFields(record, input.format);
  if (found !== expected) {
    const which = index === 0 ? `${input.file}:1: table ${tableName} has ${expected} column${expected === 1 ? '' : 's'}, the first record has` : `${input.file}: table ${tableName} has ${expected} column${expected === 1 ? '' : 's'}, the first record loaded (record ${index + 1}, after ${header ? 'the header' : ''}${header && options.skip ? ' and ' : ''}${options.skip ? `--skip ${options.skip}` : ''}) has`;
    throw new LoadError('bad-input', `${which} ${found} field${found === 1 ? '' : 's'} (format ${input.format})`, {
      hint: 'check the table (-t), the format (-f) and the file; nothing was loaded',
    });
  }
}
