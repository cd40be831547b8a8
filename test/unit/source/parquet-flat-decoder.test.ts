import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { duckRun, sqlString } from '../../helpers/duckdb-parquet.js';
import { parquetFields, planParquetColumns, type ParquetColumn } from '../../../src/input/parquet/parquet-columns.js';
import { openParquet } from '../../../src/input/parquet/parquet-file.js';
import { binaryTupleRows, decodeSlice, decodeThreadsByDefault, fieldWriter, flatDecodeHere, readSlice, rowGroupSpans, SliceRows, tuplePlan } from '../../../src/input/parquet/parquet-source.js';
import { compileFlatTuples, writeFlatTuples } from '../../../src/input/parquet/flat-tuples.js';
import { wasmFlatTuples } from '../../../src/input/parquet/wasm-tuples.js';
import { KernelPool, ParquetKernels } from '../../../src/input/parquet/parquet-kernels.js';
import { DecodeThread } from '../../../src/input/parquet/decode-thread.js';
import type { WireColumn } from '../../../src/codecs/catalog.js';
import { BufferPool, dropColumn, ownedBuffers, rawValueOf, readHybrid, type FlatColumn } from '../../../src/input/parquet/flat-decoder.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { binaryCell, putDecimal, putInteger } from '../../../src/input/parquet/parquet-cells.js';
import { decimalText, type RawValue } from '../../../src/input/parquet/parquet-text.js';
import type { DecodedColumn } from '../../../src/input/parquet/parquet-cells.js';
import { WireBuffer } from '../../../src/codecs/field-encoder.js';
import { hybridStream as stream } from '../../helpers/hybrid-stream.js';
import { snappyCompress } from 'hyparquet-writer/src/snappy.js';
import { writeNumericFromDecimal, writeScaledNumeric } from '../../../src/codecs/index.js';

/*
 * The flat decoder against hyparquet's general path, on files DuckDB writes: every value
 * of every row the same (physical values, annotations off), with dictionary and plain
 * pages, NULLs, several row groups, each compression, data pages v1 and v2.
 */

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-unit-flat-'));
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

// 5,000 rows: low-cardinality columns get dictionary pages, the others plain ones; every tenth value NULL in the nullable ones.
const VALUES = `SELECT i::BIGINT id, (i % 7)::INTEGER small, CASE WHEN i % 10 = 3 THEN NULL ELSE i * 1000003 END::BIGINT big,
    (i % 300 - 150)::SMALLINT tiny, ((i - 2500) * 1.25)::DECIMAL(9,2) d4, ((i - 2500) * 123456789.01)::DECIMAL(18,2) d8,
    ((i - 2500) * 1234567890123.0123456789)::DECIMAL(38,10) d16, date '1992-01-01' + (i % 2500)::INT dt,
    CASE WHEN i % 10 = 5 THEN NULL ELSE (i / 3)::FLOAT END f, (i / 7)::DOUBLE db, i % 3 = 0 b,
    CASE WHEN i % 10 = 7 THEN NULL ELSE 'comment ' || i || repeat('x', i % 40) END s, ['RAIL', 'SHIP', 'AIR'][i % 3 + 1] ship_mode,
    CASE WHEN i % 11 = 0 THEN NULL ELSE ('{"k": ' || i || '}')::JSON END j, md5(i::VARCHAR)::UUID u,
    timestamp '2020-01-01' + to_microseconds(i * 1000003) ts
  FROM range(5000) r(i)`;

// `flat`: column chunks of each slice the flat decoder reads at least (V2 writes DELTA_* for many, left to hyparquet).
const FILES: { name: string; options: string; flat?: number }[] = [
  { name: 'snappy, row groups of 1,024', options: 'COMPRESSION snappy, ROW_GROUP_SIZE 1024' },
  { name: 'zstd, one row group', options: 'COMPRESSION zstd, ROW_GROUP_SIZE 100000' },
  { name: 'gzip', options: 'COMPRESSION gzip, ROW_GROUP_SIZE 2048' },
  { name: 'uncompressed', options: 'COMPRESSION uncompressed, ROW_GROUP_SIZE 3000' },
  { name: 'data pages v2 (DuckDB PARQUET_VERSION V2)', options: 'COMPRESSION snappy, ROW_GROUP_SIZE 2048, PARQUET_VERSION V2', flat: 4 },
];

