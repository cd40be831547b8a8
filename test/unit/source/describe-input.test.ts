import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { LoadTarget } from '../../../src/core/chunk.js';
import type { InputOptions } from '../../../src/input/input-options.js';
import type { Format } from '../../../src/input/formats.js';
import { describeInput } from '../../../src/input/format-registry.js';
import { duckRun, sqlString } from '../../helpers/duckdb-parquet.js';

/*
 * describe(): the columns a file declares (a Parquet schema, typed for PostgreSQL) or
 * shows (a header line, the keys of the first JSON objects), read by each format's plug-in.
 */

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-unit-describe-'));
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const target = (format: Format, file: string, input: InputOptions = {}): LoadTarget => ({ table: 't', schema: undefined, format, file, input });

async function write(name: string, text: string | Buffer): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, text);
  return file;
}

describe('describe() of a Parquet file: its schema as PostgreSQL types', () => {
  it('maps each DuckDB type to the PostgreSQL type that holds it', async () => {
    const file = path.join(dir, 'types.parquet');
    await duckRun(`CREATE TYPE describe_mood AS ENUM ('sad', 'ok')`);
    await duckRun(`COPY (SELECT 1::TINYINT i8, 2::SMALLINT i16, 3::INTEGER i32, 4::BIGINT i64, 5::UTINYINT u8, 6::USMALLINT u16, 7::UINTEGER u32, 8::UBIGINT u64,
      1.5::DECIMAL(15,2) d, 1.5::FLOAT f, 2.5::DOUBLE g, true b, 'x'::VARCHAR s, 'ok'::describe_mood e, '4b2a4e4e-1111-4a4a-8b8b-0123456789ab'::UUID u,
      DATE '2024-01-02' dt, TIME '01:02:03' tm, TIMESTAMP '2024-01-02 03:04:05' ts, TIMESTAMPTZ '2024-01-02 03:04:05+00' tz, INTERVAL 1 DAY iv,
      '{"a":1}'::JSON j, 'ab'::BLOB bl, [1,2]::INTEGER[] li, ['a']::VARCHAR[] ls, [1.5]::DECIMAL(9,3)[] ld, {'a': 1} st, MAP {'k': 1} mp, [[1]] nested)
      TO ${sqlString(file)} (FORMAT parquet)`);
    const { columns } = await describeInput(target('parquet', file));
    assert.deepEqual(
      columns.map((c) => [c.name, c.type]),
      [
        ['i8', 'smallint'],
        ['i16', 'smallint'],
        ['i32', 'integer'],
        ['i64', 'bigint'],
        ['u8', 'smallint'],
        ['u16', 'integer'],
        ['u32', 'bigint'],
        ['u64', 'numeric(20,0)'],
        ['d', 'numeric(15,2)'],
        ['f', 'real'],
        ['g', 'double precision'],
        ['b', 'boolean'],
        ['s', 'text'],
        ['e', 'text'],
        ['u', 'uuid'],
        ['dt', 'date'],
        ['tm', 'time'],
        ['ts', 'timestamp'],
        ['tz', 'timestamptz'],
        ['iv', 'interval'],
        ['j', 'jsonb'],
        ['bl', 'bytea'],
        ['li', 'integer[]'],
        ['ls', 'text[]'],
        ['ld', 'numeric(9,3)[]'],
        ['st', 'jsonb'],
        ['mp', 'jsonb'],
        ['nested', 'jsonb'],
      ],
    );
    // DuckDB writes every field OPTIONAL.
    assert.ok(columns.every((c) => c.notNull === false));
  });

  it('says a REQUIRED field is not null', async () => {
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'id', data: [1, 2, 3], type: 'INT32', nullable: false },
        { name: 'note', data: ['a', null, 'c'], type: 'STRING' },
      ],
    });
    const file = await write('required.parquet', Buffer.from(buf));
    assert.deepEqual((await describeInput(target('parquet', file))).columns, [
      { name: 'id', type: 'integer', notNull: true },
      { name: 'note', type: 'text', notNull: false },
    ]);
  });
});

