/**
 * Client CPU and wall time of decoding one Parquet file with pgsurge's own decoder and with
 * two libraries, no server: DBT-3 lineitem as `pgsurge dbt3 gen --scale <s> --tables lineitem
 * --format parquet` writes it (snappy, row groups of 122,880 rows; made once in the temp
 * folder, or `--file`), all 16 columns of every row group, read row group by row group on
 * one thread. Variants run interleaved (A B C … A B C …), `--repeat` rounds after one
 * warm-up pass each; prints each pass's CPU seconds (process.cpuUsage, user + system) and
 * wall seconds, their medians, and the median over rounds of each variant's CPU over the
 * `--base` variant's in the same round.
 *
 *   node dist/bench/parquet-libs.js [--scale 1] [--repeat 3] [--file x.parquet] [--variants a,b] [--base ours-decode]
 *
 * What each variant produces, per row group:
 * - `ours-decode`: pgsurge's flat decoder (decodeSlice): each column as typed arrays
 *   (int32/int64 keys, int64 unscaled decimals, int32 days) or UTF-8 bytes with offsets;
 *   no JS value a cell.
 * - `ours-binary`: the same, then binary COPY tuples as a load writes them (flat-tuples.ts,
 *   in ~112 KB pieces): what `--wire auto` sends.
 * - `ours-text`: the same decode, then COPY text (what `--wire text` sends).
 * - `hyparquet-rows`: hyparquet's `parquetRead` (the installed release) with its defaults
 *   (its own snappy; int64 as bigint, decimals as number, dates as Date, strings as JS
 *   strings), rows as arrays of 16 JS values (`onComplete`).
 * - `wasm-arrow`: parquet-wasm (arrow-rs in WebAssembly) `ParquetFile.read({ rowGroups })`
 *   on the file as a Blob, then the Arrow IPC stream into an apache-arrow JS Table: each
 *   column as typed arrays or UTF-8 bytes with offsets (the counterpart of `ours-decode`).
 * - `wasm-values`: the same, then each column's `toArray()`: typed arrays for keys and dates,
 *   the decimals' 128-bit words, JS strings for the text columns (values materialised in JS).
 *
 * parquet-wasm and apache-arrow are devDependencies only for this bench; pgsurge does not use them.
 */
import './lib/usage.js';
import { promises as fs, openAsBlob } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { asyncBufferFromFile, parquetMetadataAsync, parquetRead } from 'hyparquet';
import { ParquetFile as WasmParquetFile } from 'parquet-wasm';
import { tableFromIPC } from 'apache-arrow';
import { parquetFields, type ParquetColumn } from '../src/input/parquet/parquet-columns.js';
import { openParquet } from '../src/input/parquet/parquet-file.js';
import { copyTextCells, decodeSlice, fieldWriter, ROW_WIDTH_SAMPLE, rowGroupSpans, SliceRows } from '../src/input/parquet/parquet-source.js';
import type { WireColumn } from '../src/codecs/catalog.js';
import { textCell } from '../src/input/parquet/parquet-cells.js';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { WireBuffer } from '../src/codecs/field-encoder.js';
import { arg, describeMachine, median } from './lib/machine.js';

const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const variants = arg('variants', 'ours-decode,ours-binary,ours-text,hyparquet-rows,wasm-arrow,wasm-values').split(',');
const base = arg('base', 'ours-decode');
let file = arg('file', '');
const given = file !== '';
if (!given) {
  const dir = path.join(os.tmpdir(), `pgsurge-parquet-libs-sf${scale}`);
  file = path.join(dir, 'lineitem.parquet');
  if (!(await fs.stat(file).catch(() => undefined))) {
    const cli = path.join(path.dirname(new URL(import.meta.url).pathname), '../../bin/pgsurge.js');
    execFileSync(process.execPath, [cli, 'dbt3', 'gen', '--scale', String(scale), '--tables', 'lineitem', '--format', 'parquet', '--out', dir], { stdio: 'inherit' });
  }
}
console.log(`# node dist/bench/parquet-libs.js ${given ? `--file ${file}` : `--scale ${scale}`} --repeat ${repeat} --variants ${variants.join(',')} --base ${base}`);
console.log(`# machine: ${describeMachine()}`);

