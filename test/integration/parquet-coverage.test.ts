import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { duckRows, duckRun, sqlString, tblToParquet, type ParquetWrite } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

/*
 * What the Parquet loads must also show that test/integration/parquet.test.ts does not
 * already: the compressions and page encodings it leaves out (brotli, lz4, DuckDB's V2
 * pages with delta encodings, plain pages only), each against the .tbl load at 1 and 3
 * workers; the types DuckDB cannot write (DECIMAL on BYTE_ARRAY, TIME millis/nanos,
 * TIMESTAMP millis/nanos UTC-adjusted or not, the legacy TIMESTAMP_MILLIS, INT16/UINT16,
 * ENUM into an enum column, JSON into json), written by a second independent writer
 * (hyparquet-writer) and checked against the same values loaded as text; and a dbt3 load
 * whose one Parquet file does not match its table, stopped before anything loads.
 */

const SCHEMA = 'it_parquet_cov';
let client: pg.Client;
let dir: string;
let tblLoad: { rows: number; digest: string };

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

async function tableState(table: string): Promise<{ rows: number; digest: string }> {
  const records = await tableRecords(client, `${SCHEMA}.${table}`);
  return { rows: records.length, digest: digest(records) };
}

function lastTotal(stdout: string): { read: number; loaded: number; rejected: number; skipped: number } {
  return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number } }).total;
}

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-parquet-cov-'));
  // The first 12,000 lineitem rows of SF 0.01, loaded as .tbl: the digest every Parquet load must equal.
  await generateDbt3({ scale: 0.01, outDir: dir, tables: ['lineitem'] });
  const tbl = path.join(dir, 'lineitem.tbl');
  const lines = (await fs.readFile(tbl, 'utf8')).split('\n').slice(0, 12_000);
  await fs.writeFile(tbl, lines.join('\n') + '\n');
  await client.query(createTableSql('lineitem', SCHEMA)!);
  const r = await runCli(['load', tbl, '-t', 'lineitem', '-w', '2', '-q', ...target()]);
  assert.equal(r.code, 0, r.stderr);
  tblLoad = await tableState('lineitem');
  assert.equal(tblLoad.rows, 12_000);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const WRITES: (ParquetWrite & { name: string; encodings: RegExp })[] = [
  { name: 'brotli', compression: 'brotli', rowGroupSize: 3000, encodings: /PLAIN/ },
  { name: 'lz4', compression: 'lz4_raw', rowGroupSize: 5000, encodings: /PLAIN/ },
  { name: 'V2 pages (delta encodings), zstd', compression: 'zstd', rowGroupSize: 4096, options: 'PARQUET_VERSION V2', encodings: /DELTA_BINARY_PACKED.*DELTA_LENGTH_BYTE_ARRAY|DELTA_LENGTH_BYTE_ARRAY.*DELTA_BINARY_PACKED/ },
  { name: 'plain pages only, uncompressed', compression: 'uncompressed', rowGroupSize: 2500, options: 'DICTIONARY_SIZE_LIMIT 1', encodings: /^(PLAIN,)*PLAIN$/ },
];

describe('Parquet from DuckDB with the other compressions and page encodings', () => {
  for (const write of WRITES) {
    it(`${write.name}: the table equals the .tbl load at 1 and 3 workers, every row accounted for`, async () => {
      const file = path.join(dir, `lineitem-${write.compression}-${write.rowGroupSize}.parquet`);
      await tblToParquet('lineitem', path.join(dir, 'lineitem.tbl'), file, write);
      const meta = await duckRows(`SELECT string_agg(DISTINCT encodings, ',' ORDER BY encodings), string_agg(DISTINCT compression, ','), count(DISTINCT row_group_id)::INT FROM parquet_metadata(${sqlString(file)})`);
      assert.match(String(meta[0]![0]), write.encodings, `encodings ${String(meta[0]![0])}`);
      assert.equal(String(meta[0]![1]), write.compression.toUpperCase());
      // DuckDB's row groups are about the size asked for (it cuts them at its vectors of 2,048 rows)
      assert.ok(Number(meta[0]![2]) >= 2, `${Number(meta[0]![2])} row groups`);
      for (const workers of ['1', '3']) {
        const r = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', workers, '--chunk-size', '64KB', '--json', ...target()]);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(await tableState('lineitem'), tblLoad, `-w ${workers}`);
        const total = lastTotal(r.stdout);
        assert.deepEqual([total.read, total.loaded, total.rejected, total.skipped], [12_000, 12_000, 0, 0]);
      }
    });
  }
});

