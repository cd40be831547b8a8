import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';
import { parseRejectLog as parseLog, summaryCounts } from '../helpers/reject-log.js';

/**
 * Files whose records only COPY's own reading frames right: values holding a
 * backslash-escaped newline, CR and CRLF line endings, the end-of-data marker `\.`. Each is
 * loaded by pgsurge in chunks cut near those bytes, by one worker and by three, over the
 * text wire and the binary one, and the table is compared with what the server's own
 * `COPY … FROM '<file>'` makes of the same bytes.
 */

const SCHEMA = 'it_copy_framing';
let client: pg.Client;
let dir: string;

const COLUMNS = 'id int, name text, price numeric(12,2), day date';
/** The runs of each file: chunks of 1 KB and 8 KB (boundaries fall all over the special bytes), 1 and 3 workers, both wires. */
const RUNS = [
  { chunk: '1KB', workers: 1, wire: 'text' },
  { chunk: '1KB', workers: 3, wire: 'binary' },
  { chunk: '8KB', workers: 3, wire: 'text' },
  { chunk: '8KB', workers: 1, wire: 'binary' },
] as const;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-copy-framing-'));
  // The server reads the files itself, perhaps as another user.
  await fs.chmod(dir, 0o755);
});

after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** The server reads the file itself (server-side COPY, as the test's superuser) into a fresh table. */
async function serverCopy(file: string, options: string, columns = COLUMNS): Promise<string[]> {
  await fs.chmod(file, 0o644);
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.oracle; CREATE TABLE ${SCHEMA}.oracle (${columns})`);
  await client.query(`COPY ${SCHEMA}.oracle FROM '${file.replace(/'/g, "''")}' ${options}`);
  return tableRecords(client, `${SCHEMA}.oracle`);
}

async function loadedRecords(table: string): Promise<string[]> {
  const all = await tableRecords(client, `${SCHEMA}.${table}`);
  return all;
}

interface Reject {
  readonly line: number;
  readonly message: RegExp;
  /** The record as the reject file holds it. */
  readonly record: string;
}

/**
 * Loads `file` into a fresh table with pgsurge in each of RUNS and checks the table
 * against `expected` (the server's records), the accounting and the rejects.
 */
async function loadEveryWay(file: string, format: 'text' | 'tbl' | 'csv', expected: string[], counts: { read: number; rejected: number; skipped: number }, rejects: readonly Reject[] = []): Promise<void> {
  const table = `loaded_${format}`;
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.${table}; CREATE TABLE ${SCHEMA}.${table} (${COLUMNS})`);
  for (const run of RUNS) {
    const at = `${path.basename(file)}, chunks of ${run.chunk}, -w ${run.workers}, --wire ${run.wire}`;
    const rejectFile = path.join(dir, `${table}.rejects`);
    await fs.rm(rejectFile, { force: true });
    await fs.rm(`${rejectFile}.log`, { force: true });
    const r = await runCli(['load', file, '-t', table, '--format', format, '--truncate', '--chunk-size', run.chunk, '-w', String(run.workers), '--wire', run.wire, '--reject-file', rejectFile, '--db', testUrl(), '--schema', SCHEMA]);
    assert.equal(r.code, rejects.length > 0 ? 3 : 0, `${at}: exit code\n${r.stderr}`);
    const got = await loadedRecords(table);
    assert.equal(got.length, expected.length, `${at}: rows`);
    assert.equal(digest(got), digest(expected), `${at}: the table is what the server's COPY makes of the file`);
    const c = summaryCounts(r.stdout, table);
    assert.deepEqual(c, { read: counts.read, loaded: expected.length, rejected: counts.rejected, skipped: counts.skipped }, at);
    assert.equal(c.read, c.loaded + c.rejected + c.skipped, `${at}: read = loaded + rejected + skipped`);
    if (rejects.length === 0) {
      await assert.rejects(fs.access(rejectFile), `${at}: no reject file`);
      continue;
    }
    const log = parseLog(await fs.readFile(`${rejectFile}.log`, 'utf8'));
    assert.deepEqual(
      log.map((l) => l.line),
      rejects.map((x) => x.line),
      `${at}: the lines rejected`,
    );
    for (const [i, x] of rejects.entries()) assert.match(log[i]!.message, x.message, `${at}: line ${x.line}`);
    const content = (await fs.readFile(rejectFile)).toString('latin1');
    for (const x of rejects) assert.ok(content.includes(x.record), `${at}: the reject file holds ${JSON.stringify(x.record)}:\n${JSON.stringify(content)}`);
  }
}

/** `n` rows as COPY text fields: id, name, price, day. `name(i)` may hold escapes of its own. */
function textRows(n: number, name: (i: number) => string): string[] {
  return Array.from({ length: n }, (_, k) => {
    const i = k + 1;
    return [String(i), name(i), (i * 3.17).toFixed(2), `2024-0${(i % 9) + 1}-${String((i % 28) + 1).padStart(2, '0')}`].join('\t');
  });
}

