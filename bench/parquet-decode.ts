/**
 * Client CPU of a Parquet chunk's making, no server: SF 0.1 lineitem (or `--file`) written
 * by DuckDB (snappy, row groups of 122,880 rows) read row group by row group into what a
 * chunk sends, COPY text or binary COPY tuples. Prints µs of client CPU a row
 * (process.cpuUsage, user + system), the median of `--repeat` passes over the file.
 *
 *   node dist/bench/parquet-decode.js [--scale 0.1] [--repeat 5] [--file x.parquet] [--variants a,b]
 *
 * Variants: `hyparquet-text` (hyparquet's parquetRead, then COPY text: the reader before
 * the flat decoder), `decode` (the flat decoder alone: file bytes to decoded columns),
 * `text` (the flat decoder, then COPY text), `binary-cells` (the flat decoder, then binary
 * COPY tuples by a call per value: the typed wire before flat-tuples.ts), `binary` (the
 * flat decoder, then binary COPY tuples as a load writes them, flat-tuples.ts: the whole
 * client path of `--wire auto` from the file's bytes to the COPY pieces).
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { tblToParquet } from '../test/helpers/duckdb-parquet.js';
import { parquetFields, type ParquetColumn } from '../src/input/parquet/parquet-columns.js';
import { openParquet } from '../src/input/parquet/parquet-file.js';
import { binaryTupleRows, copyTextCells, copyTextRows, decodeSlice, fieldWriter, readSlice, ROW_WIDTH_SAMPLE, rowGroupSpans, SliceRows } from '../src/input/parquet/parquet-source.js';
import type { WireColumn } from '../src/codecs/catalog.js';
import { binaryCell, textCell } from '../src/input/parquet/parquet-cells.js';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { WireBuffer } from '../src/codecs/field-encoder.js';
import { arg, describeMachine, median } from './lib/machine.js';

const scale = Number(arg('scale', '0.1'));
const repeat = Number(arg('repeat', '5'));
const variants = arg('variants', 'hyparquet-text,decode,text,binary-cells,binary').split(',');
let file = arg('file', '');
if (file === '') {
  const dir = path.join(os.tmpdir(), `pgsurge-parquet-decode-sf${scale}`);
  file = path.join(dir, 'lineitem.parquet');
  if (!(await fs.stat(file).catch(() => undefined))) {
    await fs.mkdir(dir, { recursive: true });
    const tbl = (await generateDbt3({ scale, outDir: dir, tables: ['lineitem'] })).files[0]!;
    await tblToParquet('lineitem', tbl.path, file, { compression: 'snappy', rowGroupSize: 122_880 });
    await fs.rm(tbl.path);
  }
}
console.log(`# node dist/bench/parquet-decode.js --scale ${scale} --repeat ${repeat} --file ${file} --variants ${variants.join(',')}`);
console.log(`# machine: ${describeMachine()}`);

const pf = await openParquet(file);
const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
const groups = rowGroupSpans(pf.metadata);
const rows = groups.reduce((n, g) => n + g.rows, 0);
console.log(`# input: ${rows.toLocaleString('en-US')} rows, ${groups.length} row groups, ${columns.length} columns, ${(pf.size / 1e6).toFixed(1)} MB`);

const CHUNK = 8 * 1024 * 1024;
/** The binary wire's pieces (wire-writer.ts's PIECE_BINARY_BYTES): tuples are written ~112 KB at a time. */
const PIECE = 112 * 1024;
const out = new WireBuffer(CHUNK + 64 * 1024);
let sink = 0;

async function hyparquetText(): Promise<void> {
  const writers = columns.map(fieldWriter);
  for (const [rowGroup, g] of groups.entries()) {
    const values = await readSlice(pf, { rowGroup, firstRow: g.firstRow, rows: g.rows, bytes: g.compressedBytes }, columns);
    for (let r = 0; r < g.rows; ) {
      out.pos = 0;
      r = copyTextRows(values, r, g.rows, writers, out, CHUNK);
      sink += out.pos;
    }
  }
}

/** The catalog's typname of a DBT-3 column type (what the binary cells are made for). */
function typnameOf(type: string): string {
  if (type === 'bigint') return 'int8';
  if (type === 'integer') return 'int4';
  if (type.startsWith('numeric')) return 'numeric';
  if (type.startsWith('char')) return 'bpchar';
  if (type.startsWith('varchar')) return 'varchar';
  return type;
}
const lineitemTypes = new Map(DBT3_COLUMNS.lineitem.map(([n, t]) => [n, typnameOf(t)]));

/** The table's COPY columns as the catalog gives them (what the typed tuples are planned for). */
const wire: WireColumn[] = columns.map((c) => ({ name: c.column, declared: lineitemTypes.get(c.field) ?? 'text', typname: lineitemTypes.get(c.field) ?? 'text', typmod: -1, oid: 0 }));

async function flat(how: 'decode' | 'text' | 'binary-cells' | 'binary'): Promise<void> {
  const writers = columns.map(fieldWriter);
  for (const [rowGroup, g] of groups.entries()) {
    const slice = { rowGroup, firstRow: g.firstRow, rows: g.rows, bytes: g.compressedBytes };
    const decoded = await decodeSlice(pf, slice, columns, g.firstRow);
    if (how === 'decode') continue;
    if (how === 'binary') {
      // What a load does: a row group's rows, the width of their COPY text sampled (chunk sizes), their tuple plan made once, written piece by piece.
      const rows = new SliceRows(decoded, columns, writers);
      rows.rowBytes = rows.textBytesPerRow(Math.min(g.rows, ROW_WIDTH_SAMPLE));
      const tuples = rows.binary(wire, 0, g.rows);
      if (typeof tuples === 'string') throw new Error(tuples);
      for (let r = 0; r < g.rows; ) {
        out.pos = 0;
        const to = tuples.write(r, out, PIECE);
        if (typeof to !== 'number') throw new Error(`refused at row ${to.row}: ${to.why}`);
        r = to;
        sink += out.pos;
      }
    } else if (how === 'binary-cells') {
      const cells = decoded.map((d, i) => binaryCell(d, columns[i]!, { typname: lineitemTypes.get(columns[i]!.field) ?? 'text' })!);
      for (let r = 0; r < g.rows; ) {
        out.pos = 0;
        const to = binaryTupleRows(cells, r, g.rows, out, PIECE);
        if (typeof to !== 'number') throw new Error(`refused at row ${to.row}`);
        r = to;
        sink += out.pos;
      }
    } else {
      const cells = decoded.map((d, i) => textCell(d, columns[i]!, writers[i]!));
      for (let r = 0; r < g.rows; ) {
        out.pos = 0;
        r = copyTextCells(cells, r, g.rows, out, CHUNK);
        sink += out.pos;
      }
    }
  }
}

const run: Record<string, () => Promise<void>> = { 'hyparquet-text': hyparquetText, decode: () => flat('decode'), text: () => flat('text'), 'binary-cells': () => flat('binary-cells'), binary: () => flat('binary') };

const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
console.log('\nvariant           client µs/row (median)   passes');
for (const v of variants) {
  const f = run[v];
  if (f === undefined) throw new Error(`unknown variant ${v}`);
  await f(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = cpu();
    await f();
    times.push(((cpu() - t0) * 1e6) / rows);
  }
  console.log(`${v.padEnd(18)} ${median(times).toFixed(2).padStart(10)}              ${times.map((t) => t.toFixed(2)).join(' ')}`);
}
await pf.close();
if (sink < 0) console.log(sink);