describe('describe() of delimited text: the header line names the columns', () => {
  it('reads the names as COPY would split the header of each format, and makes them identifiers', async () => {
    const csv = await write('h.csv', '\uFEFFid,"full, name","say ""hi"""\r\n1,a,b\r\n');
    assert.deepEqual((await describeInput(target('csv', csv, { header: 'skip' }))).columns, [
      { name: 'id', type: 'integer' },
      { name: 'full_name', key: 'full, name', type: 'text' },
      { name: 'say_hi', key: 'say "hi"', type: 'text' },
    ]);
    const text = await write('h.txt', 'id\tna\\tme\n1\tx\n');
    assert.deepEqual((await describeInput(target('text', text, { header: 'match' }))).columns, [
      { name: 'id', type: 'integer' },
      { name: 'na_me', key: 'na\tme', type: 'text' },
    ]);
    const tbl = await write('h.tbl', 'a|b|c|\n1|2|3|\n');
    assert.deepEqual((await describeInput(target('tbl', tbl, { header: 'skip' }))).columns, [
      { name: 'a', type: 'integer' },
      { name: 'b', type: 'integer' },
      { name: 'c', type: 'integer' },
    ]);
  });

  it('names the columns c1…cN when the file has no header', async () => {
    const csv = await write('nohead.csv', '1,2\n');
    assert.deepEqual((await describeInput(target('csv', csv))).columns, [
      { name: 'c1', type: 'integer' },
      { name: 'c2', type: 'integer' },
    ]);
  });
});

describe('describe() of JSON: the keys of the first objects, in the order they appear', () => {
  it('NDJSON: keys of lines from the start, middle and end, a line cut by the end of what is read left out', async () => {
    const small = await write('k.ndjson', '{"a":1,"b":2}\n\n{"c":[1,{"x":2}],"a":3}\n');
    assert.deepEqual((await describeInput(target('ndjson', small))).columns, [
      { name: 'a', type: 'integer' },
      { name: 'b', type: 'integer' },
      { name: 'c', type: 'jsonb' },
    ]);
    // A sample of a hundred objects from the start, the middle and the end: a key first seen past the start is named.
    const lines = Array.from({ length: 60_000 }, (_, i) => JSON.stringify(i < 150 ? { id: i, pad: 'x'.repeat(20) } : { id: i, late: true }));
    const big = await write('big.ndjson', lines.join('\n') + '\n');
    const hundred = await describeInput(target('ndjson', big), { sample: 100 });
    assert.deepEqual(hundred.columns, [
      { name: 'id', type: 'integer' },
      { name: 'pad', type: 'text' },
      { name: 'late', type: 'boolean' },
    ]);
    assert.deepEqual([hundred.sampled, hundred.whole], [100, false]);
    const all = await describeInput(target('ndjson', big), { sample: 'all' });
    assert.deepEqual(all.columns, [
      { name: 'id', type: 'integer' },
      { name: 'pad', type: 'text' },
      { name: 'late', type: 'boolean' },
    ]);
    assert.deepEqual([all.sampled, all.whole], [60_000, true]);
  });

  it('a JSON array: the document, the array at --json-path, and an array longer than what is read', async () => {
    const doc = await write('a.json', '[{"x":1},\n {"y":2,"x":3}]');
    assert.deepEqual((await describeInput(target('json', doc))).columns, [
      { name: 'x', type: 'integer' },
      { name: 'y', type: 'integer' },
    ]);
    const nested = await write('n.json', '{"meta":{},"data":{"items":[{"p":1},{"q":2}]}}');
    assert.deepEqual((await describeInput(target('json', nested, { jsonPath: 'data.items' }))).columns, [
      { name: 'p', type: 'integer' },
      { name: 'q', type: 'integer' },
    ]);
    const rows = Array.from({ length: 60_000 }, (_, i) => JSON.stringify(i === 3 ? { id: i, extra: 'e' } : { id: i, pad: 'y'.repeat(20) }));
    const big = await write('big.json', `[${rows.join(',\n')}]`);
    assert.deepEqual((await describeInput(target('json', big), { sample: 100 })).columns, [
      { name: 'id', type: 'integer' },
      { name: 'pad', type: 'text' },
      { name: 'extra', type: 'text' },
    ]);
  });
});
