/**
 * A differential oracle of pgsurge's reading of text, `.tbl` and CSV: seeded generated
 * records with every special byte (backslash, the delimiter, the quote, CR, LF, `\.`,
 * `\N`, empty fields, multibyte UTF-8, control bytes, invalid UTF-8) at every position of
 * a field and a record, in LF, CRLF and CR-only files, loaded by pgsurge at many chunk
 * sizes, worker counts and both wires.
 *
 * The server decides what each record is. The generator writes records it means to be
 * good and records with something special or wrong in them; each of the latter is
 * COPYed by the server alone (between two plain records, from a file the server reads),
 * and is then good (loaded), refused (an error) or a stop (the server's COPY ends there:
 * an end-of-data marker; a record holding `\.` is also sent the way a client sends it, COPY
 * FROM STDIN, where PostgreSQL 15 ends the data at a value ending in `\.` that it reads from a
 * file as data). The expected table is the server's COPY of the file made of
 * the good records only, which must load whole. pgsurge loads the whole file and must
 * give the same table (digest of the rows as COPY TO renders them), reject exactly the
 * refused and stop records (its reject log's byte offsets; its reject file holds them as
 * read, in input order), except that a lone `\.` as the last record is counted as skipped,
 * and account for every record read.
 * A failure names its seed (PGSURGE_FUZZ_SEED repeats it) and shows the records that differ.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { prng } from '../helpers/lineitem-data.js';
import { closeTestSchema, digest, openTestSchema, tableRecords } from '../helpers/test-db.js';
import { pgsurgeLoad, serverCopy, serverCopyStdin, shareWithServer, writeShared, type ServerCopy } from '../helpers/copy-oracle.js';

const SCHEMA = 'it_format_oracle';
const SEED = Number(process.env.PGSURGE_FUZZ_SEED ?? 20261206);
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-format-oracle-'));
  await shareWithServer(dir);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

type Format = 'text' | 'csv' | 'tbl';
type Style = 'lf' | 'crlf' | 'cr';
const TERMINATOR: Record<Style, string> = { lf: '\n', crlf: '\r\n', cr: '\r' };
/** A raw newline byte that is not the file's line ending: the server refuses it outside a CSV quote. */
const STRAY_NEWLINE: Record<Style, string[]> = { lf: ['\r'], crlf: ['\r', '\n'], cr: ['\n'] };

/** The columns: typed ones for the binary wire, text ones for the special bytes; `s` first, so a CSV record may start with `\.` as data. */
const COLUMNS = '(s text, id int, n int, d date, t text)';

/**
 * plain: meant good, not asked (the expected table's load checks it); special: something
 * whose meaning the server decides; bad: meant to be refused (the server must refuse it
 * alone); marker: a lone `\.` line.
 */
type Kind = 'plain' | 'special' | 'bad' | 'marker';

interface Gen {
  id: number;
  kind: Kind;
  what: string;
  bytes: Buffer;
}