type Schema = ConstructorParameters<typeof ParquetWriter>[0]['schema'];
type Element = Schema[number];

/** A column: its Parquet field, the PostgreSQL column, the values, and each value's text as PostgreSQL reads it. */
interface TypeCase {
  readonly field: Omit<Element, 'name' | 'repetition_type'>;
  readonly pg: string;
  readonly values: readonly unknown[];
  readonly text: (v: never) => string;
}

const ROWS = 5;
const scaled = (scale: number) => (v: bigint): string => {
  const sign = v < 0n ? '-' : '';
  const digits = (v < 0n ? -v : v).toString().padStart(scale + 1, '0');
  return `${sign}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
};
const clock = (fraction: number) => (v: number | bigint): string => {
  const units = BigInt(v);
  const perSecond = 10n ** BigInt(fraction);
  const s = Number(units / perSecond);
  const frac = (units % perSecond).toString().padStart(fraction, '0');
  return `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}.${frac}`;
};
const instant = (fraction: number, zone: string) => (v: number | bigint): string => {
  const units = BigInt(v);
  const perSecond = 10n ** BigInt(fraction);
  let seconds = units / perSecond;
  let frac = units % perSecond;
  if (frac < 0n) {
    frac += perSecond;
    seconds -= 1n;
  }
  const iso = new Date(Number(seconds) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac.toString().padStart(fraction, '0')}${zone}`;
};
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const MS_0001 = -62135596800000;

