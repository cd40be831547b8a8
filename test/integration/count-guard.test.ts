import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import type { Chunk, LoadTarget } from '../../src/core/chunk.js';
import { LoadError } from '../../src/core/load-error.js';
import type { Target } from '../../src/cluster/target.js';
import { openTarget } from '../../src/cli/open-target.js';
import { LoadStopped } from '../../src/load/load-stopped.js';
import { ensureLedger, LedgerWriter } from '../../src/writer/ledger/ledger.js';
import { RejectBudget } from '../../src/writer/rejects/reject-budget.js';
import { commitChunk } from '../../src/writer/chunk-transaction.js';
import { load } from '../../src/load/load.js';
import type { LoadOptions } from '../../src/load/load-options.js';
import type { LoadSummary } from '../../src/metrics/load-counters.js';
import type { ChunkResult, ChunkWriter } from '../../src/writer/chunk-writer.js';
import { copySkipConflictsWriter } from '../../src/writer/copy-skip-conflicts-writer.js';
import { copyWriter } from '../../src/writer/copy-writer.js';
import { insertWriter } from '../../src/writer/insert-writer.js';
import { wireCopyWriter } from '../../src/writer/wire-writer.js';
import { duckRun, sqlString } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, digest, forgetLoads, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

/**
 * The count guard: a chunk commits, with its ledger row, only when the server's count of
 * its rows equals the records pgsurge sent. Each test hands the load a writer that makes
 * the server's count differ for the chunks holding one record (a real `\.` end-of-data
 * marker in the COPY data, or a count reported one short), then checks the ledger (schema
 * pgsurge), the table and the accounting.
 */
const SCHEMA = 'it_guard';
const ROWS = 3000;
/** The record the test writers make trouble for. */
const BAD = 1234;
let client: pg.Client;
let dir: string;
let target: Target;
const LOAD_IDS = ['guard-direct', 'guard-marker', 'guard-marker-stop', 'guard-short', 'guard-binary', 'guard-skip', 'guard-insert', 'guard-parquet', 'guard-cli', 'guard-trigger', 'guard-trigger-insert'];

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-guard-'));
  await forgetLoads(client, LOAD_IDS);
  target = await openTarget({ db: testUrl() });
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** `id<TAB>value id` for ids 1..n: the file, and the table's records (as `tableRecords` shows them, `|` between fields). */
async function textInput(name: string, n = ROWS): Promise<{ file: string; records: string[] }> {
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  const file = path.join(dir, `${name}.txt`);
  await fs.writeFile(file, ids.map((id) => `${id}\tvalue ${id}\n`).join(''));
  return { file, records: ids.map((id) => `${id}|value ${id}`) };
}

async function table(name: string, pk = false): Promise<string> {
  const q = `${SCHEMA}.${name}`;
  await client.query(`DROP TABLE IF EXISTS ${q} CASCADE`);
  await client.query(`CREATE TABLE ${q} (id bigint${pk ? ' PRIMARY KEY' : ''}, v text)`);
  return q;
}

/** Where record `id` starts in a chunk's COPY text data, or -1. */
function recordAt(data: Buffer, id: number): number {
  if (data.subarray(0, String(id).length + 1).toString() === `${id}\t`) return 0;
  const at = data.indexOf(`\n${id}\t`);
  return at < 0 ? -1 : at + 1;
}

/**
 * A test writer: `inner`, with the COPY data of every chunk (or part) holding record `id`
 * changed by `data`, or its result by `result`, on the writer and on its refused-chunk
 * writer (the binary wire's text path).
 */
