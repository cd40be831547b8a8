/**
 * Real files from public test suites (PostgreSQL's regression data, DuckDB's CSV tests,
 * pgloader's tests; test/corpus/SOURCES names each one's repository, path, commit and
 * license), loaded by the server's own COPY (read by the server from the file) and by
 * pgsurge with the same options, into tables of text columns. test/corpus/manifest.json
 * gives each file's format, options and column count; a file the server loads must give
 * pgsurge's load the same table (digest of the rows as COPY TO renders them) with every
 * record loaded. A file the server refuses is listed with what pgsurge makes of it (rows
 * loaded, rejected and skipped), and the test checks both. The reject file holds the
 * rejected records as read.
 *
 * Some files end their data with COPY's end-of-data marker, a lone `\.` line (psql's inline
 * data). pgsurge does not stop there: a marker that is the input's last line is counted as
 * skipped, one anywhere else is rejected. The expected table is the server's COPY of the
 * file without its marker lines (the server's own reading of `\.` differs between versions).
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { closeTestSchema, digest, openTestSchema, tableRecords } from '../helpers/test-db.js';
import { pgsurgeLoad, serverCopy, shareWithServer, verbatimRejects, writeShared } from '../helpers/copy-oracle.js';
import { detectLineEnd } from '../../src/input/line-ends.js';

const SCHEMA = 'it_corpus';
const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/corpus');
let client: pg.Client;
let dir: string;

interface Entry {
  format: 'text' | 'csv';
  delimiter?: string;
  quote?: string;
  escape?: string;
  null?: string;
  header?: boolean;
  encoding?: string;
  /** The table's text columns: the file's fields per record (for a file the server refuses, its first record's). */
  columns: number;
  /** What the server's COPY does with the file. */
  server: 'loads' | 'refuses';
  /** For a file the server refuses: what pgsurge does with it. */
  pgsurge?: { loaded: number; rejected: number; skipped: number };
  /** Why the server refuses it (a few words of its error). */
  why?: string;
}

/** The lone `\\.` lines of a file (LF, CRLF or CR line ends): their byte ranges, and whether the last one ends the file. */
function markerLines(bytes: Buffer): { ranges: [number, number][]; last: boolean } {
  const ranges: [number, number][] = [];
  const text = bytes.toString('latin1');
  for (const m of text.matchAll(/(?<=^|[\r\n])\\\.(?:\r\n|\r|\n|$)/g)) ranges.push([m.index!, m.index! + m[0].length]);
  return { ranges, last: ranges.length > 0 && ranges.at(-1)![1] === bytes.length };
}

/** The file without the byte ranges. */
function without(bytes: Buffer, ranges: readonly [number, number][]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const [a, b] of ranges) {
    parts.push(bytes.subarray(at, a));
    at = b;
  }
  parts.push(bytes.subarray(at));
  return Buffer.concat(parts);
}

const manifest = JSON.parse(await fs.readFile(path.join(CORPUS, 'manifest.json'), 'utf8')) as Record<string, Entry>;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-corpus-'));
  await shareWithServer(dir);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** The file's line ending, its first line's as COPY takes it. */
function lineEndOf(bytes: Buffer, e: Entry): '\n' | '\r\n' | '\r' {
  const quote = (e.quote ?? '"').charCodeAt(0);
  const csv = e.format === 'csv' ? { quote, escape: (e.escape ?? e.quote ?? '"').charCodeAt(0) } : undefined;
  return { nl: '\n', crnl: '\r\n', cr: '\r' }[detectLineEnd(bytes, true, csv) ?? 'nl'] as '\n' | '\r\n' | '\r';
}

const quoteLiteral = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function copyOptions(e: Entry): string {
  const o = [`FORMAT ${e.format}`];
  if (e.delimiter !== undefined) o.push(`DELIMITER ${quoteLiteral(e.delimiter)}`);
  if (e.quote !== undefined) o.push(`QUOTE ${quoteLiteral(e.quote)}`);
  if (e.escape !== undefined) o.push(`ESCAPE ${quoteLiteral(e.escape)}`);
  if (e.null !== undefined) o.push(`NULL ${quoteLiteral(e.null)}`);
  if (e.header) o.push('HEADER true');
  if (e.encoding !== undefined) o.push(`ENCODING ${quoteLiteral(e.encoding)}`);
  return `(${o.join(', ')})`;
}