const TYPES: Record<string, TypeCase> = {
  i16: { field: { type: 'INT32', logical_type: { type: 'INTEGER', bitWidth: 16, isSigned: true } }, pg: 'smallint', values: [-32768, 32767, 0, null, 7], text: (v: number) => String(v) },
  u16: { field: { type: 'INT32', logical_type: { type: 'INTEGER', bitWidth: 16, isSigned: false } }, pg: 'integer', values: [0, 65535, 1, 2, null], text: (v: number) => String(v) },
  u32: { field: { type: 'INT32', converted_type: 'UINT_32' }, pg: 'bigint', values: [0, 4294967295, 2147483648, null, 5], text: (v: number) => String(v) },
  i64: { field: { type: 'INT64', logical_type: { type: 'INTEGER', bitWidth: 64, isSigned: true } }, pg: 'bigint', values: [-(2n ** 63n), 2n ** 63n - 1n, 0n, null, -1n], text: (v: bigint) => String(v) },
  u64: { field: { type: 'INT64', converted_type: 'UINT_64' }, pg: 'numeric', values: [0n, 2n ** 64n - 1n, 2n ** 63n, 1n, null], text: (v: bigint) => String(v) },
  dec_ba: { field: { type: 'BYTE_ARRAY', converted_type: 'DECIMAL', precision: 20, scale: 4, logical_type: { type: 'DECIMAL', precision: 20, scale: 4 } }, pg: 'numeric(20,4)', values: [-12345678901234567890n, 1n, 0n, null, 99999999999999999999n], text: scaled(4) },
  dec_flba: { field: { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 13, converted_type: 'DECIMAL', precision: 30, scale: 6, logical_type: { type: 'DECIMAL', precision: 30, scale: 6 } }, pg: 'numeric(30,6)', values: [-1n, 10n ** 29n, 123456789n, null, -(10n ** 30n - 1n)], text: scaled(6) },
  t_ms: { field: { type: 'INT32', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MILLIS' } }, pg: 'time', values: [0, 86399999, 45296123, null, 1], text: clock(3) },
  t_ns: { field: { type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'NANOS' } }, pg: 'time', values: [0n, 86399999999000n, 45296123456789n, null, 1000n], text: clock(9) },
  ts_ms: { field: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' } }, pg: 'timestamp', values: [0n, -1n, 1700000000123n, null, BigInt(MS_0001)], text: instant(3, '') },
  tz_ms: { field: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } }, pg: 'timestamptz', values: [0n, -1n, 1700000000123n, null, BigInt(MS_0001)], text: instant(3, '+00') },
  ts_ns: { field: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' } }, pg: 'timestamp', values: [0n, 1700000000123456789n, -1000n, null, 1n], text: instant(9, '') },
  tz_ns: { field: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } }, pg: 'timestamptz', values: [0n, 1700000000123456789n, -1000n, null, 1n], text: instant(9, '+00') },
  tz_us: { field: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } }, pg: 'timestamptz', values: [0n, 1700000000123456n, -1n, null, BigInt(MS_0001) * 1000n], text: instant(6, '+00') },
  legacy_ms: { field: { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' }, pg: 'timestamptz', values: [0n, 1700000000123n, -86400000n, null, 1n], text: instant(3, '+00') },
  dt: { field: { type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }, pg: 'date', values: [0, -719162, 10957, null, 2932896], text: (v: number) => new Date(v * 86_400_000).toISOString().slice(0, 10) },
  f32: { field: { type: 'FLOAT' }, pg: 'real', values: [1.1, NaN, -Infinity, null, -0], text: (v: number) => (Object.is(v, -0) ? '-0' : v === 1.1 ? '1.1' : String(v)) },
  f64: { field: { type: 'DOUBLE' }, pg: 'double precision', values: [0.1, 1e308, -5e-324, null, Infinity], text: (v: number) => String(v) },
  b: { field: { type: 'BOOLEAN' }, pg: 'boolean', values: [true, false, null, true, false], text: (v: boolean) => (v ? 't' : 'f') },
  s: { field: { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }, pg: 'varchar(20)', values: ['tab\there', 'new\nline', 'back\\slash', null, 'é😀'], text: (v: string) => v },
  en: { field: { type: 'BYTE_ARRAY', converted_type: 'ENUM', logical_type: { type: 'ENUM' } }, pg: 'mood', values: [utf8('happy'), utf8('sad'), utf8('happy'), utf8('sad'), null], text: (v: Uint8Array) => new TextDecoder().decode(v) },
  js: { field: { type: 'BYTE_ARRAY', converted_type: 'JSON', logical_type: { type: 'JSON' } }, pg: 'json', values: [{ a: 1 }, [1, 2], 'str', null, { k: 'v"q\\' }], text: (v: unknown) => JSON.stringify(v) },
  uu: { field: { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } }, pg: 'uuid', values: ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0123abcd-4567-89ef-0123-456789abcdef', null, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'], text: (v: string) => v },
  by: { field: { type: 'BYTE_ARRAY' }, pg: 'bytea', values: [new Uint8Array([0, 255, 92]), new Uint8Array([]), new Uint8Array([10, 9]), null, utf8('abc')], text: (v: Uint8Array) => `\\x${Buffer.from(v).toString('hex')}` },
};

