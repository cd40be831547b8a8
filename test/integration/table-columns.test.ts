import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { copyColumns, readTableColumns, tableColumns, type TableColumnCache } from '../../src/core/table-columns.js';
import { readWireColumns } from '../../src/codecs/catalog.js';
import { LoadError } from '../../src/core/load-error.js';
import { closeTestSchema, openTestSchema } from '../helpers/test-db.js';

/**
 * A table's columns as the catalog reader gives them to each of its users (the column
 * plan, the column-count check, INSERT, the binary wire, Citus routing), on a table with
 * what tells them apart: a dropped column, a generated one, an identity, defaults,
 * domains (over a domain, with their own typmod), arrays, json.
 */
const SCHEMA = 'it_table_columns';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-table-columns-'));
  await client.query(`SET search_path = ${SCHEMA}`);
  await client.query(`CREATE DOMAIN code AS varchar(3);
    CREATE DOMAIN short_code AS code;
    CREATE DOMAIN doc AS jsonb;
    CREATE DOMAIN amount AS numeric(15,2) CHECK (VALUE >= 0);
    CREATE DOMAIN outer_amount AS amount;
    CREATE TABLE t (
      id int GENERATED ALWAYS AS IDENTITY,
      gone text,
      name character(5) NOT NULL,
      price numeric(15,2) DEFAULT 0,
      twice numeric GENERATED ALWAYS AS (price * 2) STORED,
      c code,
      sc short_code,
      d doc,
      a outer_amount,
      tags int[],
      docs jsonb[],
      bits bit(4)
    );
    ALTER TABLE t DROP COLUMN gone;
    CREATE TABLE p (k int NOT NULL, v text) PARTITION BY RANGE (k);
    CREATE TABLE p1 (extra int, k int NOT NULL, v text);
    ALTER TABLE p1 DROP COLUMN extra;
    ALTER TABLE p ATTACH PARTITION p1 FOR VALUES FROM (0) TO (100);`);
});

after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