type Random = () => number;
const int = (r: Random, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Random, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Stands for the raw byte 0xff, never valid UTF-8: put in as U+00FF (which nothing else writes) and made the byte once the record is encoded. */
const INVALID_BYTE = '\xff';

/** The characters values are made of: every one that means something to one of the formats, and some that mean nothing. */
const ATOMS = ['a', 'b', 'Z', 'q', '0', '7', ' ', '.', ',', '|', '\t', '"', "'", '\\', '\n', '\r', '\r\n', 'é', '✓', '𝄞', '\x01', '\x1f', '\x7f', 'N', '\\N', '\\.', 'x', 'f', '\\\\', '""', ';'];

function randomValue(r: Random): string | null {
  const roll = r();
  if (roll < 0.07) return null;
  if (roll < 0.14) return '';
  // Whole values that are special on their own.
  if (roll < 0.2) return pick(r, ['\\N', 'N', '\\', '.', '\\.', '"', '""', ',', '|', '\t', '\n', '\r', '\r\n', ' ', 'NULL']);
  return Array.from({ length: int(r, 1, 8) }, () => pick(r, ATOMS)).join('');
}

const isLetterSafeToEscape = (c: string): boolean => /^[a-zA-Z]$/.test(c) && !'bfnrtvxN'.includes(c);

/** A value written in COPY text with this delimiter, choosing among the equivalent escapes. */
function textValue(r: Random, v: string | null, delim: string): string {
  if (v === null) return '\\N';
  let out = '';
  for (const c of v) {
    if (c === '\\') out += '\\\\';
    else if (c === '\n') out += r() < 0.5 ? '\\n' : '\\\n';
    else if (c === '\r') out += r() < 0.5 ? '\\r' : '\\\r';
    else if (c === delim) out += delim === '\t' && r() < 0.5 ? '\\t' : `\\${delim}`;
    else if (c === '\t') out += r() < 0.5 ? '\t' : '\\t';
    else if (isLetterSafeToEscape(c) && r() < 0.3) {
      const roll = r();
      const code = c.charCodeAt(0);
      out += roll < 0.33 ? `\\${c}` : roll < 0.66 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\${code.toString(8).padStart(3, '0')}`;
    } else if (c.charCodeAt(0) > 0x7f && r() < 0.2) {
      out += [...Buffer.from(c)].map((b) => `\\${b.toString(8)}`).join('');
    } else out += c;
  }
  return out;
}

const CSV_SPECIAL = /[,"\r\n]/;

/** A value as CSV: NULL unquoted empty, '' quoted, specials quoted; sometimes quoted anyway, sometimes quoted in the middle only. */
function csvValue(r: Random, v: string | null): string {
  if (v === null) return '';
  const q = (s: string): string => `"${s.replace(/"/g, '""')}"`;
  if (v === '') return '""';
  const roll = r();
  if (roll < 0.25) return q(v);
  if (roll < 0.45 && v.length >= 3) {
    // unquoted head, quoted middle, unquoted tail: `ab"c,d"e` is `abc,de`.
    const chars = [...v];
    let head = 0;
    while (head < chars.length - 1 && !CSV_SPECIAL.test(chars[head]!) && r() < 0.6) head++;
    let tail = chars.length;
    while (tail - 1 > head && !CSV_SPECIAL.test(chars[tail - 1]!) && r() < 0.6) tail--;
    if (head > 0) return chars.slice(0, head).join('') + q(chars.slice(head, tail).join('')) + chars.slice(tail).join('');
  }
  return CSV_SPECIAL.test(v) ? q(v) : v;
}

function randomDate(r: Random): string {
  return `${int(r, 1990, 2030)}-${String(int(r, 1, 12)).padStart(2, '0')}-${String(int(r, 1, 28)).padStart(2, '0')}`;
}

/** The kinds of records beyond the plain ones, per format: [name, kind, how the fields (as written) are changed]. */
type Fields = string[];
interface Mutation {
  name: string;
  kind: Kind;
  apply: (r: Random, f: Fields, style: Style) => void;
}

const insertAt = (r: Random, s: string, what: string): string => {
  const cut = int(r, 0, s.length);
  // Never inside a backslash escape of the text formats.
  const safe = s.slice(0, cut).match(/\\+$/)?.[0].length ?? 0;
  const at = safe % 2 === 1 ? cut - 1 : cut;
  return s.slice(0, at) + what + s.slice(at);
};

/** Changes one of the two text values (the first or the last field). */
const at = (r: Random, f: Fields, change: (v: string) => string): void => {
  const k = pick(r, [0, 4]);
  f[k] = change(f[k]!);
};

const COMMON: Mutation[] = [
  { name: 'bad int', kind: 'bad', apply: (r, f) => (f[2] = pick(r, ['x', '1.5', '99999999999', '1 2', '12a'])) },
  { name: 'bad date', kind: 'bad', apply: (r, f) => (f[3] = pick(r, ['2024-02-30', '2024-13-01', 'yesterday x', '2024-1-1x'])) },
  { name: 'a field short', kind: 'bad', apply: (_r, f) => void f.pop() },
  { name: 'a field more', kind: 'bad', apply: (r, f) => void f.splice(int(r, 0, f.length), 0, 'extra') },
  { name: 'int with blanks or sign', kind: 'special', apply: (r, f) => (f[2] = pick(r, [' 42', '42 ', '+7', '-0', '007', '0x1F', '1_000'])) },
];

const TEXT_MUTATIONS: Mutation[] = [
  ...COMMON,
  { name: 'stray raw newline byte', kind: 'bad', apply: (r, f, style) => at(r, f, (v) => insertAt(r, v, pick(r, STRAY_NEWLINE[style]))) },
  { name: '\\. inside a value', kind: 'special', apply: (r, f) => at(r, f, () => insertAt(r, 'ab', '\\.')) },
  { name: 'last value ends in \\.', kind: 'special', apply: (r, f) => (f[4] = pick(r, ['', 'x', 'a\\\\']) + '\\.') },
  { name: 'a value ends in \\.', kind: 'special', apply: (_r, f) => (f[0] = f[0] + '\\.') },
  { name: 'first value is \\.', kind: 'special', apply: (_r, f) => (f[0] = '\\.') },
  { name: 'invalid UTF-8 by escape', kind: 'special', apply: (r, f) => (f[4] = insertAt(r, f[4]!, pick(r, ['\\377', '\\xff', '\\303']))) },
  { name: 'invalid UTF-8 raw', kind: 'special', apply: (r, f) => (f[0] = insertAt(r, f[0]!, INVALID_BYTE)) },
  { name: 'escaped newline at a value end', kind: 'plain', apply: (r, f) => at(r, f, (v) => v + pick(r, ['\\\n', '\\\r', '\\\r\\\n'])) },
  { name: 'escaped newline at a value start', kind: 'plain', apply: (r, f) => at(r, f, (v) => pick(r, ['\\\n', '\\\r']) + v) },
  { name: 'escaped newline as a whole value', kind: 'plain', apply: (r, f) => at(r, f, () => pick(r, ['\\\n', '\\\r', '\\\r\\\n'])) },
];

const CSV_MUTATIONS: Mutation[] = [
  ...COMMON,
  { name: 'stray raw newline byte unquoted', kind: 'bad', apply: (r, f, style) => (f[4] = 'u' + pick(r, STRAY_NEWLINE[style]) + 'v') },
  { name: 'record starts with \\.', kind: 'special', apply: (r, f) => (f[0] = pick(r, ['\\.', '\\.x', '\\."q"'])) },
  { name: 'a quoted value holds a \\. line', kind: 'special', apply: (_r, f, style) => (f[4] = `"a${TERMINATOR[style]}\\.${TERMINATOR[style]}b"`) },
  { name: 'a quoted value starts with a \\. line', kind: 'special', apply: (_r, f, style) => (f[0] = `"\\.${TERMINATOR[style]}x"`) },
  { name: 'quoted "\\."', kind: 'special', apply: (_r, f) => (f[0] = '"\\."') },
  { name: 'invalid UTF-8 raw', kind: 'special', apply: (r, f) => (f[4] = insertAt(r, 'abc', INVALID_BYTE)) },
  { name: 'quoted newlines of every style', kind: 'plain', apply: (r, f) => (f[pick(r, [0, 4])] = `"${pick(r, ['\n', '\r', '\r\n', '\n\n', '\r\r'])}"`) },
  { name: 'a quote doubled at a value edge', kind: 'plain', apply: (r, f) => (f[pick(r, [0, 4])] = pick(r, ['""""', '"""x"', '"x"""', '""""""'])) },
];

function mutationsFor(format: Format): Mutation[] {
  return format === 'csv' ? CSV_MUTATIONS : TEXT_MUTATIONS;
}

/** The records of one file; the first three are plain, so the file's newline style is a plain record's. */
function generate(format: Format, style: Style, count: number, seed: number, options: { markers: number; markerLast: boolean }): Gen[] {
  const r = prng(seed);
  const term = TERMINATOR[style];
  const delim = format === 'csv' ? ',' : format === 'tbl' ? '|' : '\t';
  const mutations = mutationsFor(format);
  const markerAt = new Set(Array.from({ length: options.markers }, (_, i) => Math.floor(((i + 1) * count) / (options.markers + 1))));
  const out: Gen[] = [];
  for (let id = 1; id <= count; id++) {
    if (markerAt.has(id)) out.push({ id: -id, kind: 'marker', what: 'a lone \\. line', bytes: Buffer.from(`\\.${term}`) });
    const s = randomValue(r);
    const t = randomValue(r);
    const n = r() < 0.05 ? null : String(int(r, -2_000_000_000, 2_000_000_000));
    const d = r() < 0.05 ? null : randomDate(r);
    const enc = (v: string | null): string => (format === 'csv' ? csvValue(r, v) : textValue(r, v, delim));
    const fields = [enc(s), String(id), format === 'csv' ? (n ?? '') : (n ?? '\\N'), format === 'csv' ? (d ?? '') : (d ?? '\\N'), enc(t)];
    let kind: Kind = 'plain';
    let what = 'plain';
    if (id > 3 && r() < 0.07) {
      const m = pick(r, mutations);
      m.apply(r, fields, style);
      kind = m.kind;
      what = m.name;
    }
    // A CSV record that starts with `\.` is data to COPY only when more follows on its line: the server decides.
    if (format === 'csv' && kind === 'plain' && fields[0]!.startsWith('\\.')) {
      kind = 'special';
      what = 'record starts with \\.';
    }
    const line = fields.join(delim) + (format === 'tbl' ? '|' : '');
    out.push({ id, kind, what, bytes: Buffer.concat([Buffer.from(line, 'utf8'), Buffer.from(term)]) });
  }
  if (options.markerLast) out.push({ id: 0, kind: 'marker', what: 'a lone \\. line at the end', bytes: Buffer.from(`\\.${term}`) });
  const written = Buffer.from(INVALID_BYTE, 'utf8');
  for (const g of out) if (g.bytes.includes(written)) g.bytes = replaceAll(g.bytes, written, Buffer.from([0xff]));
  return out;
}

function replaceAll(buf: Buffer, from: Buffer, to: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (let i = buf.indexOf(from); i >= 0; i = buf.indexOf(from, at)) {
    parts.push(buf.subarray(at, i), to);
    at = i + from.length;
  }
  parts.push(buf.subarray(at));
  return Buffer.concat(parts);
}

/** COPY's options for the server's reading of the format. */
function copyOptions(format: Format): string {
  return format === 'csv' ? '(FORMAT csv)' : format === 'tbl' ? "(FORMAT text, DELIMITER '|')" : '(FORMAT text)';
}

/** A `.tbl` record ends with `|`: the server reads it into one column more, which the comparison leaves out. */
const serverColumns = (format: Format): string => (format === 'tbl' ? '(s text, id int, n int, d date, t text, tail text)' : COLUMNS);

interface Expected {
  gens: Gen[];
  file: string;
  good: number;
  rejected: Gen[];
  skipped: number;
  digest: string;
  records: string[];
  offsets: Map<number, Gen>;
}

const END_OF_DATA = Buffer.from('\\.');

/** What the server did with a sentinel, the record and a sentinel: 3 rows, an error, or fewer rows (it ended the data at the record). */
const verdictOf = (copy: ServerCopy): 'loaded' | 'refused' | 'stop' => (copy.error !== undefined ? 'refused' : copy.rows === 3 ? 'loaded' : 'stop');

/** Asks the server about every record that is not plain, then loads the good ones: what pgsurge must make of the file. */
async function expectation(name: string, format: Format, style: Style, gens: Gen[]): Promise<Expected> {
  const term = TERMINATOR[style];
  const sentinel = (k: number): string => (format === 'csv' ? `sentinel,${k},0,2000-01-01,x` : format === 'tbl' ? `sentinel|${k}|0|2000-01-01|x|` : `sentinel\t${k}\t0\t2000-01-01\tx`);
  const probeTable = `${SCHEMA}.${name}_probe`;
  const expTable = `${SCHEMA}.${name}_expected`;
  await client.query(`CREATE TABLE ${probeTable} ${serverColumns(format)}`);
  await client.query(`CREATE TABLE ${expTable} ${serverColumns(format)}`);
  const probeFile = path.join(dir, `${name}.probe`);
  const good: Gen[] = [];
  const rejected: Gen[] = [];
  let skipped = 0;
  for (const [i, g] of gens.entries()) {
    if (g.kind === 'plain') {
      good.push(g);
      continue;
    }
    const probeBytes = Buffer.concat([Buffer.from(sentinel(1) + term), g.bytes, Buffer.from(sentinel(2) + term)]);
    await writeShared(probeFile, probeBytes);
    let verdict = verdictOf(await serverCopy(client, probeTable, probeFile, copyOptions(format)));
    // PostgreSQL 15 reads `x\.` at a line's end from a file as the value x and goes on, but from
    // a client as the end of the data: whatever the server ends the data at, from a file or
    // from a client (as pgsurge sends it), pgsurge must not load.
    if (verdict === 'loaded' && g.bytes.includes(END_OF_DATA)) {
      const stdin = verdictOf(await serverCopyStdin(client, probeTable, probeBytes, copyOptions(format)));
      if (stdin !== 'loaded') verdict = stdin;
    }
    if (g.kind === 'bad') assert.equal(verdict, 'refused', `record ${g.id} (${g.what}) ${JSON.stringify(g.bytes.toString('latin1'))} is meant to be refused by the server, which made it ${verdict}`);
    if (g.kind === 'marker') assert.notEqual(verdict, 'loaded', `the server loads a lone \\. line as data`);
    if (verdict === 'loaded') good.push(g);
    else if (g.kind === 'marker' && i === gens.length - 1) skipped++;
    else rejected.push(g);
  }
  await client.query(`TRUNCATE ${probeTable}`);
  const goodFile = await writeShared(path.join(dir, `${name}.good`), Buffer.concat(good.map((g) => g.bytes)));
  const load = await serverCopy(client, expTable, goodFile, copyOptions(format));
  assert.equal(load.error, undefined, `the server must load the good records of ${name} whole`);
  assert.equal(load.rows, good.length, `the server loaded ${load.rows} of the ${good.length} good records of ${name}: it stopped early`);
  const view = `${SCHEMA}.${name}_expected_rows`;
  await client.query(`CREATE VIEW ${view} AS SELECT s, id, n, d, t FROM ${expTable}`);
  const records = await tableRecords(client, view, '(FORMAT text)');
  const ext = format === 'text' ? 'txt' : format;
  const file = await writeShared(path.join(dir, `${name}.${ext}`), Buffer.concat(gens.map((g) => g.bytes)));
  const offsets = new Map<number, Gen>();
  let at = 0;
  for (const g of gens) {
    offsets.set(at, g);
    at += g.bytes.length;
  }
  return { gens, file, good: good.length, rejected, skipped, digest: digest(records), records, offsets };
}

const show = (g: Gen | undefined, offset: number): string => (g === undefined ? `offset ${offset} (not a record start)` : `record ${g.id} (${g.what}, ${g.kind}) ${JSON.stringify(g.bytes.toString('latin1'))}`);

interface Run {
  chunk: string;
  workers: number;
  wire: 'text' | 'binary';
}

/** Loads the file with pgsurge and compares table, rejects and accounting with the expectation. */
async function check(name: string, format: Format, exp: Expected, run: Run): Promise<void> {
  const table = `${name}_pgsurge`;
  await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.${table} ${COLUMNS}`);
  const res = await pgsurgeLoad(exp.file, table, SCHEMA, ['-f', format, '-w', String(run.workers), '--chunk-size', run.chunk, '--wire', run.wire]);
  const context = `seed ${SEED}, ${name}, --chunk-size ${run.chunk} -w ${run.workers} --wire ${run.wire}`;
  assert.ok(res.code === 0 || res.code === 3, `${context}: pgsurge exited ${res.code}: ${res.stderr}`);

  const problems: string[] = [];
  const got = new Set(res.rejects.map((x) => x.offset));
  const want = new Map<number, Gen>();
  for (const [offset, g] of exp.offsets) if (exp.rejected.includes(g)) want.set(offset, g);
  const extra = res.rejects.filter((x) => !want.has(x.offset));
  const missing = [...want].filter(([o]) => !got.has(o));
  for (const x of extra.slice(0, 5)) problems.push(`rejected but the server loads it: ${show(exp.offsets.get(x.offset), x.offset)}: ${x.sqlstate} ${x.message}`);
  for (const [o, g] of missing.slice(0, 5)) problems.push(`not rejected but the server refuses it or stops there: ${show(g, o)}`);
  if (extra.length + missing.length > 10) problems.push(`(${extra.length} extra rejects, ${missing.length} missing in all)`);
  // The reject file holds the rejected records verbatim, in input order.
  if (extra.length + missing.length === 0 && !res.rejected.equals(Buffer.concat(exp.rejected.map((g) => g.bytes)))) {
    const first = exp.rejected.find((g) => !res.rejected.includes(g.bytes));
    problems.push(`the reject file is not the rejected records as read${first === undefined ? ' in input order' : `: it lacks ${show(first, -1)}`}`);
  }

  const records = await tableRecords(client, `${SCHEMA}.${table}`, '(FORMAT text)');
  if (digest(records) !== exp.digest) {
    const want = new Set(exp.records);
    const have = new Set(records);
    const onlyPgsurge = records.filter((x) => !want.has(x));
    const onlyServer = exp.records.filter((x) => !have.has(x));
    problems.push(`tables differ: ${records.length} rows, the server's ${exp.records.length}; ${onlyPgsurge.length} only in pgsurge's, ${onlyServer.length} only in the server's`);
    for (const x of onlyPgsurge.slice(0, 3)) problems.push(`  only pgsurge's: ${JSON.stringify(x)}`);
    for (const x of onlyServer.slice(0, 3)) problems.push(`  only the server's: ${JSON.stringify(x)}`);
  }
  const wantCounts = { read: exp.gens.length, loaded: exp.good, rejected: exp.rejected.length, skipped: exp.skipped };
  if (JSON.stringify(res.counts) !== JSON.stringify(wantCounts)) problems.push(`accounting ${JSON.stringify(res.counts)}, expected ${JSON.stringify(wantCounts)}`);
  assert.deepEqual(problems, [], `${context}:\n${problems.join('\n')}`);
}

