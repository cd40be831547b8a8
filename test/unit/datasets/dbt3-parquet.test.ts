import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { DBT3_COLUMNS, DBT3_TABLES } from '../../../src/datasets/dbt3-schema.js';
import { daysFromCivil, RowGroupBuilder, tblColumnKind, tblColumns } from '../../../src/datasets/dbt3/tbl-columns.js';
import { Dbt3ParquetFile, parquetSchema } from '../../../src/datasets/dbt3/parquet-out.js';
import { dbt3FileName, generateDbt3 } from '../../../src/datasets/dbt3/generate.js';
import { removeDir, tempDir } from './dbt3-fixture.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await removeDir(d);
});

describe('DBT-3 columns as Parquet types', () => {
  it('gives every column of the schema a type: INT32/INT64 keys, DECIMAL(15,2) on INT64, DATE, STRING, all REQUIRED', () => {
    for (const table of DBT3_TABLES) {
      const schema = parquetSchema(tblColumns(table));
      assert.equal(schema[0]!.num_children, DBT3_COLUMNS[table].length);
      DBT3_COLUMNS[table].forEach(([name, pg], i) => {
        const field = schema[i + 1]!;
        assert.equal(field.name, name);
        assert.equal(field.repetition_type, 'REQUIRED');
        const want =
          pg === 'integer' ? ['INT32', undefined]
          : pg === 'bigint' ? ['INT64', undefined]
          : pg === 'date' ? ['INT32', 'DATE']
          : pg.startsWith('numeric') ? ['INT64', 'DECIMAL']
          : ['BYTE_ARRAY', 'UTF8'];
        assert.deepEqual([field.type, field.converted_type], want, `${table}.${name} ${pg}`);
        if (pg === 'numeric(15,2)') assert.deepEqual([field.precision, field.scale], [15, 2]);
      });
    }
    assert.throws(() => tblColumnKind('numeric(38,2)'), /No Parquet type for the DBT-3 column type numeric\(38,2\)/);
    assert.throws(() => tblColumnKind('text'), /No Parquet type/);
  });

  it('counts days from 1970-01-01 as the proleptic Gregorian calendar does', () => {
    for (const iso of ['1970-01-01', '1992-01-01', '1998-12-31', '2000-02-29', '1900-03-01', '0001-01-01', '1969-12-31']) {
      const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
      const date = new Date(0);
      date.setUTCFullYear(y, m - 1, d);
      assert.equal(daysFromCivil(y, m, d), Math.round(date.getTime() / 86_400_000), iso);
    }
  });
});

describe('RowGroupBuilder', () => {
  const columns = tblColumns('orders');
  const lines = [
    '1|370|O|172799.49|1996-01-02|5-LOW|Clerk#000000951|0|nstructions sleep furiously among |',
    '2|781|O|-38426.09|1996-12-01|1-URGENT|Clerk#000000880|0|foxes. é|',
    '3|1234|F|5.1|1993-10-14|5-LOW|Clerk#000000955|0||',
  ];
  const block = Buffer.from(lines.join('\n') + '\n', 'utf8');

  it('parses typed values, and a group that fills stops mid-block where the next one starts', () => {
    const group = new RowGroupBuilder(columns, 2);
    const stop = group.fill(block, 0);
    assert.ok(group.full);
    assert.equal(stop, Buffer.byteLength(lines[0]! + '\n' + lines[1]! + '\n'));
    const first = group.take();
    assert.equal(first.rows, 2);
    assert.deepEqual([...(first.columns[0] as BigInt64Array)], [1n, 2n]);
    assert.deepEqual([...(first.columns[1] as Int32Array)], [370, 781]);
    assert.deepEqual([...(first.columns[3] as BigInt64Array)], [17279949n, -3842609n]);
    assert.deepEqual([...(first.columns[4] as Int32Array)], [daysFromCivil(1996, 1, 2), daysFromCivil(1996, 12, 1)]);
    assert.deepEqual((first.columns[8] as Uint8Array[]).map((b) => Buffer.from(b).toString('utf8')), ['nstructions sleep furiously among ', 'foxes. é']);
    assert.equal(group.rows, 0);
    assert.equal(group.fill(block, stop), block.length);
    const rest = group.take();
    assert.equal(rest.rows, 1);
    // one fraction digit is padded to the scale; an empty string is a value
    assert.deepEqual([...(rest.columns[3] as BigInt64Array)], [510n]);
    assert.deepEqual((rest.columns[8] as Uint8Array[]).map((b) => b.length), [0]);
  });

  it('refuses lines with too few or too many fields, and values that are not their type', () => {
    const bad = (line: string): (() => void) => () => new RowGroupBuilder(columns, 10).fill(Buffer.from(line + '\n'), 0);
    assert.throws(bad('1|370|O|1.00|1996-01-02|'), /fewer than 9 fields \(column o_orderpriority is missing\)/);
    assert.throws(bad(lines[0]! + 'extra|'), /more than 9 fields/);
    assert.throws(bad(lines[0]!.replace('370', '3x0')), /Cannot read 3x0 as the int32 column o_custkey/);
    assert.throws(bad(lines[0]!.replace('172799.49', '1.234')), /Cannot read 1\.234 as the decimal column o_totalprice/);
    assert.throws(bad(lines[0]!.replace('1996-01-02', '1996/01/02')), /Cannot read 1996\/01\/02 as the date column o_orderdate/);
  });
});