/** A COPY text field: backslash, tab, newline and carriage return escaped; NULL as \N. */
function copyField(text: string | null): string {
  if (text === null) return '\\N';
  return text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

describe('Parquet types from a second writer (hyparquet-writer), against the same values loaded as text', () => {
  it('INT16/UINT16/UINT32/INT64/UINT64, DECIMAL on BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY, TIME millis/nanos, TIMESTAMP millis/micros/nanos UTC-adjusted or not, legacy TIMESTAMP_MILLIS, DATE, FLOAT, DOUBLE, BOOLEAN, STRING, ENUM, JSON, UUID, BYTE_ARRAY', async () => {
    const names = Object.keys(TYPES);
    await client.query(`CREATE TYPE ${SCHEMA}.mood AS ENUM ('happy', 'sad')`);
    const columns = names.map((n) => `${n} ${TYPES[n]!.pg === 'mood' ? `${SCHEMA}.mood` : TYPES[n]!.pg}`).join(', ');
    await client.query(`CREATE TABLE ${SCHEMA}.types_p (${columns}); CREATE TABLE ${SCHEMA}.types_t (${columns})`);

    const file = path.join(dir, 'types.parquet');
    const sink = new ByteWriter();
    const schema: Schema = [{ name: 'schema', num_children: names.length }, ...names.map((name): Element => ({ name, repetition_type: 'OPTIONAL', ...TYPES[name]!.field }))];
    const writer = new ParquetWriter({ writer: sink, schema, codec: 'SNAPPY' });
    // two row groups: 3 rows and 2
    void writer.write({ columnData: names.map((name) => ({ name, data: [...TYPES[name]!.values] })), rowGroupSize: 3 });
    void writer.finish();
    await fs.writeFile(file, sink.getBytes());

    const text = path.join(dir, 'types.txt');
    const lines: string[] = [];
    for (let row = 0; row < ROWS; row++) {
      lines.push(names.map((name) => {
        const c = TYPES[name]!;
        const v = c.values[row];
        return copyField(v === null ? null : c.text(v as never));
      }).join('\t'));
    }
    await fs.writeFile(text, lines.join('\n') + '\n');

    const p = await runCli(['load', file, '-t', 'types_p', '--json', ...target()]);
    assert.equal(p.code, 0, p.stderr);
    const total = lastTotal(p.stdout);
    assert.deepEqual([total.read, total.loaded, total.rejected, total.skipped], [ROWS, ROWS, 0, 0]);
    const t = await runCli(['load', text, '-t', 'types_t', '-f', 'text', '-q', ...target()]);
    assert.equal(t.code, 0, t.stderr);
    const a = await tableRecords(client, `${SCHEMA}.types_p`, '(FORMAT text)');
    const b = await tableRecords(client, `${SCHEMA}.types_t`, '(FORMAT text)');
    assert.equal(b.length, ROWS);
    // column by column, so a failure names the type
    const cells = (records: string[]): string[][] => [...records].sort().map((r) => r.split('\t'));
    const [pa, tb] = [cells(a), cells(b)];
    names.forEach((name, i) => {
      assert.deepEqual(pa.map((r) => r[i]), tb.map((r) => r[i]), `${name} (${TYPES[name]!.pg})`);
    });
    assert.deepEqual([...a].sort(), [...b].sort());
  });
});

describe('dbt3 load of a Parquet folder with one file that does not match its table', () => {
  it('stops before anything loads (exit 2), naming the table and the field', async () => {
    const folder = path.join(dir, 'dbt3-bad');
    await generateDbt3({ scale: 0.01, outDir: folder, tables: ['region', 'nation', 'supplier'], format: 'parquet' });
    // nation as someone else wrote it: n_regionkey as a DATE, and a field the table lacks
    await duckRun(`COPY (SELECT i::INTEGER n_nationkey, 'N' || i n_name, DATE '2020-01-01' n_regionkey, 'c' n_comment, 1 n_extra FROM range(25) r(i))
      TO ${sqlString(path.join(folder, 'nation.parquet'))} (FORMAT parquet)`);
    const schema = `${SCHEMA}_dbt3`;
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    const r = await runCli(['dbt3', 'load', folder, '--db', testUrl(), '--schema', schema, '--no-keys', '-w', '2']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /nation/);
    assert.match(r.stderr, /n_regionkey/);
    assert.match(r.stderr, /n_extra/);
    // nothing loaded: no table of the schema has a row (region and supplier matched, yet were not loaded)
    const tables = await client.query<{ t: string }>(`SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = $1`, [schema]);
    for (const { t } of tables.rows) {
      assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n, 0, t);
    }
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
  });
});