describe('table columns', () => {
  it('every live column, dropped ones left out, generated ones marked, in order', async () => {
    const cols = await readTableColumns(client, 't', SCHEMA);
    assert.deepEqual(
      cols.map((c) => [c.attnum, c.name, c.type, c.generated]),
      [
        [1, 'id', 'integer', false],
        [3, 'name', 'character(5)', false],
        [4, 'price', 'numeric(15,2)', false],
        [5, 'twice', 'numeric', true],
        [6, 'c', 'code', false],
        [7, 'sc', 'short_code', false],
        [8, 'd', 'doc', false],
        [9, 'a', 'outer_amount', false],
        [10, 'tags', 'integer[]', false],
        [11, 'docs', 'jsonb[]', false],
        [12, 'bits', 'bit(4)', false],
      ],
    );
    const by = new Map(cols.map((c) => [c.name, c]));
    assert.deepEqual([by.get('id')!.identity, by.get('id')!.hasDefault, by.get('price')!.hasDefault, by.get('twice')!.hasDefault, by.get('c')!.hasDefault], [true, false, true, true, false]);
    assert.deepEqual([by.get('name')!.notNull, by.get('c')!.notNull], [true, false]);
  });

  it('COPY without a column list fills the columns copyColumns names', async () => {
    const cols = copyColumns(await readTableColumns(client, 't', SCHEMA));
    // The server's own COPY names them in its header.
    const stream = client.query(copyTo(`COPY ${SCHEMA}.t TO STDOUT (FORMAT csv, HEADER)`));
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const header = Buffer.concat(chunks).toString().split('\n')[0]!;
    assert.equal(cols.map((c) => c.name).join(','), header);
    assert.deepEqual((await tableColumns(client, 't', SCHEMA)).map((c) => c.name), cols.map((c) => c.name));
  });

  it('casts without the modifier, arrays marked', async () => {
    const by = new Map((await readTableColumns(client, 't', SCHEMA)).map((c) => [c.name, c]));
    assert.deepEqual(
      ['name', 'price', 'bits', 'tags', 'c'].map((n) => [by.get(n)!.baseType, by.get(n)!.isArray]),
      [
        ['bpchar', false],
        ['numeric', false],
        ['"bit"', false],
        ['integer[]', true],
        ['code', false],
      ],
    );
  });

  it('the JSON and Parquet plans see a domain over json as json, an array by its element', async () => {
    const by = new Map((await readTableColumns(client, 't', SCHEMA)).map((c) => [c.name, c]));
    assert.deepEqual(
      ['name', 'price', 'c', 'd', 'tags', 'docs'].map((n) => [n, by.get(n)!.kind, by.get(n)!.elementJson, by.get(n)!.typname, by.get(n)!.category]),
      [
        ['name', 'scalar', false, 'bpchar', 'S'],
        ['price', 'scalar', false, 'numeric', 'N'],
        ['c', 'scalar', false, 'varchar', 'S'],
        ['d', 'json', false, 'jsonb', 'U'],
        ['tags', 'array', false, 'int4', 'N'],
        ['docs', 'array', true, 'jsonb', 'U'],
      ],
    );
  });

  it('the binary wire gets the type under every domain, with the typmod that applies', async () => {
    const wire = await readWireColumns(client, { file: 'x', table: 't', schema: SCHEMA, format: 'text' });
    const oid = async (t: string): Promise<number> => Number((await client.query<{ o: string }>('SELECT $1::regtype::oid::int8 AS o', [t])).rows[0]!.o);
    const by = new Map(wire.map((c) => [c.name, c]));
    assert.equal(by.has('twice'), false);
    assert.deepEqual(by.get('c'), { name: 'c', declared: 'code', oid: await oid('varchar'), typname: 'varchar', typmod: 3 + 4 });
    assert.deepEqual(by.get('sc'), { name: 'sc', declared: 'short_code', oid: await oid('varchar'), typname: 'varchar', typmod: 3 + 4 });
    assert.deepEqual(by.get('a'), { name: 'a', declared: 'outer_amount', oid: await oid('numeric'), typname: 'numeric', typmod: ((15 << 16) | 2) + 4 });
    assert.deepEqual(by.get('d'), { name: 'd', declared: 'doc', oid: await oid('jsonb'), typname: 'jsonb', typmod: -1 });
    assert.deepEqual(by.get('name'), { name: 'name', declared: 'character(5)', oid: await oid('bpchar'), typname: 'bpchar', typmod: 5 + 4 });
    const listed = await readWireColumns(client, { file: 'x', table: 't', schema: SCHEMA, format: 'text', columns: ['tags', 'id'] });
    assert.deepEqual(listed.map((c) => [c.name, c.typname]), [['tags', '_int4'], ['id', 'int4']]);
  });

  it('a partitioned table: its own columns, whatever its partitions hold', async () => {
    const cols = await readTableColumns(client, 'p', SCHEMA);
    assert.deepEqual(cols.map((c) => [c.attnum, c.name, c.notNull]), [[1, 'k', true], [2, 'v', false]]);
    assert.deepEqual((await readTableColumns(client, 'p1', SCHEMA)).map((c) => [c.attnum, c.name]), [[2, 'k'], [3, 'v']]);
  });

  it('a table that does not exist: no columns, and an error where COPY needs them', async () => {
    assert.deepEqual(await readTableColumns(client, 'nope', SCHEMA), []);
    await assert.rejects(tableColumns(client, 'nope', SCHEMA), (e: unknown) => e instanceof LoadError && /does not exist or has no columns/.test(e.message));
  });

  it('a cache reads each table once', async () => {
    await client.query('CREATE TABLE once (a int, b text)');
    const cache: TableColumnCache = new Map();
    const first = await readTableColumns(client, 'once', SCHEMA, cache);
    await client.query('ALTER TABLE once ADD COLUMN c int');
    assert.equal(await readTableColumns(client, 'once', SCHEMA, cache), first);
    assert.deepEqual((await readTableColumns(client, 'once', SCHEMA)).map((c) => c.name), ['a', 'b', 'c']);
  });
});