describe('dbt3 gen --format parquet', () => {
  it('writes the rows of the .tbl file, in row groups of the size asked for, read back by hyparquet', async () => {
    const dir = await tempDir('pq-unit');
    dirs.push(dir);
    await generateDbt3({ scale: 0.01, outDir: dir, tables: ['orders', 'nation'] });
    const { files } = await generateDbt3({ scale: 0.01, outDir: dir, tables: ['orders', 'nation'], format: 'parquet', parquet: { rowGroupRows: 4000, compression: 'gzip' } });
    assert.deepEqual(files.map((f) => path.basename(f.path)), ['nation.parquet', 'orders.parquet']);
    for (const table of ['nation', 'orders'] as const) {
      const tbl = (await readFile(path.join(dir, `${table}.tbl`), 'utf8')).split('\n').filter((l) => l !== '');
      const file = await asyncBufferFromFile(path.join(dir, `${table}.parquet`));
      const meta = await parquetMetadataAsync(file);
      assert.equal(Number(meta.num_rows), tbl.length);
      assert.equal(files.find((f) => f.table === table)!.rows, tbl.length);
      assert.deepEqual(meta.row_groups.map((g) => Number(g.num_rows)), table === 'orders' ? [4000, 4000, 4000, 3000] : [25]);
      assert.ok(meta.row_groups.every((g) => g.columns.every((c) => c.meta_data?.codec === 'GZIP')));
      const rows = await parquetReadObjects({ file, metadata: meta, compressors });
      // back to .tbl text: decimals with two places, dates as YYYY-MM-DD
      const text = rows.map((r) =>
        DBT3_COLUMNS[table].map(([name, pg]) => {
          const v = r[name] as unknown;
          if (v instanceof Date) return v.toISOString().slice(0, 10);
          if (pg.startsWith('numeric')) return (v as number).toFixed(2);
          return String(v);
        }).join('|') + '|',
      );
      assert.deepEqual(text, tbl, table);
    }
  });

  it('names split parts <table>.<k>.parquet; an empty part is a valid file of no rows', async () => {
    assert.equal(dbt3FileName('lineitem', 4, 3, 'parquet'), 'lineitem.3.parquet');
    assert.equal(dbt3FileName('lineitem', 1, 1, 'parquet'), 'lineitem.parquet');
    assert.equal(dbt3FileName('lineitem', 4, 3), 'lineitem.tbl.3');
    const dir = await tempDir('pq-unit-empty');
    dirs.push(dir);
    const empty = new Dbt3ParquetFile('region', path.join(dir, 'region.parquet'));
    empty.close();
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(path.join(dir, 'region.parquet')));
    assert.equal(Number(meta.num_rows), 0);
  });
});