interface FileSpec {
  format: Format;
  style: Style;
  count: number;
  markers: number;
  markerLast: boolean;
  runs: Run[];
}

/**
 * Five chunk sizes, from a few records to the whole file, with one worker and three in
 * turn, on the text wire; and the binary wire at two of them. (Each run is a pgsurge
 * process, ~1 s with its rejects: the combinations are chosen, not crossed.)
 */
const FULL: Run[] = [
  { chunk: '700', workers: 3, wire: 'text' },
  { chunk: '3KB', workers: 1, wire: 'text' },
  { chunk: '11KB', workers: 3, wire: 'text' },
  { chunk: '48KB', workers: 1, wire: 'text' },
  { chunk: '4MB', workers: 3, wire: 'text' },
  { chunk: '2KB', workers: 3, wire: 'binary' },
  { chunk: '4MB', workers: 1, wire: 'binary' },
];
const SHORT_TEXT: Run[] = [{ chunk: '900', workers: 3, wire: 'text' }];
const SHORT_BINARY: Run[] = [{ chunk: '5KB', workers: 1, wire: 'binary' }];

const FILES: FileSpec[] = [
  { format: 'text', style: 'lf', count: 10_000, markers: 2, markerLast: true, runs: FULL },
  { format: 'csv', style: 'lf', count: 10_000, markers: 2, markerLast: false, runs: FULL },
  { format: 'tbl', style: 'lf', count: 10_000, markers: 2, markerLast: true, runs: FULL },
  { format: 'text', style: 'crlf', count: 1500, markers: 1, markerLast: false, runs: SHORT_TEXT },
  { format: 'text', style: 'cr', count: 1500, markers: 1, markerLast: true, runs: SHORT_BINARY },
  { format: 'csv', style: 'crlf', count: 1500, markers: 1, markerLast: true, runs: SHORT_BINARY },
  { format: 'csv', style: 'cr', count: 1500, markers: 1, markerLast: false, runs: SHORT_TEXT },
  { format: 'tbl', style: 'crlf', count: 1500, markers: 1, markerLast: false, runs: [...SHORT_TEXT, ...SHORT_BINARY] },
];

for (const [i, spec] of FILES.entries()) {
  const name = `${spec.format}_${spec.style}`;
  describe(`${spec.format}, ${spec.style.toUpperCase()} newlines, ${spec.count} generated records: pgsurge's table and rejects are the server's`, () => {
    let exp: Expected;
    before(async () => {
      exp = await expectation(name, spec.format, spec.style, generate(spec.format, spec.style, spec.count, SEED + i, spec));
    });
    it('the generated file has good, refused and special records, and the server loads the good ones whole', () => {
      assert.ok(exp.good > spec.count * 0.8, `${exp.good} good records`);
      assert.ok(exp.rejected.length > spec.count * 0.01, `${exp.rejected.length} records the server refuses`);
    });
    for (const run of spec.runs) {
      it(`--chunk-size ${run.chunk} -w ${run.workers} --wire ${run.wire}`, () => check(name, spec.format, exp, run));
    }
  });
}
