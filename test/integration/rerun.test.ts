import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { serverCopyStdin } from '../helpers/copy-oracle.js';
import { assertLedgerTiles } from '../helpers/ledger-checks.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, testUrl, type CliResult } from '../helpers/test-db.js';

/**
 * What a rerun of `pgsurge load` does: the same options resume; other options after no
 * committed row are a new load; other options after committed rows are refused, naming
 * them; a completed load says so in one line; a file that grew loads only its new tail; a
 * file whose loaded part changed is refused. And what `--on-conflict` does, value by value.
 * Each case: the table's digest against the server's own COPY of the same bytes, and the
 * accounting (read = loaded + rejected + skipped) from `--json`'s summary event.
 */
const SCHEMA = 'it_rerun';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-rerun-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

interface FileCounts {
  file: string;
  read: number;
  loaded: number;
  rejected: number;
  skipped: number;
  earlier: { loaded: number; rejected: number; skipped: number };
}
interface Summary {
  total: { read: number; loaded: number; rejected: number; skipped: number };
  files: FileCounts[];
  loadId: string;
  completed?: { at: string; loaded: number; rejected: number; skipped: number };
  appended?: string[];
}

/** `--json`'s last line: the summary event; its accounting checked on the way. */
function summaryOf(r: CliResult): Summary {
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  assert.ok(last.startsWith('{'), `no summary event in:\n${r.stdout}\n${r.stderr}`);
  const s = JSON.parse(last) as Summary;
  assert.equal(s.total.read, s.total.loaded + s.total.rejected + s.total.skipped, 'read = loaded + rejected + skipped');
  for (const f of s.files) assert.equal(f.read, f.loaded + f.rejected + f.skipped, `${f.file}: read = loaded + rejected + skipped`);
  return s;
}

