import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { parquetLayout, tblToParquet, type ParquetWrite } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, tblRecords, testUrl } from '../helpers/test-db.js';

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
});
