import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { citusUrl, closeCitusSchema, openCitusSchema } from '../helpers/citus-db.js';
import { duckRun, sqlString } from '../helpers/duckdb-parquet.js';
import { digest, runCli, tableRecords } from '../helpers/test-db.js';

/*
 * `load --create --distribute-by <column>` on a Citus coordinator: the table made from
 * its file is a distributed table on that column, filled exactly once, with -w N, either
 * wire, INSERT, and parts started at once; a column the file has not got stops the load
 * before anything is created; a dry run creates nothing.
 */

const SCHEMA = 'ct_create';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openCitusSchema(SCHEMA, 'pgsurge-ct-create-'));
});
after(async () => {
  await closeCitusSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', citusUrl(), '--schema', SCHEMA];

/** The table's distribution column and its method (`h`: hash), as pg_dist_partition says; undefined for a table Citus does not hold. */
async function distribution(table: string): Promise<{ column: string; method: string } | undefined> {
  const r = await client.query<{ column: string; method: string }>(
    'SELECT column_to_column_name(logicalrelid, partkey) AS column, partmethod AS method FROM pg_dist_partition WHERE logicalrelid = to_regclass($1)',
    [`${SCHEMA}.${table}`],
  );
  return r.rows[0];
}

/** An NDJSON file of `rows` objects and the records the table must hold. */
async function ndjson(name: string, rows: number): Promise<{ file: string; expected: string }> {
  const file = path.join(dir, name);
  await fs.writeFile(file, Array.from({ length: rows }, (_, i) => `${JSON.stringify({ id: i, note: `n${i}` })}\n`).join(''));
  return { file, expected: digest(Array.from({ length: rows }, (_, i) => `${i}|n${i}`)) };
}

const tableDigest = async (table: string): Promise<string> => digest(await tableRecords(client, `${SCHEMA}.${table}`));

describe('load --create --distribute-by into Citus', () => {
  it('a Parquet file at -w 3: a hash-distributed table on the column, holding every row', async () => {
    const file = path.join(dir, 'pq_dist.parquet');
    await duckRun(`COPY (SELECT i::BIGINT AS k, 'v' || i AS v, (i / 4)::DECIMAL(10,2) AS amount FROM range(4000) t(i)) TO ${sqlString(file)} (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
    const r = await runCli(['load', file, '--create', '--distribute-by', 'k', '-w', '3', '--json', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await distribution('pq_dist'), { column: 'k', method: 'h' });
    assert.equal(await tableDigest('pq_dist'), digest(Array.from({ length: 4000 }, (_, i) => `${i}|v${i}|${(Math.floor((i / 4) * 100) / 100).toFixed(2)}`)));
  });

  for (const [name, flags] of [
    ['text wire, -w 2', ['-w', '2', '--wire', 'text']],
    ['binary wire, -w 2', ['-w', '2', '--wire', 'binary']],
    ['INSERT without the ledger', ['--mode', 'insert', '--no-ledger']],
  ] as const) {
    it(`an NDJSON file, ${name}`, async () => {
      const table = `nd_${name.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}`;
      const { file, expected } = await ndjson(`${table}.ndjson`, 3000);
      const r = await runCli(['load', file, '-t', table, '--create', '--distribute-by', 'id', '--chunk-size', '16KB', ...flags, '--json', ...target()]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await distribution(table), { column: 'id', method: 'h' });
      assert.equal(await tableDigest(table), expected);
    });
  }

  it('two parts started at once create and distribute the table once, and fill it once', async () => {
    const { file, expected } = await ndjson('parts.ndjson', 6000);
    const runs = await Promise.all(['1/2', '2/2'].map((part) => runCli(['load', file, '--create', '--distribute-by', 'id', '--part', part, '-w', '2', '--chunk-size', '16KB', '--json', ...target()])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await distribution('parts'), { column: 'id', method: 'h' });
    assert.equal(await tableDigest('parts'), expected);
  });

  it('a column the file has not got stops the load before anything is created; a dry run creates nothing', async () => {
    const { file } = await ndjson('nocol.ndjson', 10);
    const r = await runCli(['load', file, '--create', '--distribute-by', 'nope', ...target()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--distribute-by nope: .*nocol" would have no column "nope"/);
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.nocol') AS t`)).rows[0].t, null);
    const dry = await runCli(['load', file, '--create', '--distribute-by', 'id', '--dry-run', '--json', ...target()]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal((JSON.parse(dry.stdout.trim().split('\n').at(-1)!) as { total: { loaded: number } }).total.loaded, 10);
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.nocol') AS t`)).rows[0].t, null);
  });
});