const valueAt = (d: DecodedColumn, r: number): RawValue => {
  if ('values' in d) return d.values[r] ?? null;
  const i = d.flat.index[d.base + r]!;
  return i < 0 ? null : rawValueOf(d.flat, i);
};

describe('the flat Parquet decoder reads what hyparquet reads', () => {
  for (const f of FILES) {
    it(`${f.name}: every value of every row group, and the slice of a row group from a row on`, async () => {
      const file = path.join(dir, `${f.name.replace(/\W+/g, '_')}.parquet`);
      await duckRun(`COPY (${VALUES}) TO ${sqlString(file)} (FORMAT parquet, ${f.options})`);
      const pf = await openParquet(file);
      const thread = new DecodeThread(file);
      try {
        const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
        const groups = rowGroupSpans(pf.metadata);
        let flatColumns = 0;
        for (const [rowGroup, g] of groups.entries()) {
          // The whole group, then its rows from the middle on (a resumed run).
          for (const at of [0, Math.floor(g.rows / 2)]) {
            const slice = { rowGroup, firstRow: g.firstRow + at, rows: g.rows - at, bytes: 0 };
            const ours = await decodeSlice(pf, slice, columns, g.firstRow);
            const theirs = await readSlice(pf, slice, columns);
            // Decoded in a decoding thread (as a load does), handed over: the same columns.
            const threaded = await decodeSlice(pf, slice, columns, g.firstRow, thread.decode);
            // Without the WebAssembly kernels (hyparquet's decompressors, the JavaScript hybrid reader).
            process.env.PGSURGE_PARQUET_WASM = '0';
            const withoutWasm = await decodeSlice(pf, slice, columns, g.firstRow).finally(() => delete process.env.PGSURGE_PARQUET_WASM);
            for (const [c, column] of columns.entries()) {
              if ('flat' in ours[c]!) flatColumns++;
              assert.equal('flat' in threaded[c]!, 'flat' in ours[c]!, `${column.field}: decoded the same way in the thread`);
              for (let r = 0; r < slice.rows; r++) {
                assert.deepEqual(valueAt(ours[c]!, r), theirs[c]![r] ?? null, `${column.field}, row group ${rowGroup}, row ${slice.firstRow + r + 1}`);
                assert.deepEqual(valueAt(threaded[c]!, r), theirs[c]![r] ?? null, `${column.field}, row group ${rowGroup}, row ${slice.firstRow + r + 1}, decoded in the thread`);
                assert.deepEqual(valueAt(withoutWasm[c]!, r), theirs[c]![r] ?? null, `${column.field}, row group ${rowGroup}, row ${slice.firstRow + r + 1}, without WebAssembly`);
              }
            }
          }
        }
        // The dictionary-encoded and plain columns at least went through the flat decoder.
        assert.ok(flatColumns >= groups.length * 2 * (f.flat ?? 14), `${flatColumns} flat column chunks`);
      } finally {
        await thread.close();
        await pf.close();
      }
    });
  }

  it('arrays decoded into again (a pool, a thread given them back), filled with garbage first: every value the same as hyparquet reads', async () => {
    const file = path.join(dir, 'recycled.parquet');
    await duckRun(`COPY (${VALUES}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1024)`);
    const pf = await openParquet(file);
    const thread = new DecodeThread(file);
    // Every size pooled: these row groups' arrays are a few KB.
    const pool = new BufferPool(64 * 1024 * 1024, 1);
    const here = flatDecodeHere(pf, pool);
    try {
      const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
      const groups = rowGroupSpans(pf.metadata);
      let reused = 0;
      // Twice over the groups: the second pass decodes into the first pass's arrays.
      for (const [k, g] of [...groups.entries(), ...groups.entries()].entries()) {
        const [rowGroup] = g;
        const slice = { rowGroup, firstRow: g[1].firstRow, rows: g[1].rows, bytes: 0 };
        const theirs = await readSlice(pf, slice, columns);
        for (const decode of [here, thread.decode]) {
          const before = pool.size;
          const ours = await decodeSlice(pf, slice, columns, g[1].firstRow, decode);
          if (decode === here && k >= groups.length) reused += before - pool.size;
          for (const [c, column] of columns.entries())
            for (let r = 0; r < slice.rows; r++) assert.deepEqual(valueAt(ours[c]!, r), theirs[c]![r] ?? null, `${column.field}, row group ${rowGroup}, row ${slice.firstRow + r + 1}${decode === here ? '' : ', in the thread'}`);
          const buffers = ours.flatMap((d) => ('flat' in d ? ownedBuffers(d.flat) : []));
          for (const b of buffers) new Uint8Array(b).fill(0xab);
          if (decode === here) pool.give(buffers);
          else thread.recycle(buffers);
        }
      }
      assert.ok(reused > 0, 'the second pass took arrays from the pool');
    } finally {
      await thread.close();
      await pf.close();
    }
  });

  it('columns decoded into the kernels\' memory (KernelPool), filled with garbage and given back, decoded into again: every value the same as hyparquet reads', async () => {
    const file = path.join(dir, 'kernel-pool.parquet');
    await duckRun(`COPY (${VALUES}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1024)`);
    const pf = await openParquet(file);
    const kernels = ParquetKernels.get()!;
    const held = kernels.held;
    const pool = new KernelPool(kernels);
    const here = flatDecodeHere(pf, pool);
    try {
      const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
      const groups = rowGroupSpans(pf.metadata);
      let inMemory = 0;
      for (const [rowGroup, g] of [...groups.entries(), ...groups.entries()]) {
        const slice = { rowGroup, firstRow: g.firstRow, rows: g.rows, bytes: 0 };
        const theirs = await readSlice(pf, slice, columns);
        const ours = await decodeSlice(pf, slice, columns, g.firstRow, here);
        for (const [c, column] of columns.entries())
          for (let r = 0; r < slice.rows; r++) assert.deepEqual(valueAt(ours[c]!, r), theirs[c]![r] ?? null, `${column.field}, row group ${rowGroup}, row ${slice.firstRow + r + 1}`);
        for (const d of ours) {
          if (!('flat' in d)) continue;
          assert.ok(kernels.owns(d.flat.index) && kernels.owns(d.flat.bytes), `${d.flat.type}: in the kernels' memory`);
          inMemory++;
          for (const v of [d.flat.index, d.flat.bytes, d.flat.span]) if (v !== undefined) new Uint8Array(v.buffer, v.byteOffset, v.byteLength).fill(0xab);
          dropColumn(pool, d.flat);
        }
      }
      assert.ok(inMemory >= groups.length * 2 * 14, `${inMemory} columns decoded into the memory`);
      assert.equal(pool.size, 0, 'every array given back');
      assert.equal(kernels.held, held, 'and their regions free again');
      const extra = pool.bytes(64);
      pool.drop(extra);
      assert.throws(() => pool.drop(extra), /internal: an array of the Parquet kernels' memory given back twice/);
      pool.drop(new Uint8Array(8)); // a plain array (as when the memory is full): left to the collector
    } finally {
      await pf.close();
    }
  });

  it('a kernels\' memory that cannot grow: columns in plain arrays, tuples by the JavaScript, the same values and bytes', async () => {
    const file = path.join(dir, 'kernel-full.parquet');
    await duckRun(`COPY (${VALUES}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1024)`);
    const pf = await openParquet(file);
    // 24 pages of 64 KB (16 to start): room for a few columns of a row group, not all.
    const small = ParquetKernels.make(24);
    const pool = new KernelPool(small);
    try {
      const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
      const g = rowGroupSpans(pf.metadata)[0]!;
      const slice = { rowGroup: 0, firstRow: 0, rows: g.rows, bytes: 0 };
      const held: DecodedColumn[][] = [];
      let plain = 0;
      // Two row groups' worth held at once: the memory fills, later arrays are plain ones.
      for (let k = 0; k < 4; k++) {
        const ours = await decodeSlice(pf, slice, columns, 0, flatDecodeHere(pf, pool));
        const theirs = await readSlice(pf, slice, columns);
        for (const [c, column] of columns.entries()) for (let r = 0; r < slice.rows; r++) assert.deepEqual(valueAt(ours[c]!, r), theirs[c]![r] ?? null, `${column.field}, row ${r + 1}, pass ${k}`);
        plain += ours.filter((d) => 'flat' in d && !small.owns(d.flat.index)).length;
        held.push(ours);
      }
      assert.ok(plain > 0, 'some arrays could not be regions');
      // Tuples: the kernels cannot take the plan in (undefined: the JavaScript's), or write what the JavaScript writes.
      const wire: WireColumn[] = columns.map((c) => ({ name: c.column, declared: INLINE[c.field] ?? 'text', typname: INLINE[c.field] ?? 'text', typmod: -1, oid: 0 }));
      const inline = columns.filter((c) => INLINE[c.field] !== undefined);
      const decoded = held[3]!.filter((_, i) => INLINE[columns[i]!.field] !== undefined);
      const plan = tuplePlan(decoded, inline, wire.filter((w) => INLINE[w.name] !== undefined));
      assert.ok(typeof plan !== 'string', String(plan));
      const wasm = wasmFlatTuples(plan.columns, plan.room, compileFlatTuples(plan.columns, plan.room), small);
      const a = new WireBuffer(64);
      const b = new WireBuffer(64);
      assert.deepEqual(wasm?.write(0, slice.rows, a, 1 << 30) ?? writeFlatTuples(plan.columns, plan.room, 0, slice.rows, a, 1 << 30), writeFlatTuples(plan.columns, plan.room, 0, slice.rows, b, 1 << 30));
      assert.ok(Buffer.from(a.bytes.subarray(0, a.pos)).equals(Buffer.from(b.bytes.subarray(0, b.pos))));
      wasm?.release();
      plan.release();
      for (const ours of held) for (const d of ours) if ('flat' in d) dropColumn(pool, d.flat);
      assert.equal(pool.size, 0);
    } finally {
      await pf.close();
    }
  });

  it('two table columns from one field ("A" and a): their rows give the column back once; a row group whose second column fails gives the first back', async () => {
    const one = path.join(dir, 'one-field.parquet');
    await duckRun(`COPY (SELECT i::INTEGER a FROM range(20000) r(i)) TO ${sqlString(one)} (FORMAT parquet, COMPRESSION snappy)`);
    const file = path.join(dir, 'two-fields.parquet');
    await duckRun(`COPY (SELECT i::INTEGER a, 'x' || i b FROM range(20000) r(i)) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION snappy)`);
    const pone = await openParquet(one);
    const pf = await openParquet(file);
    const kernels = ParquetKernels.get()!;
    const held = kernels.held;
    try {
      const pool = new KernelPool(kernels);
      const col = (name: string) => ({ name, type: 'int4', kind: 'scalar', elementJson: false, typname: 'int4', category: 'N', hasDefault: false, generated: false }) as const;
      const columns = planParquetColumns({ file: one, table: 't', schema: undefined, format: 'parquet' } as never, [col('A'), col('a')] as never, parquetFields(pone.metadata, one), undefined);
      assert.deepEqual(columns.map((c) => [c.column, c.field]), [['A', 'a'], ['a', 'a']]);
      const g = rowGroupSpans(pone.metadata)[0]!;
      const decoded = await decodeSlice(pone, { rowGroup: 0, firstRow: 0, rows: g.rows, bytes: 0 }, columns, 0, flatDecodeHere(pone, pool));
      const rows = new SliceRows(decoded, columns, columns.map(fieldWriter), (cs) => cs.forEach((c) => dropColumn(pool, c)));
      rows.hold(1);
      rows.release();
      assert.equal(pool.size, 0, 'the column given back once');
      // The second column's chunk spoiled as it is read: the decode fails, the first column's arrays go back.
      let reads = 0;
      const readInto = pf.readInto.bind(pf);
      pf.readInto = async (at: number, bytes: Uint8Array) => {
        await readInto(at, bytes);
        if (++reads === 2) bytes.fill(0xff, 0, Math.min(64, bytes.length));
      };
      await assert.rejects(flatDecodeHere(pf, pool)(0, ['a', 'b']));
      assert.equal(reads, 2);
      assert.equal(pool.size, 0, 'nothing kept by the failed decode');
      assert.equal(kernels.held, held, 'every region free again');
    } finally {
      await pone.close();
      await pf.close();
    }
  });

  it('a buffer pool: the smallest free buffer that fits and is at most twice the size; small, detached, doubled and past-the-cap buffers are passed over', () => {
    const pool = new BufferPool(1024 * 1024);
    const a = new ArrayBuffer(100_000);
    const b = new ArrayBuffer(300_000);
    const c = new ArrayBuffer(500_000);
    pool.give([b, a, c, a, new ArrayBuffer(1000)]);
    assert.equal(pool.size, 3);
    assert.equal(pool.take(90_000), a);
    assert.notEqual(pool.take(90_000), b, 'more than twice the size asked');
    assert.equal(pool.take(260_000), b);
    assert.equal(pool.take(260_000), c);
    assert.equal(pool.size, 0);
    const moved = new ArrayBuffer(200_000);
    structuredClone(moved, { transfer: [moved] });
    pool.give([moved, new ArrayBuffer(600_000), new ArrayBuffer(600_000)]);
    assert.equal(pool.size, 1, 'a detached buffer, and one past the cap of 1 MB, are not kept');
  });

  it('Parquet rows held by their chunks: the arrays go back once, when the last chunk lets go, and the rows are not read after', async () => {
    const file = path.join(dir, 'held.parquet');
    await duckRun(`COPY (${VALUES}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1024)`);
    const pf = await openParquet(file);
    try {
      const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
      const g = rowGroupSpans(pf.metadata)[0]!;
      const decoded = await decodeSlice(pf, { rowGroup: 0, firstRow: 0, rows: g.rows, bytes: 0 }, columns, 0);
      const given: FlatColumn[][] = [];
      const rows = new SliceRows(decoded, columns, columns.map(fieldWriter), (b) => given.push(b));
      rows.hold(3);
      rows.release();
      rows.release();
      assert.equal(given.length, 0, 'one chunk still holds the rows');
      assert.ok(rows.textBytesPerRow(10) > 0);
      rows.release();
      assert.equal(given.length, 1);
      assert.deepEqual(given[0], decoded.flatMap((d) => ('flat' in d ? [d.flat] : [])), 'every flat column, once');
      assert.throws(() => rows.text, /read after every chunk of them was released/);
      assert.throws(() => rows.binary([], 0, 1), /read after every chunk of them was released/);
      assert.throws(() => rows.release(), /released more often than held/);
    } finally {
      await pf.close();
    }
  });

  it('decoding threads by default when a core is left beyond one per worker and one for the loop', () => {
    assert.equal(decodeThreadsByDefault(1, 2), false);
    assert.equal(decodeThreadsByDefault(1, 3), true);
    assert.equal(decodeThreadsByDefault(2, 2), false);
    assert.equal(decodeThreadsByDefault(3, 8), true);
    assert.equal(decodeThreadsByDefault(7, 8), false);
  });

  it('a decoding thread: its failure reaches the reader (the file gone before the thread opened it), and it ends', async () => {
    const file = path.join(dir, 'gone.parquet');
    await duckRun(`COPY (${VALUES}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1024)`);
    const pf = await openParquet(file);
    const thread = new DecodeThread(file);
    try {
      await fs.rm(file);
      const fields = parquetFields(pf.metadata, file).map((s) => s.name);
      await assert.rejects(thread.decode(0, fields), (e: Error) => e.message.includes('ENOENT') && e.message.includes('gone.parquet'));
    } finally {
      await thread.close();
      await pf.close();
    }
    await assert.rejects(thread.decode(0, ['id']), /closed/);
  });
});

describe('Parquet values written without text', () => {
  it('numeric from an unscaled integer: the same bytes as writeNumericFromDecimal (numeric_send)', () => {
    const values = [0, 1, -1, 9, 10, 99, 100, 9999, 10000, 10001, 123456789, -123456789, 2 ** 53 - 1, -(2 ** 53 - 1), 100000000, 1000000000000, 5, 50, 500, 5000, 50000];
    // Where putScaledNumeric changes arithmetic (int32 or not) and its count of whole groups.
    values.push(2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, -(2 ** 31), -(2 ** 31) - 1, 99999999, 999999999999, 1000000000001, 9e15, 10 ** 15, 2 ** 52, 100000000000000);
    for (let k = 0; k < 2000; k++) values.push(Math.floor((Math.random() - 0.5) * 2 ** (1 + (k % 53))));
    for (const v of values) {
      for (let scale = 0; scale <= 8; scale++) {
        const a = new WireBuffer(64);
        const b = new WireBuffer(64);
        writeScaledNumeric(a, v, scale);
        assert.equal(writeNumericFromDecimal(b, BigInt(v), scale), true);
        assert.deepEqual(Buffer.from(a.bytes.subarray(0, a.pos)), Buffer.from(b.bytes.subarray(0, b.pos)), `${v} scale ${scale}`);
        const t = new WireBuffer(64);
        putDecimal(t, v, scale);
        assert.equal(Buffer.from(t.bytes.subarray(0, t.pos)).toString(), decimalText(v, scale), `${v} scale ${scale} as text`);
      }
      const t = new WireBuffer(64);
      putInteger(t, v);
      assert.equal(Buffer.from(t.bytes.subarray(0, t.pos)).toString(), String(v));
    }
  });
});

// Every column of VALUES into a column type it has a binary form for; then the integers into narrower ones, which refuse values.
const TYPES: Record<string, string> = { id: 'int8', small: 'int4', big: 'int8', tiny: 'int2', d4: 'numeric', d8: 'numeric', d16: 'numeric', dt: 'date', f: 'float4', db: 'float8', b: 'bool', s: 'text', ship_mode: 'varchar', j: 'jsonb', u: 'uuid', ts: 'timestamp', k: 'int2', q: 'numeric', qi: 'numeric', p: 'numeric' };
const NARROW: Record<string, string> = { ...TYPES, small: 'int2', big: 'int4', id: 'int4', k: 'int2', j: 'json', s: 'bpchar' };
// Only the fields every row of which is written inline (so the kernels' tuples write them): k into int2 refuses values, p's big ones have a writer of their own.
const INLINE: Record<string, string> = { id: 'int8', small: 'int4', big: 'int8', d4: 'numeric', d8: 'numeric', dt: 'date', s: 'text', ship_mode: 'varchar', k: 'int2', q: 'numeric', qi: 'numeric', p: 'numeric' };
// Beside VALUES: dictionary-encoded decimals and integers (a table of fields made once), one that int2 refuses, a DECIMAL on INT32, a big INT64 decimal.
const DICTIONARY_VALUES = `SELECT *, ((id % 40 - 20) * 2000)::INTEGER k, ((id % 50) + 0.25)::DECIMAL(15,2) q, ((id % 30) * 0.5)::DECIMAL(9,1) qi,
    CASE WHEN id % 13 = 0 THEN NULL WHEN id % 17 = 0 THEN 9007199254740993 * 100 ELSE id * 104729 END::DECIMAL(18,0) p FROM (${VALUES})`;

describe('binary tuples written straight from the decoded columns (flat-tuples.ts)', () => {
  for (const f of FILES) {
    it(`${f.name}: the same bytes, pieces and refusals as the binary cells, row by row`, async () => {
      const file = path.join(dir, `tuples_${f.name.replace(/\W+/g, '_')}.parquet`);
      await duckRun(`COPY (${DICTIONARY_VALUES}) TO ${sqlString(file)} (FORMAT parquet, ${f.options})`);
      const pf = await openParquet(file);
      try {
        const all: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
        let refusals = 0;
        let byKernels = 0;
        let refusedByKernels = 0;
        const held = ParquetKernels.get()!.held;
        const kernelPool = new KernelPool(ParquetKernels.get()!);
        const kinds = new Set<number>();
        for (const types of [TYPES, NARROW, INLINE]) {
          const columns = all.filter((c) => types[c.field] !== undefined);
          const wire: WireColumn[] = columns.map((c) => ({ name: c.column, declared: types[c.field]!, typname: types[c.field]!, typmod: -1, oid: 0 }));
          for (const [rowGroup, g] of rowGroupSpans(pf.metadata).entries()) {
            for (const at of [0, Math.floor(g.rows / 3)]) {
              const slice = { rowGroup, firstRow: g.firstRow + at, rows: g.rows - at, bytes: 0 };
              // The inline plan's columns decoded into the kernels' memory (read there by the kernels' tuples), the others' into arrays (copied in).
              const decoded = await decodeSlice(pf, slice, columns, g.firstRow, types === INLINE ? flatDecodeHere(pf, kernelPool) : undefined);
              const plan = tuplePlan(decoded, columns, wire);
              assert.ok(typeof plan !== 'string', String(plan));
              for (const c of plan.columns) kinds.add(c.kind);
              const cells = decoded.map((d, i) => binaryCell(d, columns[i]!, wire[i]!)!);
              // The kernels' tuples, where every column is written inline (the plan's own writer then).
              const wasm = wasmFlatTuples(plan.columns, plan.room, compileFlatTuples(plan.columns, plan.room));
              if (types === INLINE && f.flat === undefined) assert.ok(wasm !== undefined, `the kernels write the inline plan: kinds ${plan.columns.map((c, i) => columns[i]!.field + ' ' + c.kind).join(', ')}`);
              // Small pieces (a few rows each), as the wire writer asks for them.
              for (let r = 0; r < slice.rows; ) {
                const a = new WireBuffer(64);
                const b = new WireBuffer(64);
                const c = new WireBuffer(64);
                const w = new WireBuffer(64);
                const ours = writeFlatTuples(plan.columns, plan.room, r, slice.rows, a, 1500);
                const theirs = binaryTupleRows(cells, r, slice.rows, b, 1500);
                // The plan's own writer, compiled for its kinds (what a load runs): the same again.
                const compiled = plan.write(r, slice.rows, c, 1500);
                assert.deepEqual(ours, theirs, `row group ${rowGroup}, from row ${slice.firstRow + r + 1}`);
                assert.deepEqual(compiled, ours, `compiled: row group ${rowGroup}, from row ${slice.firstRow + r + 1}`);
                if (typeof ours === 'number') assert.ok(Buffer.from(c.bytes.subarray(0, c.pos)).equals(Buffer.from(a.bytes.subarray(0, a.pos))), `compiled: the tuples of rows ${slice.firstRow + r + 1}–${slice.firstRow + ours}`);
                if (wasm !== undefined) {
                  const kernels = wasm.write(r, slice.rows, w, 1500);
                  byKernels++;
                  if (typeof kernels !== 'number') refusedByKernels++;
                  assert.deepEqual(kernels, ours, `kernels: row group ${rowGroup}, from row ${slice.firstRow + r + 1}`);
                  if (typeof ours === 'number') assert.ok(Buffer.from(w.bytes.subarray(0, w.pos)).equals(Buffer.from(a.bytes.subarray(0, a.pos))), `kernels: the tuples of rows ${slice.firstRow + r + 1}–${slice.firstRow + ours}`);
                }
                if (typeof ours !== 'number') {
                  refusals++;
                  r = ours.row + 1;
                  continue;
                }
                assert.ok(Buffer.from(a.bytes.subarray(0, a.pos)).equals(Buffer.from(b.bytes.subarray(0, b.pos))), `the tuples of rows ${slice.firstRow + r + 1}–${slice.firstRow + ours}, row group ${rowGroup}`);
                r = ours;
              }
              if (wasm !== undefined) {
                wasm.release();
                assert.throws(() => wasm.write(0, slice.rows, new WireBuffer(64), 1500), /internal: Parquet tuples written after their plan was released/);
              }
              plan.release();
              if (types === INLINE) for (const d of decoded) if ('flat' in d) dropColumn(kernelPool, d.flat);
            }
          }
        }
        assert.ok(refusals > 0, 'the narrow columns refused values');
        assert.equal(ParquetKernels.get()!.held, held, 'the plans gave the kernels\' memory back');
        if (f.flat === undefined) assert.ok(byKernels > 0 && refusedByKernels > 0, `${byKernels} pieces written by the kernels, ${refusedByKernels} refused`);
        // Every way of writing a field was taken: a table, INT32, DATE, 8 bytes reversed, a span, a value's writer, DECIMAL on INT32 and INT64 (and hyparquet's cells where V2 pages are DELTA_*).
        if (f.flat === undefined) assert.deepEqual([...kinds].sort(), [0, 1, 2, 3, 4, 5, 7, 8]);
        else assert.ok(kinds.has(6) && kinds.has(0), `kinds ${[...kinds].join(',')}`);
      } finally {
        await pf.close();
      }
    });
  }
});

describe('the RLE/bit-packed hybrid reader (readHybrid, and the kernels\' hybrid)', () => {
  it('reads what hyparquet reads, at every width 0–24, a last group cut short, into an offset', () => {
    for (let width = 0; width <= 24; width++) {
      for (let seed = 1; seed <= 20; seed++) {
        const { bytes, values } = stream(width, seed * 7919 + width);
        // All the values, or fewer (the rest of a group is padding, as at a page's end).
        for (const count of [values, Math.max(0, values - 1 - (seed % 7))]) {
          const theirs = new Int32Array(count);
          readRleBitPackedHybrid({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 }, width, theirs, bytes.length);
          // Ours in JavaScript, the kernels' from a page elsewhere, and from a page decompressed into their memory (after two bytes of something else).
          // (A page `snappy` returns is good until the kernels' next call: made right before it is read.)
          const kernels = ParquetKernels.get()!;
          const readers: [string, (out: Int32Array) => void][] = [
            ['readHybrid', (out) => readHybrid(bytes, 0, bytes.length, width, out, 3, count)],
            ['the kernels', (out) => assert.equal(kernels.hybrid(bytes, 0, bytes.length, width, out, 3, count, -1, 'l_x'), -1)],
            [
              'the kernels, from their memory',
              (out) => {
                const page = kernels.snappy(snappyCompress(Uint8Array.from([9, 9, ...bytes])), bytes.length + 2, count, 'l_x');
                assert.equal(kernels.hybrid(page, 2, page.length, width, out, 3, count, -1, 'l_x'), -1);
              },
            ],
          ];
          for (const [who, read] of readers) {
            const ours = new Int32Array(count + 3).fill(-7);
            read(ours);
            assert.deepEqual(ours.subarray(3), theirs, `${who}: width ${width}, seed ${seed}, ${count} values`);
            assert.deepEqual([...ours.subarray(0, 3)], [-7, -7, -7], `${who}: nothing written before the offset`);
          }
        }
      }
    }
  });

  it('a run past the end of its page is an error, not values made up', () => {
    const { bytes, values } = stream(5, 3);
    assert.throws(() => readHybrid(bytes, 0, bytes.length - 1, 5, new Int32Array(values), 0, values, ['l_x']), /an RLE\/bit-packed run of l_x ends past its page/);
    // A run header, then nothing.
    assert.throws(() => readHybrid(Uint8Array.from([0x03]), 0, 1, 8, new Int32Array(8), 0, 8), /ends past its page/);
    assert.throws(() => readHybrid(Uint8Array.from([0x80]), 0, 1, 8, new Int32Array(8), 0, 8), /ends past its page/);
  });
});