const pf = await openParquet(file);
const columns: ParquetColumn[] = parquetFields(pf.metadata, file).map((shape) => ({ column: shape.name, field: shape.name, shape, rendering: 'text' }));
const groups = rowGroupSpans(pf.metadata);
const rows = groups.reduce((n, g) => n + g.rows, 0);
const version = async (pkg: string): Promise<string> => JSON.parse(await fs.readFile(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version as string;
console.log(`# input: ${file}, ${rows.toLocaleString('en-US')} rows, ${groups.length} row groups, ${columns.length} columns, ${(pf.size / 1e6).toFixed(1)} MB`);
console.log(`# hyparquet ${await version('hyparquet')}, parquet-wasm ${await version('parquet-wasm')}, apache-arrow ${await version('apache-arrow')}`);

const CHUNK = 8 * 1024 * 1024;
/** The binary wire's pieces (wire-writer.ts's PIECE_BINARY_BYTES): tuples are written ~112 KB at a time. */
const PIECE = 112 * 1024;
const out = new WireBuffer(CHUNK + 64 * 1024);
let sink = 0;

/** The catalog's typname of a DBT-3 column type (what the binary tuples are planned for). */
function typnameOf(type: string): string {
  if (type === 'bigint') return 'int8';
  if (type === 'integer') return 'int4';
  if (type.startsWith('numeric')) return 'numeric';
  if (type.startsWith('char')) return 'bpchar';
  if (type.startsWith('varchar')) return 'varchar';
  return type;
}
const lineitemTypes = new Map(DBT3_COLUMNS.lineitem.map(([n, t]) => [n, typnameOf(t)]));
const wire: WireColumn[] = columns.map((c) => ({ name: c.column, declared: lineitemTypes.get(c.field) ?? 'text', typname: lineitemTypes.get(c.field) ?? 'text', typmod: -1, oid: 0 }));

async function ours(how: 'decode' | 'binary' | 'text'): Promise<number> {
  const writers = columns.map(fieldWriter);
  let seen = 0;
  for (const [rowGroup, g] of groups.entries()) {
    const slice = { rowGroup, firstRow: g.firstRow, rows: g.rows, bytes: g.compressedBytes };
    const decoded = await decodeSlice(pf, slice, columns, g.firstRow);
    seen += g.rows;
    if (how === 'decode') continue;
    if (how === 'binary') {
      const sliceRows = new SliceRows(decoded, columns, writers);
      sliceRows.rowBytes = sliceRows.textBytesPerRow(Math.min(g.rows, ROW_WIDTH_SAMPLE));
      const tuples = sliceRows.binary(wire, 0, g.rows);
      if (typeof tuples === 'string') throw new Error(tuples);
      for (let r = 0; r < g.rows; ) {
        out.pos = 0;
        const to = tuples.write(r, out, PIECE);
        if (typeof to !== 'number') throw new Error(`refused at row ${to.row}: ${to.why}`);
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
  return seen;
}

const hyFile = await asyncBufferFromFile(file);
const hyMeta = await parquetMetadataAsync(hyFile);
async function hyparquetRows(): Promise<number> {
  let seen = 0;
  for (const g of groups) {
    await parquetRead({
      file: hyFile,
      metadata: hyMeta,
      rowStart: g.firstRow,
      rowEnd: g.firstRow + g.rows,
      onComplete: (got: unknown[][]) => {
        if (got[0]?.length !== columns.length) throw new Error(`hyparquet gave ${got[0]?.length} columns`);
        seen += got.length;
      },
    });
  }
  return seen;
}

const wasmFile = await WasmParquetFile.fromFile(await openAsBlob(file));
async function wasm(how: 'arrow' | 'values'): Promise<number> {
  let seen = 0;
  for (const [rowGroup] of groups.entries()) {
    const table = tableFromIPC((await wasmFile.read({ rowGroups: [rowGroup] })).intoIPCStream());
    if (table.numCols !== columns.length) throw new Error(`parquet-wasm gave ${table.numCols} columns`);
    seen += table.numRows;
    if (how === 'values') {
      for (let c = 0; c < table.numCols; c++) sink += table.getChildAt(c)!.toArray().length;
    }
  }
  return seen;
}

const run: Record<string, () => Promise<number>> = {
  'ours-decode': () => ours('decode'),
  'ours-binary': () => ours('binary'),
  'ours-text': () => ours('text'),
  'hyparquet-rows': hyparquetRows,
  'wasm-arrow': () => wasm('arrow'),
  'wasm-values': () => wasm('values'),
};
for (const v of [...variants, base]) if (run[v] === undefined) throw new Error(`unknown variant ${v}`);
if (!variants.includes(base)) variants.unshift(base);

const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
async function pass(v: string): Promise<{ cpu: number; wall: number }> {
  const t0 = cpu();
  const w0 = performance.now();
  const seen = await run[v]!();
  const result = { cpu: cpu() - t0, wall: (performance.now() - w0) / 1000 };
  if (seen !== rows) throw new Error(`${v} read ${seen} rows, expected ${rows}`);
  return result;
}

for (const v of variants) await pass(v); // warm-up, in the same order
const cpus: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
const walls: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
for (let round = 1; round <= repeat; round++) {
  for (const v of variants) {
    const t = await pass(v);
    cpus[v]!.push(t.cpu);
    walls[v]!.push(t.wall);
    console.log(`round ${round} ${v.padEnd(15)} cpu ${t.cpu.toFixed(2)} s  wall ${t.wall.toFixed(2)} s`);
  }
}
console.log(`\nvariant         cpu s (median)  wall s (median)  cpu / ${base} (median of rounds)`);
for (const v of variants) {
  const ratio = median(cpus[v]!.map((c, i) => c / cpus[base]![i]!));
  console.log(`${v.padEnd(15)} ${median(cpus[v]!).toFixed(2).padStart(14)}  ${median(walls[v]!).toFixed(2).padStart(15)}  ${ratio.toFixed(2).padStart(8)}`);
}
await pf.close();
if (sink < 0) console.log(sink);
