import assert from 'node:assert/strict';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { duckRows, duckRun, parquetLayout, sqlString, tblToParquet, type ParquetWrite } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, copyFrom, digest, openTestSchema, runCli, tableRecords, tblRecords, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_parquet';
let client: pg.Client;
let dir: string;
let expected: { rows: number; digest: string };

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-parquet-'));
  // The first 15,000 lineitem rows of SF 0.01.
  await generateDbt3({ scale: 0.01, outDir: dir, tables: ['lineitem'] });
  const tbl = path.join(dir, 'lineitem.tbl');
  const lines = (await fs.readFile(tbl, 'utf8')).split('\n').slice(0, 15_000);
  await fs.writeFile(tbl, lines.join('\n') + '\n');
  const records = tblRecords(await fs.readFile(tbl, 'utf8'));
  expected = { rows: records.length, digest: digest(records) };
  await client.query(createTableSql('lineitem', SCHEMA)!);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

async function tableState(table = 'lineitem'): Promise<{ rows: number; digest: string }> {
  const rows = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`)).rows[0].n as number;
  return { rows, digest: digest(await tableRecords(client, `${SCHEMA}.${table}`)) };
}

const WRITES: (ParquetWrite & { name: string; groups: (n: number) => boolean })[] = [
  { name: 'snappy, many small row groups', compression: 'snappy', rowGroupSize: 2048, groups: (n) => n >= 5 },
  { name: 'zstd, one huge row group', compression: 'zstd', rowGroupSize: 1_000_000, groups: (n) => n === 1 },
  { name: 'gzip', compression: 'gzip', rowGroupSize: 4096, groups: (n) => n >= 2 },
  { name: 'uncompressed', compression: 'uncompressed', rowGroupSize: 6144, groups: (n) => n >= 2 },
];

describe('Parquet written by DuckDB from the generated .tbl', () => {
  for (const write of WRITES) {
    it(`${write.name}: the table equals the .tbl load, at 1 and 3 workers`, async () => {
      const file = path.join(dir, `lineitem-${write.compression}.parquet`);
      await tblToParquet('lineitem', path.join(dir, 'lineitem.tbl'), file, write);
      const layout = await parquetLayout(file);
      assert.equal(layout.rows, expected.rows);
      assert.ok(write.groups(layout.rowGroups), `${layout.rowGroups} row groups`);
      for (const workers of ['1', '3']) {
        // 64 KB chunks: a huge row group is read in slices.
        const r = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', workers, '--chunk-size', '64KB', '-q', ...target()]);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(await tableState(), expected, `-w ${workers}`);
      }
    });
  }

  it('node run with a flag a thread cannot take (--trace-gc): the decoding threads start without it and the load is exact', async () => {
    const file = path.join(dir, 'lineitem-snappy.parquet');
    await tblToParquet('lineitem', path.join(dir, 'lineitem.tbl'), file, WRITES[0]!);
    // One worker on a bigger machine than that still decodes in a thread: forced, so the test does not depend on the cores.
    const r = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', '1', '--chunk-size', '64KB', '-q', ...target()], { nodeFlags: ['--trace-gc'], env: { PGSURGE_PARQUET_DECODE_THREADS: '1' } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /invalid execArgv|decoding thread/);
    assert.deepEqual(await tableState(), expected);
  });
});

describe('Parquet types, rejects, schema checks, crashes', () => {
  it('every type round-trips against the same values loaded as text', async () => {
    const columns = `a smallint, ua smallint, ui bigint, ub numeric, d1 numeric(5,2), d2 numeric(15,2), d3 numeric(38,10), di numeric(9,0), dt date, t time, ts timestamp, tz timestamptz,
      tns timestamp, tms timestamp, f real, db double precision, b boolean, s text, e text, u uuid, bya bytea, j jsonb, l bigint[], ll integer[], st jsonb, m jsonb, n bigint`;
    await client.query(`CREATE TABLE ${SCHEMA}.types_p (${columns}); CREATE TABLE ${SCHEMA}.types_t (${columns})`);
    // Values at the edges: negative decimals, years before 1000, midnight, NaN and infinities, NULLs, quotes and backslashes.
    const values = `SELECT i, (i - 3)::TINYINT a, (i * 30)::UTINYINT ua, (4294967295 - i)::UINTEGER ui, (18446744073709551615 - i)::UBIGINT ub,
        ((i - 3) * 1.25)::DECIMAL(5,2) d1, ((i - 3) * 123456789.01)::DECIMAL(15,2) d2, ((i - 3) * 1234567890123.0123456789)::DECIMAL(38,10) d3, ((i - 3) * 12345)::DECIMAL(9,0) di,
        date '0044-03-15' + (i * 400000)::INT dt, time '00:00:00' + to_microseconds(i * 3333333333) t,
        make_timestamp(i * 123456789012345 - 3000000000000000) ts, to_timestamp((i * 123456789012345 - 3000000000000000) / 1e6) tz,
        timestamp_ns '2020-01-01 01:02:03.123456789' + to_microseconds(i) tns, timestamp_ms '1999-12-31 23:59:59.999' + to_milliseconds(i) tms,
        CASE i WHEN 1 THEN 'NaN'::FLOAT WHEN 2 THEN 'inf'::FLOAT ELSE (i / 3)::FLOAT END f, CASE i WHEN 1 THEN '-inf'::DOUBLE ELSE i / 7 END db,
        i % 2 = 0 b, 'tab\tquote"back\\slash,comma é ' || i s, CASE i % 3 WHEN 0 THEN 'red' WHEN 1 THEN 'green' ELSE 'blue' END::ENUM('red', 'green', 'blue') e,
        uuid() u, ('\\x0' || i || '\\x00\\xFF')::BLOB bya, ('{"k": ' || i || ', "s": "x\\"y"}')::JSON j,
        [i, NULL, -i] l, [[i, i + 1], [i + 2, i + 3]] ll, {'k': i, 'v': 'y' || i} st, map(['a', 'b'], [i, i * 2]) m,
        CASE WHEN i % 2 = 1 THEN NULL ELSE i END n
      FROM range(8) r(i)`;
    await duckRun(`CREATE TABLE types AS ${values}`);
    const p = path.join(dir, 'types_p.parquet');
    const csv = path.join(dir, 'types_t.csv');
    await duckRun(`COPY (SELECT * EXCLUDE (i) FROM types) TO ${sqlString(p)} (FORMAT parquet, ROW_GROUP_SIZE 3)`);
    // The text side: each value in PostgreSQL's text form, as DuckDB prints it.
    await duckRun(`COPY (SELECT a, ua, ui, ub, d1, d2, d3, di, dt::VARCHAR, t, ts, ts::VARCHAR || '+00', tns, tms, f, db, b, s, e, u, '\\x' || hex(bya), j,
        '{' || array_to_string(list_transform(l, x -> coalesce(x::VARCHAR, 'NULL')), ',') || '}', '{{' || array_to_string(ll[1], ',') || '},{' || array_to_string(ll[2], ',') || '}}', to_json(st), to_json(m), n FROM types ORDER BY i)
      TO ${sqlString(csv)} (FORMAT csv, HEADER false)`);
    const loadedP = await runCli(['load', p, '-t', 'types_p', '-q', ...target()]);
    assert.equal(loadedP.code, 0, loadedP.stderr);
    const loadedT = await runCli(['load', csv, '-t', 'types_t', '-q', ...target()]);
    assert.equal(loadedT.code, 0, loadedT.stderr);
    const a = await tableRecords(client, `${SCHEMA}.types_p`, '(FORMAT text)');
    const b = await tableRecords(client, `${SCHEMA}.types_t`, '(FORMAT text)');
    assert.equal(a.length, 8);
    assert.deepEqual([...a].sort(), [...b].sort());
  });

  it('binary wire: every type that has a binary form gives the table text gives, and the rest go as text', async () => {
    // The types test's file (DuckDB's `types` table is still there): the fields with an exact binary form.
    const binary = `a smallint, ua smallint, ui bigint, ub numeric, d1 numeric(5,2), d2 numeric(15,2), d3 numeric(38,10), di numeric(9,0), dt date,
      ts timestamp, tz timestamptz, tms timestamp, f real, db double precision, b boolean, s text, e varchar(10), u uuid, bya bytea, j jsonb, n bigint`;
    const names = binary.split(/,(?![^()]*\))/).map((c) => c.trim().split(' ')[0]!);
    await client.query(`CREATE TABLE ${SCHEMA}.types_bin (${binary}); CREATE TABLE ${SCHEMA}.types_txt (${binary})`);
    const p = path.join(dir, 'types_p.parquet');
    const load = async (table: string, wire: string): Promise<{ wire: string; binaryChunks: number; fallbackChunks: number }> => {
      const r = await runCli(['load', p, '-t', table, '--columns', names.join(','), '--wire', wire, '--chunk-size', '1KB', '--json', ...target()]);
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number }; wire?: { table: string; wire: string; binaryChunks: number; fallbackChunks: number }[] };
      assert.deepEqual([summary.total.read, summary.total.loaded], [8, 8]);
      return summary.wire!.find((w) => w.table === table)!;
    };
    const b = await load('types_bin', 'auto');
    assert.equal(b.wire, 'binary', JSON.stringify(b));
    assert.ok(b.binaryChunks >= 3 && b.fallbackChunks === 0, JSON.stringify(b));
    assert.equal((await load('types_txt', 'text')).wire, 'text');
    const a = await tableRecords(client, `${SCHEMA}.types_bin`, '(FORMAT text)');
    assert.equal(a.length, 8);
    assert.deepEqual([...a].sort(), (await tableRecords(client, `${SCHEMA}.types_txt`, '(FORMAT text)')).sort());
    // And both equal the values loaded from DuckDB's text (the types test's table).
    await client.query(`CREATE TABLE ${SCHEMA}.types_ref AS SELECT ${names.join(', ')} FROM ${SCHEMA}.types_t`);
    assert.deepEqual([...a].sort(), (await tableRecords(client, `${SCHEMA}.types_ref`, '(FORMAT text)')).sort());
    // A table with a type that has no binary form (time, arrays) goes as text, saying why.
    const r = await runCli(['load', p, '-t', 'types_p', '--truncate', '--wire', 'binary', '--json', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    const w = (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { wire: { table: string; wire: string; why?: string }[] }).wire.find((x) => x.table === 'types_p')!;
    assert.equal(w.wire, 'text');
    assert.match(w.why ?? '', /no exact binary form/);
  });

  it('values that do not fit their column are rejected with their row group and row, as JSON lines; the rest loads', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.fits (id integer, small integer, name varchar(5))`);
    const file = path.join(dir, 'fits.parquet');
    // Rows 7 and 1500 overflow integer, row 2999 has a name too long (1-based rows).
    await duckRun(`COPY (SELECT i::INTEGER id, CASE WHEN i IN (6, 1499) THEN 3000000000 + i ELSE i END::BIGINT small, CASE WHEN i = 2998 THEN 'toolong' ELSE 'n' || (i % 100) END AS "name" FROM range(3000) r(i))
      TO ${sqlString(file)} (FORMAT parquet, ROW_GROUP_SIZE 1024)`);
    const rejects = path.join(dir, 'fits.rejects');
    const r = await runCli(['load', file, '-t', 'fits', '-w', '2', '--chunk-size', '8KB', '--reject-file', rejects, '--json', ...target()]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.fits`)).rows[0].n, 2997);
    const lines = (await fs.readFile(rejects, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { file: string; row_group: number; row: number; values: Record<string, unknown> });
    // The row group of each row, as DuckDB's footer says.
    const sizes = (await duckRows(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${sqlString(file)}) ORDER BY 1`)).map((r) => Number(r[1]));
    const groupOf = (row: number): number => {
      let g = 0;
      for (let first = 1; row >= first + sizes[g]!; g++) first += sizes[g]!;
      return g;
    };
    assert.ok(sizes.length >= 2, `${sizes.length} row groups`);
    assert.deepEqual(lines.map((l) => [l.row_group, l.row, l.values.id]), [7, 1500, 2999].map((row) => [groupOf(row), row, row - 1]));
    assert.equal(lines[0]!.values.small, 3000000006);
    assert.equal(lines[2]!.values.name, 'toolong');
    assert.equal(lines[0]!.file, file);
    const log = await fs.readFile(`${rejects}.log`, 'utf8');
    assert.match(log, /22003/);
    assert.match(log, /22001/);
    const total = JSON.parse(r.stdout.trim().split('\n').at(-1)!).total as { read: number; loaded: number; rejected: number; skipped: number };
    assert.equal(total.read, 3000);
    assert.equal(total.read, total.loaded + total.rejected + total.skipped);
    assert.equal(total.rejected, 3);
  });

  it('a STRING field into json/jsonb goes in as its bytes, checked by the server: the table equals the server\'s COPY of the same data as CSV; text that is not JSON is a reject with the server\'s message (text and binary wire, decoding threads)', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.docs (id integer, j json, jb jsonb); CREATE TABLE ${SCHEMA}.docs_ref (LIKE ${SCHEMA}.docs)`);
    const file = path.join(dir, 'docs.parquet');
    const csv = path.join(dir, 'docs.csv');
    const bad = [17, 1234, 2999];
    // JSON text of every kind, with blanks and escapes json keeps and jsonb drops, a newline inside, NULLs; three rows that are not JSON.
    await duckRun(`CREATE TABLE docs AS SELECT i::INTEGER id, CASE
        WHEN i = 17 THEN '{bad json' WHEN i = 1234 THEN 'not json' WHEN i = 2999 THEN '{"a": 1,}'
        WHEN i % 10 = 0 THEN '{"a": ' || i || ', "s": "x\\"y é"}' WHEN i % 10 = 1 THEN '[1, 2, {"k": null}]' WHEN i % 10 = 2 THEN '"just a string"'
        WHEN i % 10 = 3 THEN '42.50' WHEN i % 10 = 4 THEN 'true' WHEN i % 10 = 5 THEN 'null' WHEN i % 10 = 6 THEN NULL
        WHEN i % 10 = 7 THEN '{"t": "a\\tb", "n": {"deep": [' || i || ']}}' WHEN i % 10 = 8 THEN '{"multi":' || chr(10) || '"line"}' ELSE '  {"k": ' || i || '}  ' END AS doc
      FROM range(3000) r(i)`);
    await duckRun(`COPY (SELECT id, doc AS j, doc AS jb FROM docs) TO ${sqlString(file)} (FORMAT parquet, ROW_GROUP_SIZE 1024)`);
    await duckRun(`COPY (SELECT id, doc, doc FROM docs WHERE id NOT IN (${bad.join(', ')})) TO ${sqlString(csv)} (FORMAT csv, HEADER false)`);
    await pipeline(createReadStream(csv), client.query(copyFrom(`COPY ${SCHEMA}.docs_ref FROM STDIN (FORMAT csv)`)));
    const reference = await tableRecords(client, `${SCHEMA}.docs_ref`, '(FORMAT text)');
    assert.equal(reference.length, 2997);
    const runs: { name: string; args: string[]; env?: NodeJS.ProcessEnv }[] = [
      { name: 'text wire', args: ['--wire', 'text', '-w', '2'] },
      { name: 'binary wire', args: ['--wire', 'binary', '-w', '2'] },
      { name: 'binary wire, decoding threads', args: ['--wire', 'binary', '-w', '1'], env: { PGSURGE_PARQUET_DECODE_THREADS: '1' } },
      { name: 'text wire, decoding threads', args: ['--wire', 'text', '-w', '1'], env: { PGSURGE_PARQUET_DECODE_THREADS: '1' } },
    ];
    for (const [k, run] of runs.entries()) {
      const rejects = path.join(dir, `docs-${k}.rejects`);
      const r = await runCli(['load', file, '-t', 'docs', '--truncate', '--chunk-size', '8KB', '--reject-file', rejects, '--json', ...run.args, ...target()], run.env ? { env: run.env } : {});
      assert.equal(r.code, 3, `${run.name}: ${r.stderr}`);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number }; wire: { table: string; wire: string; binaryChunks: number }[] };
      assert.deepEqual([summary.total.read, summary.total.loaded, summary.total.rejected, summary.total.skipped], [3000, 2997, 3, 0], `${run.name}: read = loaded + rejected + skipped`);
      if (run.args[1] === 'binary') {
        const w = summary.wire.find((x) => x.table === 'docs')!;
        assert.ok(w.wire === 'binary' && w.binaryChunks > 0, `${run.name}: ${JSON.stringify(w)}`);
      }
      const table = await tableRecords(client, `${SCHEMA}.docs`, '(FORMAT text)');
      assert.equal(digest(table), digest(reference), `${run.name}: the table equals the server's COPY of the CSV`);
      const kinds = (await client.query(`SELECT jsonb_typeof(jb) AS t, count(*)::int AS n FROM ${SCHEMA}.docs WHERE id % 10 IN (0, 1) GROUP BY 1 ORDER BY 1`)).rows;
      assert.deepEqual(kinds, [{ t: 'array', n: 300 }, { t: 'object', n: 300 }], `${run.name}: objects and arrays, not JSON strings`);
      const rejected = (await fs.readFile(rejects, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { values: { id: number } }).values.id);
      assert.deepEqual(rejected.sort((a, b) => a - b), bad, run.name);
      const log = await fs.readFile(`${rejects}.log`, 'utf8');
      assert.match(log, /22P02/, run.name);
      assert.match(log, /invalid input syntax for type json/, run.name);
    }
  });

  it('a damaged page stops the load naming the file, row group and column; the row groups before it stay, accounted, none doubled; --truncate with the mended file is exact', async () => {
    const good = path.join(dir, 'lineitem-mended.parquet');
    await tblToParquet('lineitem', path.join(dir, 'lineitem.tbl'), good, { compression: 'snappy', rowGroupSize: 4096 });
    // Row group 2's l_comment (a snappy page), overwritten past its page header.
    const [at] = await duckRows(`SELECT data_page_offset, total_compressed_size FROM parquet_metadata(${sqlString(good)}) WHERE row_group_id = 2 AND path_in_schema = 'l_comment'`);
    const bytes = await fs.readFile(good);
    const start = Number(at![0]) + 200;
    assert.ok(Number(at![1]) > 2000, `l_comment's chunk is ${at![1]} bytes`);
    bytes.fill(0xff, start, start + 1500);
    const file = path.join(dir, 'lineitem-damaged.parquet');
    await fs.writeFile(file, bytes);
    const records = tblRecords(await fs.readFile(path.join(dir, 'lineitem.tbl'), 'utf8'));
    const group2 = new Set(records.slice(2 * 4096, 3 * 4096));
    const all = new Set(records);
    for (const workers of ['1', '3']) {
      const r = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', workers, '--chunk-size', '64KB', '--json', ...target()]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /lineitem-damaged\.parquet: row group 2 \(rows 8193–12288\) does not decode: a snappy page of l_comment does not decompress/);
      assert.match(r.stderr, /after fixing the input: .* --truncate/);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { event: string; total: { read: number; loaded: number; rejected: number; skipped: number }; stopped: { code: string; message: string; startOver: string } };
      assert.equal(summary.event, 'summary');
      assert.equal(summary.stopped.code, 'bad-input');
      assert.match(summary.stopped.message, /row group 2/);
      assert.match(summary.stopped.startOver, /--truncate/);
      const { total } = summary;
      assert.equal(total.read, total.loaded + total.rejected + total.skipped);
      const table = await tableRecords(client, `${SCHEMA}.lineitem`);
      assert.equal(table.length, total.loaded, `-w ${workers}`);
      assert.equal(new Set(table).size, table.length, 'no row twice');
      assert.ok(table.every((t) => all.has(t) && !group2.has(t)), 'only rows of the file, none of the damaged row group');
      // One reader goes in order: exactly row groups 0 and 1.
      if (workers === '1') assert.equal(digest(table), digest(records.slice(0, 2 * 4096)));
    }
    // Mended, loaded again from the start as the hint says: exact.
    await fs.copyFile(good, file);
    const again = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', '3', '-q', ...target()]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await tableState(), expected);
  });

  it('a file whose fields do not match the table stops before anything loads (exit 2), naming them', async () => {
    const file = path.join(dir, 'other.parquet');
    await duckRun(`COPY (SELECT i::INTEGER l_orderkey, 'x' AS l_color, DATE '2020-01-01' AS l_quantity FROM range(10) r(i)) TO ${sqlString(file)} (FORMAT parquet)`);
    await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
    const r = await runCli(['load', file, '-t', 'lineitem', ...target()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /does not match table/);
    assert.match(r.stderr, /l_partkey/);
    assert.match(r.stderr, /l_color/);
    assert.match(r.stderr, /field l_quantity is DATE in the file, column l_quantity is numeric\(15,2\)/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.lineitem`)).rows[0].n, 0);
    // --columns loads the fields that match.
    const some = await runCli(['load', file, '-t', 'lineitem', '--columns', 'l_orderkey', '-q', ...target()]);
    assert.equal(some.code, 0, some.stderr);
    assert.equal((await client.query(`SELECT count(DISTINCT l_orderkey)::int AS n FROM ${SCHEMA}.lineitem`)).rows[0].n, 10);
  });

  it('SIGKILL mid-load, then --resume with other workers: the table equals the .tbl load, the ledger tiles the rows once', async () => {
    const file = path.join(dir, 'lineitem-snappy.parquet');
    // Row groups of 4,096 rows: their arrays are big enough to be reused (BufferPool), so a resume's runs (parts of row groups) and their many chunks recycle them.
    await tblToParquet('lineitem', path.join(dir, 'lineitem.tbl'), file, { compression: 'snappy', rowGroupSize: 4096 });
    let killed = 0;
    for (let round = 0; round < 3; round++) {
      const loadId = `pq-crash-${round}`;
      const run = startCli(['load', file, '-t', 'lineitem', '--truncate', '-w', '2', '--chunk-size', '16KB', '--load-id', loadId, ...target()]);
      await run.waitFor(/pgsurge: load pq-crash-\d+/);
      await sleep(150 + 250 * round);
      if (run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        killed++;
      }
      await run.exited;
      const r = await runCli(['load', file, '-t', 'lineitem', '-w', '3', '--chunk-size', '40KB', '--resume', '--load-id', loadId, '-q', ...target()]);
      assert.equal(r.code, 0, `round ${round}: ${r.stderr}`);
      assert.deepEqual(await tableState(), expected, `round ${round}`);
      const ranges = await client.query<{ s: string; e: string }>(`SELECT byte_start AS s, byte_end AS e FROM pgsurge.chunks WHERE load_id = $1 AND table_oid = '${SCHEMA}.lineitem'::regclass ORDER BY byte_start`, [loadId]);
      let at = 0;
      for (const row of ranges.rows) {
        assert.equal(Number(row.s), at, `round ${round}: a gap or an overlap at row ${at}`);
        at = Number(row.e);
      }
      assert.equal(at, expected.rows);
    }
    assert.ok(killed >= 1, 'at least one load was killed mid-way');
  });

  it('dbt3 load: a folder of <table>.parquet files loads like the .tbl files they were written from', async () => {
    const tblDir = path.join(dir, 'dbt3-tbl');
    const pqDir = path.join(dir, 'dbt3-parquet');
    await fs.mkdir(pqDir);
    await generateDbt3({ scale: 0.01, outDir: tblDir, tables: ['region', 'nation', 'supplier'] });
    for (const table of ['region', 'nation', 'supplier'] as const) {
      await tblToParquet(table, path.join(tblDir, `${table}.tbl`), path.join(pqDir, `${table}.parquet`), { compression: 'zstd', rowGroupSize: 2048 });
    }
    const dbt3Schema = `${SCHEMA}_dbt3`;
    await client.query(`DROP SCHEMA IF EXISTS ${dbt3Schema} CASCADE; CREATE SCHEMA ${dbt3Schema}`);
    const r = await runCli(['dbt3', 'load', pqDir, '--db', testUrl(), '--schema', dbt3Schema, '--no-keys', '-w', '2', '-q']);
    assert.equal(r.code, 0, r.stderr);
    for (const table of ['region', 'nation', 'supplier']) {
      const want = tblRecords(await fs.readFile(path.join(tblDir, `${table}.tbl`), 'utf8'));
      assert.equal(digest(await tableRecords(client, `${dbt3Schema}.${table}`)), digest(want), table);
    }
    await client.query(`DROP SCHEMA ${dbt3Schema} CASCADE`);
  });
});