/** Two workers and chunks of a sixteenth of the file (256 bytes at least): a small file is still cut in several chunks. */
function pgsurgeOptions(e: Entry, size: number): string[] {
  const o = ['-f', e.format, '-w', '2', '--chunk-size', String(Math.max(256, Math.ceil(size / 16)))];
  if (e.delimiter !== undefined) o.push('--delimiter', e.delimiter);
  if (e.quote !== undefined) o.push('--quote', e.quote);
  if (e.escape !== undefined) o.push('--escape', e.escape);
  if (e.null !== undefined) o.push('--null', e.null);
  if (e.header) o.push('--header');
  if (e.encoding !== undefined) o.push('--encoding', e.encoding);
  return o;
}

describe('files from public test suites: pgsurge loads what the server loads, and the manifest says what it does with the rest', { concurrency: 2 }, () => {
  const names = Object.keys(manifest);
  it('the corpus has 30–60 files from the three sources, each in SOURCES', async () => {
    assert.ok(names.length >= 30 && names.length <= 60, `${names.length} files`);
    const sources = await fs.readFile(path.join(CORPUS, 'SOURCES'), 'utf8');
    for (const name of names) assert.ok(sources.includes(name), `${name} is in SOURCES`);
    for (const source of ['postgres/', 'duckdb/', 'pgloader/']) assert.ok(names.some((n) => n.startsWith(source)), source);
  });

  // Two at a time: each is a pgsurge process of ~0.5 s, mostly its start.
  for (const [i, name] of names.entries()) {
    const e = manifest[name]!;
    it(`${name} (${e.format}${e.server === 'refuses' ? `; the server refuses it: ${e.why ?? ''}` : ''})`, async () => {
      const bytes = await fs.readFile(path.join(CORPUS, name));
      const file = await writeShared(path.join(dir, `${i}-${path.basename(name)}`), bytes);
      const markers = markerLines(bytes);
      const serverFile = markers.ranges.length === 0 ? file : await writeShared(path.join(dir, `${i}-server-${path.basename(name)}`), without(bytes, markers.ranges));
      const skipped = markers.last ? 1 : 0;
      const markersRejected = markers.ranges.length - skipped;
      const cols = Array.from({ length: e.columns }, (_, k) => `c${k + 1} text`).join(', ');
      const server = `${SCHEMA}.server_${i}`;
      const table = `pgsurge_${i}`;
      await client.query(`CREATE TABLE ${server} (${cols}); CREATE TABLE ${SCHEMA}.${table} (${cols})`);
      const copy = await serverCopy(client, server, serverFile, copyOptions(e));
      const res = await pgsurgeLoad(file, table, SCHEMA, pgsurgeOptions(e, bytes.length));
      const context = `${name}: pgsurge exited ${res.code}, ${JSON.stringify(res.counts)}, rejects ${JSON.stringify(res.rejects.map((r) => `${r.line}: ${r.message}`))}\n${res.stderr}`;
      if (e.server === 'loads') {
        assert.equal(copy.error, undefined, `the server loads ${name}`);
        assert.equal(res.code, markersRejected > 0 ? 3 : 0, context);
        const rows = copy.rows!;
        assert.deepEqual(res.counts, { read: rows + markersRejected + skipped, loaded: rows, rejected: markersRejected, skipped }, context);
        const want = await tableRecords(client, server, '(FORMAT text)');
        const got = await tableRecords(client, `${SCHEMA}.${table}`, '(FORMAT text)');
        assert.equal(digest(got), digest(want), `${context}\npgsurge's rows: ${JSON.stringify(got.slice(0, 8))}\nthe server's: ${JSON.stringify(want.slice(0, 8))}`);
      } else {
        assert.notEqual(copy.error, undefined, `the server refuses ${name}`);
        assert.ok(res.code === 0 || res.code === 3, context);
        const c = res.counts!;
        assert.deepEqual({ loaded: c.loaded, rejected: c.rejected, skipped: c.skipped }, e.pgsurge, context);
        assert.equal(c.read, c.loaded + c.rejected + c.skipped, context);
      }
      assert.equal(verbatimRejects(bytes, res.rejected, res.rejects.map((r) => r.offset), lineEndOf(bytes, e)), undefined, context);
    });
  }
});