describe('values holding a backslash-escaped newline (MySQL INTO OUTFILE) stay whole', () => {
  const names = (i: number): string =>
    i % 7 === 0 ? `two\\\nlines ${i}` : i % 11 === 0 ? `ends in a backslash \\\\` : i % 13 === 0 ? `cr\\\rinside ${i}` : i % 17 === 0 ? `\\\n${i}\\\n` : `plain ${i}`;

  it('text: the table is the server\'s COPY of the file, every row read once; a bad row after escaped newlines rejected on its own line', async () => {
    const rows = textRows(3000, names);
    // A row the server refuses (a bad date): the server's `line N` counts records, not lines.
    const bad = 2222;
    const damaged = rows.map((r, k) => (k + 1 === bad ? r.replace(/\t[^\t]*$/, '\tnot a date') : r));
    const file = path.join(dir, 'escaped.txt');
    await fs.writeFile(file, damaged.join('\n') + '\n');
    const good = path.join(dir, 'escaped-good.txt');
    await fs.writeFile(good, rows.filter((_, k) => k + 1 !== bad).join('\n') + '\n');
    const expected = await serverCopy(good, '(FORMAT text)');
    assert.equal(expected.length, 2999);
    const line = damaged.slice(0, bad - 1).join('\n').split('\n').length + 1;
    assert.ok(line > bad + 400, 'escaped newlines before it');
    await loadEveryWay(file, 'text', expected, { read: 3000, rejected: 1, skipped: 0 }, [{ line, message: /invalid input syntax for type date/, record: damaged[bad - 1]! }]);
  });

  it('.tbl: the same, with dbgen\'s trailing `|`', async () => {
    const rows = textRows(3000, names).map((r) => r.replaceAll('\t', '|') + '|');
    const file = path.join(dir, 'escaped.tbl');
    await fs.writeFile(file, rows.join('\n') + '\n');
    // The server reads the trailing `|` as one more, empty field.
    const expected = await serverCopy(file, "(FORMAT text, DELIMITER '|')", `${COLUMNS}, rest text`);
    await client.query(`ALTER TABLE ${SCHEMA}.oracle DROP COLUMN rest`);
    const oracle = await tableRecords(client, `${SCHEMA}.oracle`);
    assert.equal(expected.length, 3000);
    await loadEveryWay(file, 'tbl', oracle, { read: 3000, rejected: 0, skipped: 0 });
  });
});

describe('CR and CRLF line endings are read as COPY reads them', () => {
  const names = (i: number): string => (i % 9 === 0 ? `escaped cr\\\r${i}` : i % 10 === 0 ? `escaped lf\\\n${i}` : `name ${i}`);

  it('text with CR line endings: the table is the server\'s COPY of the file', async () => {
    const file = path.join(dir, 'cr.txt');
    await fs.writeFile(file, textRows(2500, names).join('\r') + '\r');
    const expected = await serverCopy(file, '(FORMAT text)');
    assert.equal(expected.length, 2500);
    await loadEveryWay(file, 'text', expected, { read: 2500, rejected: 0, skipped: 0 });
  });

  it('text with CRLF line endings and one record holding a bare LF: that record rejected, as the whole file\'s COPY refuses it', async () => {
    const rows = textRows(2500, (i) => (i % 9 === 0 ? `escaped lf\\\n${i}` : `name ${i}`).replace('\\\n', '\\n'));
    const bad = 1234;
    const damaged = rows.map((r, k) => (k + 1 === bad ? r.replace('\t', '\tbare\nlf') : r));
    const file = path.join(dir, 'crlf.txt');
    await fs.writeFile(file, damaged.join('\r\n') + '\r\n');
    await fs.chmod(file, 0o644);
    const whole = await client.query(`COPY ${SCHEMA}.oracle FROM '${file}' (FORMAT text)`).then(
      () => 'loaded',
      (e: Error) => e.message,
    );
    assert.match(whole, /literal newline found in data/);
    const good = path.join(dir, 'crlf-good.txt');
    await fs.writeFile(good, rows.filter((_, k) => k + 1 !== bad).join('\r\n') + '\r\n');
    const expected = await serverCopy(good, '(FORMAT text)');
    await loadEveryWay(file, 'text', expected, { read: 2500, rejected: 1, skipped: 0 }, [{ line: bad, message: /literal newline found in data/, record: damaged[bad - 1]! }]);
  });

  it('CSV with CR line endings and quoted CRs and LFs', async () => {
    const rows = Array.from({ length: 2500 }, (_, k) => {
      const i = k + 1;
      const name = i % 8 === 0 ? `"quoted\rcr ${i}"` : i % 12 === 0 ? `"quoted\nlf, ""q"" ${i}"` : `name ${i}`;
      return `${i},${name},${(i * 3.17).toFixed(2)},2024-01-${String((i % 28) + 1).padStart(2, '0')}`;
    });
    const file = path.join(dir, 'cr.csv');
    await fs.writeFile(file, rows.join('\r') + '\r');
    const expected = await serverCopy(file, '(FORMAT csv)');
    assert.equal(expected.length, 2500);
    await loadEveryWay(file, 'csv', expected, { read: 2500, rejected: 0, skipped: 0 });
  });
});

