import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { arrayLiteral, bigEndianSigned, dateText, decimalText, float4Text, float8Text, jsonText, putCopyBytes, timestampText, timeText } from '../../../src/input/parquet/parquet-text.js';
import { groupShare, RunCursor, type RowGroupSpan } from '../../../src/input/parquet/parquet-source.js';
import { planParquetColumns } from '../../../src/input/parquet/parquet-columns.js';
import type { FieldShape } from '../../../src/input/parquet/parquet-types.js';
import { WireBuffer } from '../../../src/codecs/field-encoder.js';
import { LoadError } from '../../../src/core/load-error.js';
import { tableColumn } from '../../helpers/table-column.js';

describe('Parquet values as PostgreSQL text, exactly', () => {
  it('decimals from the unscaled integer and the scale', () => {
    const cases: [bigint | number, number, string][] = [
      [12345n, 2, '123.45'],
      [-5, 3, '-0.005'],
      [0, 2, '0.00'],
      [7, 0, '7'],
      [-99999999999999999999999999999999999999n, 10, '-9999999999999999999999999999.9999999999'],
    ];
    for (const [v, scale, text] of cases) assert.equal(decimalText(v, scale), text);
    assert.equal(bigEndianSigned(Uint8Array.of(0xff, 0xfe)), -2);
    assert.equal(bigEndianSigned(Uint8Array.of(0x80, 0, 0, 0, 0, 0, 0, 0, 0)), -(1n << 71n));
    assert.equal(bigEndianSigned(Uint8Array.of(0x01, 0x00)), 256);
  });

  it('dates, times and timestamps from their units, every digit kept', () => {
    assert.equal(dateText(0), '1970-01-01');
    assert.equal(dateText(-1), '1969-12-31');
    assert.equal(dateText(18262), '2020-01-01');
    assert.equal(dateText(-719528), '0001-01-01 BC'); // year 0 is 1 BC
    assert.equal(dateText(2932896), '9999-12-31');
    assert.equal(timeText(45296789012n, 'MICROS'), '12:34:56.789012');
    assert.equal(timeText(0, 'MILLIS'), '00:00:00');
    assert.equal(timeText(86399999999999n, 'NANOS'), '23:59:59.999999999');
    assert.equal(timestampText(1577840523456789n, 'MICROS', false), '2020-01-01 01:02:03.456789');
    assert.equal(timestampText(1577840523456789n, 'MICROS', true), '2020-01-01 01:02:03.456789+00');
    assert.equal(timestampText(-1n, 'MILLIS', false), '1969-12-31 23:59:59.999');
    assert.equal(timestampText(1577840523123456789n, 'NANOS', false), '2020-01-01 01:02:03.123456789');
  });

  it('floats: the shortest text that reads back as the same float32; doubles as JavaScript prints them', () => {
    assert.equal(float4Text(Math.fround(0.1)), '0.1');
    assert.equal(float4Text(Math.fround(1 / 3)), '0.33333334');
    assert.equal(float4Text(Math.fround(3.4028234663852886e38)), '3.4028235e+38');
    assert.equal(float4Text(-0), '-0');
    assert.equal(float4Text(NaN), 'NaN');
    for (const x of [Math.fround(1.5e-45), Math.fround(123456.789), Math.fround(-7.25)]) assert.equal(Math.fround(Number(float4Text(x))), x);
    assert.equal(float8Text(0.1 + 0.2), '0.30000000000000004');
    assert.equal(float8Text(-Infinity), '-Infinity');
    assert.equal(float8Text(-0), '-0');
  });

  it('COPY text escaping of bytes; nested values as JSON and as array literals', () => {
    const out = new WireBuffer(4);
    putCopyBytes(out, Buffer.from('a\tb\\c\nd\re'));
    assert.equal(Buffer.from(out.bytes.subarray(0, out.pos)).toString(), 'a\\tb\\\\c\\nd\\re');
    const int: FieldShape = { shape: 'leaf', name: 'element', leaf: { kind: 'int' }, label: 'INT64' };
    const dec: FieldShape = { shape: 'leaf', name: 'd', leaf: { kind: 'decimal', scale: 2, precision: 9 }, label: 'DECIMAL(9,2)' };
    const str: FieldShape = { shape: 'leaf', name: 's', leaf: { kind: 'string' }, label: 'STRING' };
    const list: FieldShape = { shape: 'list', name: 'l', element: int, label: 'LIST<INT64>' };
    const struct: FieldShape = { shape: 'struct', name: 'st', fields: [dec, str], label: 'STRUCT' };
    assert.equal(jsonText(list, [1n, null, -2n]), '[1,null,-2]');
    assert.equal(jsonText(struct, { d: 150n, s: Buffer.from('x"y') }), '{"d":1.50,"s":"x\\"y"}');
    assert.equal(arrayLiteral(list, [1n, null, 3n], false), '{"1",NULL,"3"}');
    assert.equal(arrayLiteral({ shape: 'list', name: 'll', element: list, label: '' }, [[1n, 2n], [3n, 4n]], false), '{{"1","2"},{"3","4"}}');
    assert.equal(arrayLiteral({ shape: 'list', name: 'ls', element: str, label: '' }, [Buffer.from('a"b\\c')], false), '{"a\\"b\\\\c"}');
  });
});

