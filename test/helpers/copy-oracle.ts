/**
 * The server as the oracle of pgsurge's reading of a file: the server's own COPY of a file
 * (read by the server, `COPY … FROM '<path>'`), and a pgsurge load of the same file with its
 * summary and reject log read back.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { copyFrom, runCli, testUrl } from './test-db.js';
import { parseRejectLog } from './reject-log.js';

/** What the server's COPY of a file did: the rows it loaded, or its error. */
export type ServerCopy = { rows: number; error?: undefined } | { rows?: undefined; error: string };

/** The server reads the files itself: its user must reach them (the test's temp folder is 0700). */
export async function shareWithServer(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
}

/** Writes a file the server can read. */
export async function writeShared(file: string, content: Buffer | string): Promise<string> {
  await fs.writeFile(file, content, { mode: 0o644 });
  await fs.chmod(file, 0o644);
  return file;
}

/** `COPY table FROM '<file>' (options)` on the server; an error is returned, not thrown. */
export async function serverCopy(client: pg.Client, table: string, file: string, options: string): Promise<ServerCopy> {
  try {
    const r = await client.query(`COPY ${table} FROM ${literal(file)} ${options}`);
    return { rows: r.rowCount ?? 0 };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/**
 * `COPY table FROM STDIN (options)` of these bytes, as a client sends them; an error is
 * returned, not thrown. (The server reads `\.` differently from a client than from a file.)
 */
export async function serverCopyStdin(client: pg.Client, table: string, data: Buffer, options: string): Promise<ServerCopy> {
  try {
    const stream = client.query(copyFrom(`COPY ${table} FROM STDIN ${options}`));
    await pipeline(Readable.from([data]), stream);
    return { rows: stream.rowCount };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;

export interface RejectLine {
  line: number;
  offset: number;
  sqlstate: string;
  message: string;
}

export interface PgsurgeLoad {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The input's accounting from the `--json` summary; undefined when there is none. */
  counts?: { read: number; loaded: number; rejected: number; skipped: number };
  /** The reject log's lines, in input order ([] when there is no log). */
  rejects: RejectLine[];
  /** The reject file: the rejected records as read, in input order (empty when there is none). */
  rejected: Buffer;
}

/** A pgsurge load of one file with `--json`: its summary's counts for the file and its reject log. */
export async function pgsurgeLoad(file: string, table: string, schema: string, args: readonly string[]): Promise<PgsurgeLoad> {
  const rejectFile = path.join(path.dirname(file), `${path.basename(file)}.rejects`);
  await fs.rm(rejectFile, { force: true });
  await fs.rm(`${rejectFile}.log`, { force: true });
  const r = await runCli([
    'load', file, '-t', table, '--db', testUrl(), '--schema', schema, '--truncate', '--json', '--sample-every', 'off',
    '--max-rejects', '1000000', '--reject-file', rejectFile, ...args,
  ]);
  let counts: PgsurgeLoad['counts'];
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const event = JSON.parse(line) as { event?: string; files?: { read: number; loaded: number; rejected: number; skipped: number }[] };
    if (event.event === 'summary' && event.files !== undefined) {
      const f = event.files.reduce((a, x) => ({ read: a.read + x.read, loaded: a.loaded + x.loaded, rejected: a.rejected + x.rejected, skipped: a.skipped + x.skipped }), { read: 0, loaded: 0, rejected: 0, skipped: 0 });
      counts = f;
    }
  }
  let rejects: RejectLine[] = [];
  const log = await fs.readFile(`${rejectFile}.log`, 'utf8').catch(() => '');
  if (log !== '') {
    rejects = parseRejectLog(log).map(({ line, offset, sqlstate, message }) => ({ line, offset, sqlstate, message }));
  }
  const rejected = await fs.readFile(rejectFile).catch(() => Buffer.alloc(0));
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, counts, rejects, rejected };
}

/**
 * Whether a reject file holds the rejected records verbatim, in input order: a slice of the
 * input from each logged byte offset up to a line end (LF, CR-LF or a lone CR) or the
 * input's end, its line ending included, and nothing else; a last record without one is
 * given the input's (`lineEnd`, the first line's), so the reject file loads again with the
 * same options. Undefined when it does; else what is wrong.
 */
export function verbatimRejects(input: Buffer, rejected: Buffer, offsets: readonly number[], lineEnd: '\n' | '\r\n' | '\r'): string | undefined {
  let at = 0;
  for (const [i, offset] of offsets.entries()) {
    let same = 0;
    while (at + same < rejected.length && offset + same < input.length && rejected[at + same] === input[offset + same]) same++;
    const next = offsets[i + 1];
    const length = next !== undefined && next > offset ? Math.min(same, next - offset) : same;
    const end = offset + length;
    const atLineEnd = end === input.length || input[end - 1] === 0x0a || (input[end - 1] === 0x0d && input[end] !== 0x0a);
    if (length === 0 || !atLineEnd) {
      return `the rejected record at byte ${offset} is not in the reject file as read: the file has ${JSON.stringify(rejected.subarray(at, at + length + 20).toString('latin1'))}, the input ${JSON.stringify(input.subarray(offset, offset + length + 20).toString('latin1'))}`;
    }
    at += length;
    // The input's last record, without a line ending of its own (or with a lone CR in a CRLF input), is given the input's.
    const unterminated = end === input.length && !input.subarray(end - lineEnd.length, end).equals(Buffer.from(lineEnd));
    if (unterminated) {
      if (!rejected.subarray(at, at + lineEnd.length).equals(Buffer.from(lineEnd))) {
        return `the rejected last record at byte ${offset}, unterminated in the input, is not followed by the input's line ending ${JSON.stringify(lineEnd)} in the reject file: ${JSON.stringify(rejected.subarray(at, at + 4).toString('latin1'))}`;
      }
      at += lineEnd.length;
    }
  }
  return at === rejected.length ? undefined : `the reject file has ${rejected.length - at} bytes more than the rejected records`;
}