function troubleFor(inner: ChunkWriter, id: number, change: { data?: (data: Buffer, at: number) => Buffer; result?: (r: ChunkResult) => ChunkResult }): ChunkWriter {
  const send = async (chunk: Chunk, write: (c: Chunk) => Promise<ChunkResult>): Promise<ChunkResult> => {
    const at = recordAt(chunk.data, id);
    if (at < 0) return write(chunk);
    const changed = change.data ? { ...chunk, data: change.data(chunk.data, at) } : chunk;
    const r = await write(changed);
    return change.result ? change.result(r) : r;
  };
  return {
    ...inner,
    name: inner.name,
    writeRows: (client, chunk) => send(chunk, (c) => inner.writeRows(client, c)),
    ...(inner.beginAndWriteRows ? { beginAndWriteRows: (client: pg.Client, chunk: Chunk) => send(chunk, (c) => inner.beginAndWriteRows!(client, c)) } : {}),
    ...(inner.refusedWriter ? { refusedWriter: troubleFor(inner.refusedWriter, id, change) } : {}),
  };
}

/** The end-of-data marker line `\.`, put in front of the record: the server ends the COPY there, without an error. */
const endMarker = (data: Buffer, at: number): Buffer => Buffer.concat([data.subarray(0, at), Buffer.from('\\.\n'), data.subarray(at)]);
/** The server's count reported one short. */
const oneShort = (r: ChunkResult): ChunkResult => ({ ...r, loaded: r.loaded - 1 });

function loadOptions(loadId: string, writer: ChunkWriter, more: Partial<LoadOptions> = {}): LoadOptions {
  return { workers: 2, chunkBytes: 8 * 1024, create: false, truncate: true, loadId, writer, rejectDir: dir, ...more };
}

interface LedgerChunk {
  start: number;
  end: number;
  loaded: number;
  rejected: number;
  skipped: number;
}

async function ledgerChunks(loadId: string): Promise<LedgerChunk[]> {
  const r = await client.query<{ s: string; e: string; l: string; r: string; k: string }>(
    'SELECT byte_start AS s, byte_end AS e, rows_loaded AS l, rows_rejected AS r, rows_skipped AS k FROM pgsurge.chunks WHERE load_id = $1 ORDER BY byte_start',
    [loadId],
  );
  return r.rows.map((row) => ({ start: Number(row.s), end: Number(row.e), loaded: Number(row.l), rejected: Number(row.r), skipped: Number(row.k) }));
}

/**
 * Every ledger row adds up to the records of its range (lines of a text file; rows of a
 * Parquet file, whose ranges count rows), and the table holds exactly the rows the ledger
 * says were loaded.
 */
async function assertLedgerAddsUp(loadId: string, q: string, recordsIn: (c: LedgerChunk) => number): Promise<LedgerChunk[]> {
  const chunks = await ledgerChunks(loadId);
  assert.ok(chunks.length > 0, `ledger rows of ${loadId}`);
  for (const c of chunks) {
    assert.equal(c.loaded + c.rejected + c.skipped, recordsIn(c), `the ledger row of bytes ${c.start}–${c.end}: ${JSON.stringify(c)}`);
  }
  const inTable = Number((await client.query(`SELECT count(*) AS n FROM ${q}`)).rows[0].n);
  assert.equal(inTable, chunks.reduce((n, c) => n + c.loaded, 0), 'the table holds the rows the ledger counts');
  return chunks;
}

const linesIn = (content: Buffer) => (c: LedgerChunk): number => {
  let n = 0;
  for (let i = content.indexOf(0x0a, c.start); i >= 0 && i < c.end; i = content.indexOf(0x0a, i + 1)) n++;
  return n;
};

async function rejectsOf(loadId: string): Promise<{ message: string; record: string; sqlstate: string | null; byteOffset: number }[]> {
  const r = await client.query<{ message: string; record: Buffer; sqlstate: string | null; b: string }>('SELECT message, record, sqlstate, byte_offset AS b FROM pgsurge.rejects WHERE load_id = $1 ORDER BY byte_offset', [loadId]);
  return r.rows.map((row) => ({ message: row.message, record: row.record.toString(), sqlstate: row.sqlstate, byteOffset: Number(row.b) }));
}