describe('Parquet runs and column plans', () => {
  const groups: RowGroupSpan[] = [
    { firstRow: 0, rows: 100, compressedBytes: 1000, uncompressedBytes: 4000 },
    { firstRow: 100, rows: 50, compressedBytes: 500, uncompressedBytes: 2000 },
  ];
  it('a run is a row group, less what the ledger covers', () => {
    const all = (covered: { start: number; end: number }[]): [number, number, number][] => {
      const c = new RunCursor(groups, covered);
      const out: [number, number, number][] = [];
      for (let r = c.take(); r; r = c.take()) out.push([r.rowGroup, r.firstRow, r.rows]);
      return out;
    };
    assert.deepEqual(all([]), [[0, 0, 100], [1, 100, 50]]);
    assert.deepEqual(all([{ start: 0, end: 30 }, { start: 60, end: 120 }]), [[0, 30, 30], [1, 120, 30]]);
    assert.deepEqual(all([{ start: 0, end: 150 }]), []);
    assert.equal(groupShare(groups[0]!, 0, 50) + groupShare(groups[0]!, 50, 50), 1000);
  });

  it('fields matched by name; a missing, extra or ill-typed field is one clear error', () => {
    const target = { file: 'x.parquet', table: 't', schema: undefined, format: 'parquet' as const };
    const fields: FieldShape[] = [
      { shape: 'leaf', name: 'ID', leaf: { kind: 'int' }, label: 'INT32' },
      { shape: 'leaf', name: 'when', leaf: { kind: 'date' }, label: 'DATE' },
    ];
    const col = (name: string, type: string, category: string) => tableColumn({ name, type, kind: 'scalar', elementJson: false, typname: type, category, hasDefault: false, generated: false });
    const plan = planParquetColumns(target, [col('id', 'int4', 'N'), col('when', 'date', 'D')], fields, undefined);
    assert.deepEqual(plan.map((p) => [p.column, p.field, p.rendering]), [['id', 'ID', 'text'], ['when', 'when', 'text']]);
    assert.throws(() => planParquetColumns(target, [col('id', 'int4', 'N'), col('when', 'int4', 'N'), col('other', 'text', 'S')], fields, undefined), (e: unknown) => {
      assert.ok(e instanceof LoadError && e.code === 'bad-option');
      assert.match(e.message, /field when is DATE in the file, column when is int4/);
      assert.match(e.message, /column other, the file has no field/);
      return true;
    });
    assert.deepEqual(planParquetColumns(target, [col('id', 'int4', 'N'), col('other', 'text', 'S')], fields, ['id']).map((p) => p.column), ['id']);
  });
});