describe('a header and --skip on a file with CR line endings', () => {
  it('CSV with a header, CR line endings: the header alone is left out, then --skip 10 leaves out 10 rows', async () => {
    const rows = Array.from({ length: 500 }, (_, k) => `${k + 1},"n\r${k + 1}",1.50,2024-03-04`);
    const file = path.join(dir, 'header-cr.csv');
    await fs.writeFile(file, ['id,name,price,day', ...rows].join('\r') + '\r');
    const expected = await serverCopy(file, '(FORMAT csv, HEADER)');
    assert.equal(expected.length, 500);
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.loaded_header; CREATE TABLE ${SCHEMA}.loaded_header (${COLUMNS})`);
    for (const [skip, want] of [[0, expected], [10, expected.filter((r) => Number(r.split('|')[0]) > 10)]] as const) {
      const r = await runCli(['load', file, '-t', 'loaded_header', '--header', '--truncate', '--skip', String(skip), '--chunk-size', '1KB', '--db', testUrl(), '--schema', SCHEMA]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(digest(await loadedRecords('loaded_header')), digest(want), `--skip ${skip}`);
      assert.deepEqual(summaryCounts(r.stdout, 'loaded_header'), { read: want.length, loaded: want.length, rejected: 0, skipped: 0 });
    }
  });
});

describe('the end-of-data marker \\. never reaches the server', () => {
  const MIDDLE = /^end-of-data marker in the middle of the file: psql would stop here; pgsurge loads the rest$/;

  it('text: a marker in the middle is rejected, one at the end skipped, a value ending in \\. rejected; the rest loads', async () => {
    // Row 1500 holds \. inside a value (the server refuses it: an error, not the end), row 1600's last value ends in \.
    const rows = textRows(2000, (i) => (i === 1500 ? 'holds \\. inside' : `name ${i}`)).map((r, k) => (k + 1 === 1600 ? `${r}\\.` : r));
    const lines = [...rows.slice(0, 1000), '\\.', ...rows.slice(1000), '\\.'];
    const file = path.join(dir, 'marker.txt');
    await fs.writeFile(file, lines.join('\n') + '\n');
    // The server would stop at the first marker: its COPY of the file without the marker lines (and the bad value).
    const good = path.join(dir, 'marker-good.txt');
    await fs.writeFile(good, rows.filter((_, k) => k + 1 !== 1500 && k + 1 !== 1600).join('\n') + '\n');
    const expected = await serverCopy(good, '(FORMAT text)');
    assert.equal(expected.length, 1998);
    await loadEveryWay(file, 'text', expected, { read: 2002, rejected: 3, skipped: 1 }, [
      { line: 1001, message: MIDDLE, record: '\\.' },
      { line: 1501, message: /end-of-copy marker (is not alone on its line|corrupt)/, record: rows[1499]! },
      { line: 1601, message: /a value ends in \\\./, record: rows[1599]! },
    ]);
    // A rerun of the same load reads nothing again: the marker chunks are in the ledger like any other (the load completed, with them counted).
    const table = 'loaded_text';
    const again = await runCli(['load', file, '-t', table, '--format', 'text', '--chunk-size', '8KB', '-w', '3', '--wire', 'binary', '--reject-file', path.join(dir, `${table}.rejects`), '--db', testUrl(), '--schema', SCHEMA]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^load \S+ completed .*: 1,998 rows loaded, 3 rejected, 1 skipped; nothing to load/);
    assert.equal(digest(await loadedRecords(table)), digest(expected));
  });

  it('CSV: the marker alone on a line is read as psql reads it (rejected in the middle, skipped at the end)', async () => {
    const rows = Array.from({ length: 2000 }, (_, k) => `${k + 1},"name ${k + 1}",${((k + 1) * 3.17).toFixed(2)},2024-02-03`);
    const file = path.join(dir, 'marker.csv');
    await fs.writeFile(file, [...rows.slice(0, 700), '\\.', ...rows.slice(700), '\\.'].join('\n') + '\n');
    const good = path.join(dir, 'marker-good.csv');
    await fs.writeFile(good, rows.join('\n') + '\n');
    const expected = await serverCopy(good, '(FORMAT csv)');
    await loadEveryWay(file, 'csv', expected, { read: 2002, rejected: 1, skipped: 1 }, [{ line: 701, message: MIDDLE, record: '\\.' }]);
  });
});