async function freshTable(name: string): Promise<string> {
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.${name}, ${SCHEMA}.${name}_oracle`);
  await client.query(`CREATE TABLE ${SCHEMA}.${name} (id int PRIMARY KEY, name text, amount numeric(10,2))`);
  await client.query(`CREATE TABLE ${SCHEMA}.${name}_oracle (id int PRIMARY KEY, name text, amount numeric(10,2))`);
  return `${SCHEMA}.${name}`;
}

/** The table's rows, digested, and the server's COPY of `bytes` into its oracle twin, digested. */
async function digestsOf(table: string, bytes: Buffer, copyOptions: string): Promise<{ table: string; server: string; rows: number }> {
  await client.query(`TRUNCATE ${table}_oracle`);
  const copied = await serverCopyStdin(client, `${table}_oracle`, bytes, copyOptions);
  assert.equal(copied.error, undefined, copied.error);
  const rows = await tableRecords(client, table);
  return { table: digest(rows), server: digest(await tableRecords(client, `${table}_oracle`)), rows: rows.length };
}

/** `n` rows from `from`, as tbl lines (`id|name|amount|`) or CSV lines. */
function rows(from: number, n: number, format: 'tbl' | 'csv'): string {
  const out: string[] = [];
  for (let id = from; id < from + n; id++) {
    const name = `name ${id}${id % 7 === 0 ? ' with, comma' : ''}`;
    out.push(format === 'tbl' ? `${id}|${name}|${(id * 1.25).toFixed(2)}|` : `${id},"${name}",${(id * 1.25).toFixed(2)}`);
  }
  return out.join('\n') + '\n';
}

/** A tbl line's COPY text: without its trailing `|`. */
const tblAsText = (content: string): Buffer => Buffer.from(content.replace(/\|\n/g, '\n'));
const TEXT = "(FORMAT text, DELIMITER '|')";

describe('a rerun reads the file as the user asks', () => {
  it('the same options: a stopped load resumes where it stopped; the ledger keeps how the file is read', async () => {
    const table = await freshTable('same');
    const file = path.join(dir, 'same.tbl');
    // Row 1,500 has a bad amount: --max-rejects 0 stops the load there.
    const content = rows(1, 3000, 'tbl').replace(/^1500\|(.*)\|[\d.]+\|$/m, '1500|$1|not a number|');
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'same', '--json', ...target()];
    const r1 = await runCli([...args, '-w', '1', '--chunk-size', '8KB', '--max-rejects', '0']);
    assert.equal(r1.code, 1, r1.stderr);
    const kept = (await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
    assert.ok(kept > 0 && kept < 1499, `kept ${kept}`);
    const stored = await client.query<{ read_options: string }>(`SELECT read_options FROM pgsurge.load_files WHERE file = $1 AND table_oid = $2::regclass`, [file, table]);
    assert.deepEqual(JSON.parse(stored.rows[0]!.read_options), { '--format': 'tbl', '--on-conflict': 'reject' });
    // Other workers and chunk size: how the file is read is the same, so this is the same load.
    const r2 = await runCli([...args, '-w', '2', '--chunk-size', '5KB']);
    assert.equal(r2.code, 3, r2.stderr);
    const s = summaryOf(r2);
    assert.equal(s.files[0]!.earlier.loaded, kept, 'earlier runs committed these rows; they were not read again');
    assert.equal(s.total.loaded + kept, 2999);
    assert.equal(s.total.rejected, 1);
    const d = await digestsOf(table, tblAsText(content.replace(/^1500\|.*\n/m, '')), TEXT);
    assert.equal(d.rows, 2999);
    assert.equal(d.table, d.server);
  });

  it('other options after earlier runs committed no row: a new load (every row rejected without --null NA, then loaded with it)', async () => {
    const table = await freshTable('nothing');
    const file = path.join(dir, 'nothing.csv');
    const content = rows(1, 500, 'csv').replace(/,[\d.]+$/gm, ',NA');
    await fs.writeFile(file, content);
    // Without --null NA, every amount is a bad number: every row rejected.
    const r1 = await runCli(['load', file, '-t', 'nothing', '--max-rejects', '1000', '--json', ...target()]);
    assert.equal(r1.code, 3, r1.stderr);
    const s1 = summaryOf(r1);
    assert.deepEqual([s1.total.loaded, s1.total.rejected], [0, 500]);
    const r2 = await runCli(['load', file, '-t', 'nothing', '--null', 'NA', '--json', ...target()]);
    assert.equal(r2.code, 0, r2.stderr);
    const s2 = summaryOf(r2);
    assert.deepEqual([s2.total.read, s2.total.loaded, s2.total.rejected, s2.files[0]!.earlier.rejected], [500, 500, 0, 0], 'all read and loaded, nothing counted from the run that loaded nothing');
    const d = await digestsOf(table, Buffer.from(content), "(FORMAT csv, NULL 'NA')");
    assert.equal(d.rows, 500);
    assert.equal(d.table, d.server);
  });

  it('other options after earlier runs committed rows: refused before loading, naming the options (old → new) and the choices; --again loads on top, --truncate anew', async () => {
    const table = await freshTable('refused');
    const file = path.join(dir, 'refused.csv');
    const content = 'id,name,amount\n' + rows(1, 400, 'csv');
    await fs.writeFile(file, content);
    const r1 = await runCli(['load', file, '-t', 'refused', '--header', 'match', '--json', ...target()]);
    assert.equal(r1.code, 0, r1.stderr);
    const loaded = await digestsOf(table, Buffer.from(content), '(FORMAT csv, HEADER match)');
    assert.equal(loaded.table, loaded.server);
    // Ten rows deleted, then the file again with --on-conflict skip to put them back: another reading of the file.
    await client.query(`DELETE FROM ${table} WHERE id <= 10`);
    const r2 = await runCli(['load', file, '-t', 'refused', '--header', 'match', '--on-conflict', 'skip', '--json', ...target()]);
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /refused\.csv was loaded into it_rerun\.refused by load \S+ read with other options \(--on-conflict: reject → skip\); its runs committed 400 rows of it, completed [\d-]+ [\d:]+ UTC: .*nothing was loaded/);
    assert.match(r2.stderr, /hint: rerun with the options it was loaded with .*--truncate .*--again loads it again on top/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, 390, 'nothing was loaded');
    // --again: a new load of every row on top; the 390 there are conflicts, skipped.
    const r3 = await runCli(['load', file, '-t', 'refused', '--header', 'match', '--on-conflict', 'skip', '--again', '--json', ...target()]);
    assert.equal(r3.code, 0, r3.stderr);
    const s3 = summaryOf(r3);
    assert.notEqual(s3.loadId, summaryOf(r1).loadId, 'a load of its own');
    assert.deepEqual([s3.total.read, s3.total.loaded, s3.total.skipped], [400, 10, 390]);
    const again = await digestsOf(table, Buffer.from(content), '(FORMAT csv, HEADER match)');
    assert.equal(again.table, again.server);
    // Another header option with --truncate: the table is emptied and the file loaded anew.
    const r4 = await runCli(['load', file, '-t', 'refused', '--header', 'skip', '--truncate', '--json', ...target()]);
    assert.equal(r4.code, 0, r4.stderr);
    assert.equal(summaryOf(r4).total.loaded, 400);
    const anew = await digestsOf(table, Buffer.from(content), '(FORMAT csv, HEADER true)');
    assert.equal(anew.table, anew.server);
  });

  it('a load that completed, run again: one line (when, rows, rejected), nothing loaded, exit 0; --json says the same', async () => {
    const table = await freshTable('done');
    const file = path.join(dir, 'done.tbl');
    const content = rows(1, 2000, 'tbl').replace(/^77\|(.*)\|[\d.]+\|$/m, '77|$1|bad|');
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'done', '-w', '2', '--chunk-size', '16KB', ...target()];
    const r1 = await runCli([...args, '--json']);
    assert.equal(r1.code, 3, r1.stderr);
    const r2 = await runCli(args);
    assert.equal(r2.code, 0, r2.stderr);
    const lines = r2.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r2.stdout);
    assert.match(lines[0]!, new RegExp(`^load ${summaryOf(r1).loadId} completed \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC: 1,999 rows loaded, 1 rejected; nothing to load \\(to load the files again on top: --again; to replace the table's rows: --truncate\\)$`));
    const r3 = await runCli([...args, '--json']);
    assert.equal(r3.code, 0, r3.stderr);
    const s3 = summaryOf(r3);
    assert.equal(s3.total.read, 0);
    assert.deepEqual({ ...s3.completed, at: undefined }, { at: undefined, loaded: 1999, rejected: 1, skipped: 0 });
    // --columns naming every column in the table's order reads the file as before: the same load, completed.
    const spelled = await runCli([...args, '--columns', 'id,name,amount']);
    assert.equal(spelled.code, 0, spelled.stderr);
    assert.match(spelled.stdout, new RegExp(`^load ${summaryOf(r1).loadId} completed `));
    // In another order it reads the file another way: refused, nothing loaded.
    const swapped = await runCli([...args, '--columns', 'name,id,amount']);
    assert.equal(swapped.code, 2, swapped.stderr);
    assert.match(swapped.stderr, /read with other options \(--columns: not given → name,id,amount\)/);
    const d = await digestsOf(table, tblAsText(content.replace(/^77\|.*\n/m, '')), TEXT);
    assert.equal(d.rows, 1999);
    assert.equal(d.table, d.server);
  });

  for (const format of ['tbl', 'csv'] as const) {
    it(`${format}: a file that grew since its load, its loaded part unchanged, loads only the new tail ("appended since: N new rows"); the table equals the whole file loaded once`, async () => {
      const table = await freshTable(`grew_${format}`);
      const file = path.join(dir, `grew.${format}`);
      const header = format === 'csv' ? 'id,name,amount\n' : '';
      const first = header + rows(1, 3000, format);
      await fs.writeFile(file, first);
      const args = ['load', file, '-t', `grew_${format}`, '-w', '2', '--chunk-size', '16KB', ...(format === 'csv' ? ['--header', 'match'] : []), ...target()];
      const r1 = await runCli([...args, '--json']);
      assert.equal(r1.code, 0, r1.stderr);
      const id = summaryOf(r1).loadId;
      await fs.appendFile(file, rows(3001, 1234, format));
      const r2 = await runCli(args);
      assert.equal(r2.code, 0, r2.stderr);
      assert.match(r2.stderr, /grew since it was loaded: appended since: 1,234 new rows\n/);
      const r3 = await runCli([...args, '--json']);
      assert.equal(r3.code, 0, r3.stderr);
      assert.equal(summaryOf(r3).completed?.loaded, 4234, 'then complete: the whole file');
      const whole = await fs.readFile(file);
      const d = await digestsOf(table, format === 'csv' ? whole : tblAsText(whole.toString()), format === 'csv' ? '(FORMAT csv, HEADER match)' : TEXT);
      assert.equal(d.rows, 4234);
      assert.equal(d.table, d.server);
      // One load: its ledger ranges tile the grown file (a CSV header is no chunk's).
      if (format === 'tbl') await assertLedgerTiles(client, table, id, whole.length);
      else assert.equal(summaryOf(r3).loadId, id);
    });
  }

  it('--create: the DateStyle it sniffed is part of how the file is read; a rerun without it is refused, not read month-first', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.dmy, ${SCHEMA}.dmy_oracle`);
    const file = path.join(dir, 'dmy.csv');
    await fs.writeFile(file, 'id,d\n1,25/12/2024\n2,05/06/2024\n');
    const r1 = await runCli(['load', file, '-t', 'dmy', '--create', '--json', ...target()]);
    assert.equal(r1.code, 0, r1.stderr);
    await fs.appendFile(file, '3,05/06/2024\n');
    // The flags the note names, without --create: the server's DateStyle would read 05/06 as 6 May.
    const r2 = await runCli(['load', file, '-t', 'dmy', '--header', 'skip', '--json', ...target()]);
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /read with other options \(DateStyle: "ISO, DMY" → not given\)/);
    const r3 = await runCli(['load', file, '-t', 'dmy', '--create', '--json', ...target()]);
    assert.equal(r3.code, 0, r3.stderr);
    assert.equal(summaryOf(r3).total.loaded, 1);
    await client.query(`CREATE TABLE ${SCHEMA}.dmy_oracle (LIKE ${SCHEMA}.dmy)`);
    await client.query("SET DateStyle = 'ISO, DMY'");
    const d = await digestsOf(`${SCHEMA}.dmy`, await fs.readFile(file), '(FORMAT csv, HEADER true)').finally(() => client.query('RESET DateStyle'));
    assert.equal(d.rows, 3);
    assert.equal(d.table, d.server);
  });

  it('--create: the JSON keys it made columns of are part of how the file is read; a rerun without them is refused, not loaded with the column empty', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.keyed`);
    const file = path.join(dir, 'keyed.ndjson');
    await fs.writeFile(file, '{"id":1,"First Name":"a"}\n{"id":2,"First Name":"b"}\n');
    const r1 = await runCli(['load', file, '-t', 'keyed', '--create', '--ignore-extra-keys', '--json', ...target()]);
    assert.equal(r1.code, 0, r1.stderr);
    await fs.appendFile(file, '{"id":3,"First Name":"c"}\n');
    // Without --create no key is renamed: "First Name" is no column, left out, and first_name would be NULL.
    const r2 = await runCli(['load', file, '-t', 'keyed', '--ignore-extra-keys', '--json', ...target()]);
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /read with other options \(JSON keys: .*first_name.*First Name.* → not given\)/);
    const r3 = await runCli(['load', file, '-t', 'keyed', '--create', '--ignore-extra-keys', '--json', ...target()]);
    assert.equal(r3.code, 0, r3.stderr);
    assert.equal(summaryOf(r3).total.loaded, 1);
    const rows = await client.query(`SELECT id::int, first_name FROM ${SCHEMA}.keyed ORDER BY id`);
    assert.deepEqual(rows.rows.map((r) => [r.id, r.first_name]), [[1, 'a'], [2, 'b'], [3, 'c']]);
  });

  it('text: a file whose loaded part ended in an escaped newline (`\\` then a line end) did not end a record there: it grew mid-record, refused', async () => {
    const table = await freshTable('escaped');
    const file = path.join(dir, 'escaped.txt');
    const content = '1\tabc\\\n';
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'escaped', '--format', 'text', '--columns', 'id,name', '--json', ...target()];
    assert.equal((await runCli(args)).code, 0);
    // In the whole file record 1's name is `abc`, a newline, `def`: the tail is no record of its own.
    await fs.appendFile(file, 'def\n3\tx\n');
    const r = await runCli(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /escaped\.txt changed since load/);
    const copied = await serverCopyStdin(client, `${table}_oracle (id, name)`, Buffer.from(content), '(FORMAT text)');
    assert.equal(copied.error, undefined, copied.error);
    const rows = await tableRecords(client, table);
    assert.equal(rows.length, 1, 'the table is as the first load left it');
    assert.equal(digest(rows), digest(await tableRecords(client, `${table}_oracle`)));
  });

  it('text: a file whose loaded part ended in the \\r of a \\r\\n grew mid-line-end: refused, not read from its \\n', async () => {
    const table = await freshTable('crlf');
    const file = path.join(dir, 'crlf.txt');
    const content = '1\ta\r\n2\tb\r';
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'crlf', '--format', 'text', '--columns', 'id,name', '--json', ...target()];
    await runCli(args);
    const before = digest(await tableRecords(client, table));
    await fs.appendFile(file, '\n3\tc\r\n');
    const r = await runCli(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /crlf\.txt changed since load/);
    assert.equal(digest(await tableRecords(client, table)), before, 'nothing loaded');
  });

  it('a file appended to, counted with --json: only the new rows are read', async () => {
    const table = await freshTable('tail');
    const file = path.join(dir, 'tail.tbl');
    await fs.writeFile(file, rows(1, 1000, 'tbl'));
    const args = ['load', file, '-t', 'tail', '--json', ...target()];
    assert.equal((await runCli(args)).code, 0);
    await fs.appendFile(file, rows(1001, 5, 'tbl'));
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r);
    assert.deepEqual([s.total.read, s.total.loaded, s.files[0]!.earlier.loaded], [5, 5, 1000]);
    assert.deepEqual(s.appended, [file]);
    const d = await digestsOf(table, tblAsText(await fs.readFile(file, 'utf8')), TEXT);
    assert.equal(d.table, d.server);
  });

  it('a file whose loaded part changed (then grew) is refused with what changed and the choices; nothing is loaded', async () => {
    const table = await freshTable('changed');
    const file = path.join(dir, 'changed.tbl');
    const content = rows(1, 1000, 'tbl');
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'changed', '--json', ...target()];
    assert.equal((await runCli(args)).code, 0);
    await fs.writeFile(file, content.replace('1|name 1|', '1|NAME 1|') + rows(1001, 10, 'tbl'));
    const r = await runCli(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /changed\.tbl changed since load \S+ put it into it_rerun\.changed \(size was \d+ bytes, now \d+; .*its first or last 64 KB differ, and the part loaded is not as it was\); its runs committed 1,000 rows of it, completed .*: loading it again would put its rows in beside those; nothing was loaded/);
    assert.match(r.stderr, /hint: --truncate empties the table and loads the file anew; --again loads it again on top/);
    const d = await digestsOf(table, tblAsText(content), TEXT);
    assert.equal(d.rows, 1000);
    assert.equal(d.table, d.server, 'the table is as the first load left it');
  });

  it('a file loaded before, named again with another file in one command: refused, not loaded twice', async () => {
    const table = await freshTable('files');
    const a = path.join(dir, 'files-a.tbl');
    const b = path.join(dir, 'files-b.tbl');
    await fs.writeFile(a, rows(1, 500, 'tbl'));
    await fs.writeFile(b, rows(501, 500, 'tbl'));
    assert.equal((await runCli(['load', a, '-t', 'files', '--json', ...target()])).code, 0);
    const r = await runCli(['load', a, b, '-t', 'files', '--json', ...target()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /files-a\.tbl was loaded into it_rerun\.files by load \S+, with other files than this command names; its runs committed 500 rows of it, completed .*nothing was loaded/);
    assert.match(r.stderr, /hint: rerun that load's command \(its files\) to finish it; --truncate .*--again/);
    // b alone is a new load; the table then holds each file once.
    assert.equal(summaryOf(await runCli(['load', b, '-t', 'files', '--json', ...target()])).total.loaded, 500);
    const d = await digestsOf(table, tblAsText(rows(1, 1000, 'tbl')), TEXT);
    assert.equal(d.rows, 1000);
    assert.equal(d.table, d.server);
  });

  it('a file loaded before, named again beside stdin: refused, not loaded twice', async () => {
    const table = await freshTable('beside_stdin');
    const file = path.join(dir, 'beside.tbl');
    const content = rows(1, 100, 'tbl');
    await fs.writeFile(file, content);
    assert.equal((await runCli(['load', file, '-t', 'beside_stdin', '--json', ...target()])).code, 0);
    const r = await runCli(['load', file, '-', '-t', 'beside_stdin', '--format', 'tbl', '--json', ...target()], { stdin: rows(101, 10, 'tbl') });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /beside\.tbl was loaded into it_rerun\.beside_stdin by load \S+, with other files than this command names/);
    const d = await digestsOf(table, tblAsText(content), TEXT);
    assert.equal(d.rows, 100);
    assert.equal(d.table, d.server, 'the table is as the first load left it');
  });

  it('--mode delete of a file loaded before: its keys are deleted, not taken for the load that completed', async () => {
    const table = await freshTable('deleted');
    const file = path.join(dir, 'deleted.tbl');
    await fs.writeFile(file, rows(1, 100, 'tbl'));
    const args = ['load', file, '-t', 'deleted', '--columns', 'id,name,amount', '--json', ...target()];
    assert.equal((await runCli(args)).code, 0);
    const r = await runCli([...args, '--mode', 'delete']);
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r);
    assert.equal(s.completed, undefined, 'not the insert load, completed');
    assert.equal(s.total.loaded, 100, 'every key deleted');
    assert.equal((await tableRecords(client, table)).length, 0);
    // Its rerun is the delete load's: completed, nothing more.
    const again = await runCli([...args, '--mode', 'delete']);
    assert.equal(summaryOf(again).completed?.loaded, 100);
  });

  it('a load an earlier pgsurge began (no read options in the ledger, another default id) is resumed by the same command', async () => {
    const table = await freshTable('older');
    const file = path.join(dir, 'older.tbl');
    const content = rows(1, 2000, 'tbl').replace(/^1200\|(.*)\|[\d.]+\|$/m, '1200|$1|x|');
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'older', '-w', '1', '--chunk-size', '8KB', '--json', ...target()];
    const r1 = await runCli([...args, '--max-rejects', '0']);
    assert.equal(r1.code, 1, r1.stderr);
    const id = (JSON.parse(r1.stdout.trim().split('\n').at(-1)!) as { loadId: string }).loadId;
    const kept = (await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
    // As an earlier pgsurge left it: its id came from elsewhere, and it kept no read options.
    for (const t of ['load_files', 'chunks', 'rejects']) await client.query(`UPDATE pgsurge.${t} SET load_id = $2 WHERE load_id = $1`, [id, `${id}-older`]);
    await client.query(`UPDATE pgsurge.load_files SET read_options = NULL WHERE load_id = $1`, [`${id}-older`]);
    const r2 = await runCli(args);
    assert.equal(r2.code, 3, r2.stderr);
    const s = summaryOf(r2);
    assert.equal(s.loadId, `${id}-older`);
    assert.equal(s.files[0]!.earlier.loaded, kept);
    const d = await digestsOf(table, tblAsText(content.replace(/^1200\|.*\n/m, '')), TEXT);
    assert.equal(d.rows, 1999);
    assert.equal(d.table, d.server);
  });
});