function assertSummary(summary: LoadSummary, account: { read: number; loaded: number; rejected: number; skipped: number }): void {
  const { read, loaded, rejected, skipped } = summary.total;
  assert.deepEqual({ read, loaded, rejected, skipped }, account);
  assert.equal(read, loaded + rejected + skipped);
}

/** The one record the guard rejected: BAD's line, with what the server did. */
async function assertBadRejected(loadId: string, file: string, message: RegExp): Promise<void> {
  const rejects = await rejectsOf(loadId);
  assert.equal(rejects.length, 1, JSON.stringify(rejects));
  assert.equal(rejects[0]!.record, `${BAD}\tvalue ${BAD}\n`);
  assert.equal(rejects[0]!.byteOffset, recordAt(await fs.readFile(file), BAD));
  assert.equal(rejects[0]!.sqlstate, null);
  assert.match(rejects[0]!.message, message);
}

describe('the count guard: a chunk whose server count differs is never recorded as done', () => {
  it('a real short count: an end-of-data marker \\. in the COPY data; the record it stands before is rejected alone, every other row loads', async () => {
    const q = await table('marker');
    const { file, records } = await textInput('marker');
    const summary = await load([{ file, format: 'text', table: 'marker', schema: SCHEMA }], loadOptions('guard-marker', troubleFor(copyWriter, BAD, { data: endMarker })), target);
    assertSummary(summary, { read: ROWS, loaded: ROWS - 1, rejected: 1, skipped: 0 });
    assert.equal(digest(await tableRecords(client, q)), digest(records.filter((r) => r !== `${BAD}|value ${BAD}`)));
    const chunks = await assertLedgerAddsUp('guard-marker', q, linesIn(await fs.readFile(file)));
    assert.equal(chunks.reduce((n, c) => n + c.rejected, 0), 1);
    await assertBadRejected('guard-marker', file, /^the server stored 0 rows for this record, without an error \(COPY stopped early: an end-of-data marker/);
    // The reject file says so too.
    const rejectFile = summary.rejectFiles?.[0]?.path;
    assert.ok(rejectFile, 'a reject file');
    assert.equal((await fs.readFile(rejectFile, 'utf8')).trim(), `${BAD}\tvalue ${BAD}`);
  });

  it('a real short count with no reject allowed: the load stops and the chunk is not in the ledger', async () => {
    const q = await table('marker_stop');
    const { file } = await textInput('marker_stop');
    const content = await fs.readFile(file);
    const error = await load([{ file, format: 'text', table: 'marker_stop', schema: SCHEMA }], loadOptions('guard-marker-stop', troubleFor(copyWriter, BAD, { data: endMarker }), { workers: 1, maxRejects: 0 }), target).then(
      () => assert.fail('the load must stop'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof LoadStopped, String(error));
    assert.equal(error.code, 'too-many-rejects', error.message);
    const chunks = await assertLedgerAddsUp('guard-marker-stop', q, linesIn(content));
    const at = recordAt(content, BAD);
    assert.ok(!chunks.some((c) => c.start <= at && at < c.end), `no ledger row covers byte ${at}: ${JSON.stringify(chunks)}`);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${q} WHERE id = ${BAD}`)).rows[0].n, 0);
    assert.equal(error.summary.ledger?.loaded, chunks.reduce((n, c) => n + c.loaded, 0));
  });

  it('an injected short count (COPY text): the record is rejected alone with what the server did', async () => {
    const q = await table('short');
    const { file, records } = await textInput('short');
    const summary = await load([{ file, format: 'text', table: 'short', schema: SCHEMA }], loadOptions('guard-short', troubleFor(copyWriter, BAD, { result: oneShort })), target);
    assertSummary(summary, { read: ROWS, loaded: ROWS - 1, rejected: 1, skipped: 0 });
    assert.equal(digest(await tableRecords(client, q)), digest(records.filter((r) => r !== `${BAD}|value ${BAD}`)));
    await assertLedgerAddsUp('guard-short', q, linesIn(await fs.readFile(file)));
    await assertBadRejected('guard-short', file, /^the server stored 0 rows for this record, without an error/);
  });

  it('binary COPY: a short count sends the chunk through text COPY in parts; the record is rejected alone', async () => {
    const q = await table('binary');
    const { file, records } = await textInput('binary');
    const writer = wireCopyWriter('binary', undefined, { workers: 2 });
    const summary = await load([{ file, format: 'text', table: 'binary', schema: SCHEMA }], loadOptions('guard-binary', troubleFor(writer, BAD, { result: oneShort })), target);
    assertSummary(summary, { read: ROWS, loaded: ROWS - 1, rejected: 1, skipped: 0 });
    assert.ok((writer.wireReport?.()[0]?.binaryChunks ?? 0) > 0, 'chunks went as binary');
    assert.equal(digest(await tableRecords(client, q)), digest(records.filter((r) => r !== `${BAD}|value ${BAD}`)));
    await assertLedgerAddsUp('guard-binary', q, linesIn(await fs.readFile(file)));
    await assertBadRejected('guard-binary', file, /^the server stored 0 rows for this record/);
  });

  it('--on-conflict skip: the staging COPY count must equal the records sent; skipped = staged − inserted still counts', async () => {
    const q = await table('skip', true);
    // 100 of the rows are in the table already: skipped on conflict, not a mismatch.
    await client.query(`INSERT INTO ${q} SELECT g, 'value ' || g FROM generate_series(1, 100) g`);
    const { file, records } = await textInput('skip');
    const summary = await load([{ file, format: 'text', table: 'skip', schema: SCHEMA }], loadOptions('guard-skip', troubleFor(copySkipConflictsWriter(), BAD, { result: oneShort }), { truncate: false }), target);
    assertSummary(summary, { read: ROWS, loaded: ROWS - 100 - 1, rejected: 1, skipped: 100 });
    assert.equal(digest(await tableRecords(client, q)), digest(records.filter((r) => r !== `${BAD}|value ${BAD}`)));
    const chunks = await ledgerChunks('guard-skip');
    const lines = linesIn(await fs.readFile(file));
    for (const c of chunks) assert.equal(c.loaded + c.rejected + c.skipped, lines(c));
    assert.equal(chunks.reduce((n, c) => n + c.skipped, 0), 100);
    await assertBadRejected('guard-skip', file, /^the server stored 0 rows for this record, without an error/);
  });

  it('--mode insert (unnest): an INSERT count one short is caught the same way', async () => {
    const q = await table('ins');
    const { file, records } = await textInput('ins');
    const writer = insertWriter({ style: 'unnest', batchRows: 500, onConflict: 'error' });
    const summary = await load([{ file, format: 'text', table: 'ins', schema: SCHEMA }], loadOptions('guard-insert', troubleFor(writer, BAD, { result: oneShort })), target);
    assertSummary(summary, { read: ROWS, loaded: ROWS - 1, rejected: 1, skipped: 0 });
    assert.equal(digest(await tableRecords(client, q)), digest(records.filter((r) => r !== `${BAD}|value ${BAD}`)));
    await assertLedgerAddsUp('guard-insert', q, linesIn(await fs.readFile(file)));
    await assertBadRejected('guard-insert', file, /^the server stored 0 rows for this record, without an error$/);
  });

  it('--commit-every (the writer commits on its own, no ledger): a count that differs stops the load, naming the chunk', async () => {
    const q = await table('every');
    const { file } = await textInput('every');
    const writer = insertWriter({ style: 'unnest', batchRows: 100, commitEvery: 1, onConflict: 'error' });
    const options: LoadOptions = { workers: 1, chunkBytes: 8 * 1024, create: false, truncate: true, ledger: false, writer: troubleFor(writer, BAD, { result: oneShort }), rejectDir: dir };
    const error = await load([{ file, format: 'text', table: 'every', schema: SCHEMA }], options, target).then(
      () => assert.fail('the load must stop'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof LoadStopped, String(error));
    assert.equal(error.code, 'chunk-failed');
    // file, byte offset, first line of the chunk that holds BAD
    const m = /^the load stopped on the chunk of (\d+) records in (.+) at byte (\d+) \(bytes \d+–\d+, first line (\d+)\): the server stored (\d+) rows for the \1 records pgsurge sent, without an error/.exec(error.message);
    assert.ok(m, error.message);
    assert.equal(m[2], file);
    const content = await fs.readFile(file);
    const offset = Number(m[3]);
    const firstId = Number(content.subarray(offset, content.indexOf(0x09, offset)).toString());
    assert.equal(Number(m[4]), firstId, 'the first line is the first record of the chunk (line n holds id n)');
    assert.ok(firstId <= BAD && BAD < firstId + Number(m[1]), `the chunk holds record ${BAD}`);
    assert.match(error.details.hint ?? '', /committed already/);
    // Every row of the chunks up to it is in (committed by the writer); nothing after it.
    assert.equal(Number((await client.query(`SELECT max(id) AS m FROM ${q}`)).rows[0].m), firstId + Number(m[1]) - 1);
  });

  it('Parquet: a chunk of rows whose count differs is split by its rows; the row is rejected alone', async () => {
    const q = await table('pq');
    const file = path.join(dir, 'pq.parquet');
    await duckRun(`COPY (SELECT i::BIGINT AS id, 'value ' || i AS v FROM range(1, ${ROWS + 1}) t(i)) TO ${sqlString(file)} (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
    const summary = await load([{ file, format: 'parquet', table: 'pq', schema: SCHEMA }], loadOptions('guard-parquet', troubleFor(copyWriter, BAD, { result: oneShort })), target);
    assertSummary(summary, { read: ROWS, loaded: ROWS - 1, rejected: 1, skipped: 0 });
    const records = Array.from({ length: ROWS }, (_, i) => `${i + 1}|value ${i + 1}`);
    assert.equal(digest(await tableRecords(client, q)), digest(records.filter((r) => r !== `${BAD}|value ${BAD}`)));
    // A Parquet chunk's range counts rows.
    await assertLedgerAddsUp('guard-parquet', q, (c) => c.end - c.start);
    const rejects = await rejectsOf('guard-parquet');
    assert.equal(rejects.length, 1);
    assert.equal(rejects[0]!.byteOffset, BAD - 1, "the rejected row's index in the file");
    assert.match(rejects[0]!.message, /^the server stored 0 rows for this record/);
  });
});

describe('the count guard through the command line', () => {
  it('the ordinary path: nothing differs, every row loads, exit 0, the ledger adds up', async () => {
    const q = await table('cli');
    const { file, records } = await textInput('cli');
    const r = await runCli(['load', file, '-t', 'cli', '-f', 'text', '--chunk-size', '8KB', '-w', '2', '--load-id', 'guard-cli', '--db', testUrl(), '--schema', SCHEMA]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /loaded 3,000 of 3,000 rows read in /);
    assert.doesNotMatch(r.stdout, /skipped by the table's trigger/);
    assert.equal(digest(await tableRecords(client, q)), digest(records));
    const chunks = await assertLedgerAddsUp('guard-cli', q, linesIn(await fs.readFile(file)));
    assert.ok(chunks.length > 1, 'several chunks');
  });

  /** Legacy trigger-based partitioning: the parent's BEFORE INSERT trigger puts even ids in a child table and returns NULL for them. */
  async function partitionedByTrigger(name: string): Promise<{ parent: string; child: string }> {
    const parent = await table(name);
    const child = `${SCHEMA}.${name}_even`;
    await client.query(`CREATE TABLE ${child} (LIKE ${parent})`);
    await client.query(`CREATE FUNCTION ${SCHEMA}.${name}_route() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id % 2 = 0 THEN INSERT INTO ${child} VALUES (NEW.*); RETURN NULL; END IF; RETURN NEW; END $$`);
    await client.query(`CREATE TRIGGER ${name}_route BEFORE INSERT ON ${parent} FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.${name}_route()`);
    return { parent, child };
  }

  for (const mode of ['copy', 'insert'] as const) {
    it(`a BEFORE INSERT trigger that returns NULL (--mode ${mode}): the rows it keeps out are counted as skipped by the trigger, and said`, async () => {
      const name = `trig_${mode}`;
      const loadId = mode === 'copy' ? 'guard-trigger' : 'guard-trigger-insert';
      const { parent, child } = await partitionedByTrigger(name);
      const { file, records } = await textInput(name);
      const r = await runCli(['load', file, '-t', name, '-f', 'text', '--mode', mode, '--chunk-size', '8KB', '-w', '2', '--load-id', loadId, '--db', testUrl(), '--schema', SCHEMA]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /loaded 1,500 of 3,000 rows read \(read 3,000 = loaded 1,500 \+ rejected 0 \+ skipped 1,500\)/);
      assert.match(r.stdout, new RegExp(`skipped by the table's trigger: 1,500 rows of ${name}: .*${name}_route on ${SCHEMA}\\.${name}`));
      assert.match(r.stderr + r.stdout, /has BEFORE INSERT row trigger/);
      const odd = (rec: string): boolean => Number(rec.split('|')[0]) % 2 === 1;
      assert.equal(digest(await tableRecords(client, parent)), digest(records.filter(odd)));
      assert.equal(digest(await tableRecords(client, child)), digest(records.filter((rec) => !odd(rec))));
      const chunks = await ledgerChunks(loadId);
      const lines = linesIn(await fs.readFile(file));
      for (const c of chunks) assert.equal(c.loaded + c.rejected + c.skipped, lines(c));
      assert.equal(chunks.reduce((n, c) => n + c.skipped, 0), 1500);
      assert.equal(chunks.reduce((n, c) => n + c.loaded, 0), 1500);
    });
  }
});

describe('the count guard when the record cannot be found', () => {
  it('a chunk whose records pgsurge counts otherwise than the server and its source show: the load stops naming the chunk, nothing of it committed, no ledger row', async () => {
    const q = await table('direct');
    const oid = Number((await client.query(`SELECT '${q}'::regclass::oid::int8 AS oid`)).rows[0].oid);
    const file = path.join(dir, 'direct.txt');
    const bytes = Buffer.from('1\tone\n2\ttwo\n3\tthree\n4\tfour\n5\tfive\n');
    await fs.writeFile(file, bytes);
    await ensureLedger(client);
    const ledger = new LedgerWriter('guard-direct', new Map([[file, { file, tableName: q, tableOid: oid, identity: undefined, readOptions: '{}' }]]));
    const target: LoadTarget = { table: 'direct', schema: SCHEMA, format: 'text', file };
    // Five records in the data and in the source; counted as six (as a framer that miscounted would).
    const chunk: Chunk = { location: { file, byteOffset: 0, byteLength: bytes.length, firstLine: 1 }, data: bytes, source: bytes, records: 6, lines: 6, target };
    const error = await commitChunk(client, chunk, { writer: copyWriter, ledger, budget: new RejectBudget(1000, 0), firstLineOf: async () => 1 }).then(
      () => assert.fail('the chunk must not commit'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof LoadError, String(error));
    assert.equal(error.code, 'chunk-failed');
    assert.equal(
      error.message,
      `the load stopped on the chunk of 6 records in ${file} at byte 0 (bytes 0–${bytes.length}, first line 1): its records cannot be told apart to find the one the server miscounted (framed again, its source holds 5 records, not 6): the server stored 5 rows for the 6 records pgsurge sent, without an error (COPY stopped early: an end-of-data marker \\. in the data?)`,
    );
    assert.match(error.details.hint ?? '', /nothing of this chunk was committed and the ledger does not count it as done/);
    assert.deepEqual(await ledgerChunks('guard-direct'), []);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${q}`)).rows[0].n, 0);
    // The connection is out of any transaction: the next statement runs.
    assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
  });
});