describe('--on-conflict: help, docs and behaviour agree', () => {
  it('error: the load stops at the first row that violates a unique key, naming it; what committed before stays, and the ledger counts it', async () => {
    const table = await freshTable('conflict_error');
    const file = path.join(dir, 'conflict-error.tbl');
    // Row 2,001 repeats key 5.
    const content = rows(1, 2000, 'tbl') + rows(5, 1, 'tbl') + rows(2001, 999, 'tbl');
    await fs.writeFile(file, content);
    const r = await runCli(['load', file, '-t', 'conflict_error', '-w', '1', '--chunk-size', '16KB', '--on-conflict', 'error', '--json', ...target()]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /conflict-error\.tbl line 2001 \(byte \d+\): duplicate key value violates unique constraint "conflict_error_pkey" \(Key \(id\)=\(5\) already exists\.\) \[SQLSTATE 23505\]; --on-conflict error stops the load at the first conflict/);
    assert.match(r.stderr, /resume with: /);
    const s = summaryOf(r);
    assert.equal(s.total.rejected, 0, 'no row was rejected: the conflict stopped the load');
    const n = (await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
    assert.ok(n > 0 && n < 2000, `the chunks before the conflict stay: ${n}`);
    assert.equal(s.total.loaded, n);
    const ledger = await client.query(`SELECT sum(rows_loaded)::int AS n FROM pgsurge.chunks WHERE load_id = $1`, [s.loadId]);
    assert.equal(ledger.rows[0].n, n);
    const d = await digestsOf(table, tblAsText(rows(1, n, 'tbl')), TEXT);
    assert.equal(d.table, d.server);
  });

  it('reject (the default): each conflict goes to the reject file with 23505 and the rest loads', async () => {
    const table = await freshTable('conflict_reject');
    const file = path.join(dir, 'conflict-reject.tbl');
    const content = rows(1, 2000, 'tbl') + rows(5, 1, 'tbl') + rows(2001, 999, 'tbl');
    await fs.writeFile(file, content);
    for (const flag of [[], ['--on-conflict', 'reject']]) {
      await client.query(`TRUNCATE ${table}`);
      const r = await runCli(['load', file, '-t', 'conflict_reject', '--truncate', '--json', ...flag, ...target()]);
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r);
      assert.deepEqual([s.total.read, s.total.loaded, s.total.rejected], [3000, 2999, 1]);
      const d = await digestsOf(table, tblAsText(rows(1, 2000, 'tbl') + rows(2001, 999, 'tbl')), TEXT);
      assert.equal(d.table, d.server);
    }
  });

  it('a stop for too many rejects names the main cause with its SQLSTATE and constraint, and points at no reject file when none was written', async () => {
    const table = await freshTable('dominant');
    await client.query(`INSERT INTO ${table} SELECT g, 'there', 1 FROM generate_series(1, 1200) g`);
    const file = path.join(dir, 'dominant.tbl');
    // Three bad amounts among 1,200 duplicates of rows already in the table, in one chunk.
    await fs.writeFile(file, rows(1, 1200, 'tbl').replace(/^(10|20|30)\|(.*)\|[\d.]+\|$/gm, '$1|$2|x|'));
    const r = await runCli(['load', file, '-t', 'dominant', '-w', '1', '--json', ...target()]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /more than 1000 rows rejected \(--max-rejects 1000\): 998 of 1,001: duplicate key on dominant_pkey \(23505\); the load stopped/);
    assert.match(r.stderr, /no reject file was written/);
    assert.doesNotMatch(r.stderr, /look at the reject file/);
    assert.match(r.stderr, /hint: no reject file holds them yet/);
    const s = summaryOf(r);
    assert.equal(s.total.loaded, 0);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${table} WHERE name = 'there'`)).rows[0].n, 1200, 'the table is as it was');
  });

  it('`load --help` and docs/load.md say what each value does, in the same words', async () => {
    const { ON_CONFLICT, ON_CONFLICT_RULES } = await import('../../src/writer/on-conflict.js');
    const help = (await runCli(['load', '--help'])).stdout.replace(/\s+/g, ' ');
    const docs = (await fs.readFile(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/load.md'), 'utf8')).replace(/\s+/g, ' ');
    assert.deepEqual([...ON_CONFLICT], ['error', 'reject', 'skip', 'update']);
    for (const value of ON_CONFLICT) {
      const says = `${value}: ${ON_CONFLICT_RULES[value].help}`;
      assert.ok(help.includes(says), `--help: ${says}`);
      assert.ok(docs.includes(`\`${value}\`: ${ON_CONFLICT_RULES[value].help}`), `docs/load.md: ${says}`);
    }
    assert.match(help, /--on-conflict <action>.*\(default: "reject"\)/);
  });
});
