/**
 * What the binary wire's encoders cost on the client, per field and per DBT-3 lineitem row:
 * generated lineitem `.tbl` lines are cut into fields once (not timed), then every round
 * encodes them — each column alone (ns per field) and whole rows (the tuple's field count
 * plus its 16 fields: 1 bigint, 3 integers, 4 numerics, 3 dates, 5 char/varchar) — into a
 * WireBuffer that is emptied at 1 MB, as a chunk would be sent. A few other types run on
 * synthetic values. Times are the process's CPU time (user + system, which a busy machine
 * disturbs less than wall time), medians over the rounds.
 *
 *   node dist/bench/encoders.js [--orders 50000] [--rounds 9]
 */
import './lib/usage.js';
import path from 'node:path';
import { buildContext } from '../src/datasets/dbt3/context.js';
import { writeGroupBlock } from '../src/datasets/dbt3/block.js';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { writeTupleStart } from '../src/codecs/binary-copy.js';
import { encoderFor } from '../src/codecs/index.js';
import { WireBuffer, type FieldEncoder, type SessionFacts } from '../src/codecs/field-encoder.js';
import { arg, describeMachine, median } from './lib/machine.js';

const orders = Number(arg('orders', '50000'));
const rounds = Number(arg('rounds', '9'));
const session: SessionFacts = { serverVersionNum: 180000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };

console.log(`# bench/encoders: node ${path.relative(process.cwd(), process.argv[1]!)} ${process.argv.slice(2).join(' ')}`);
console.log(`# machine: ${describeMachine()}`);

const blocks = writeGroupBlock(buildContext(1), ['orders', 'lineitem'], 0, orders);
const data = blocks[1]!.buf;
const rows = blocks[1]!.rows;
const FIELDS = DBT3_COLUMNS.lineitem.length;

// Field bounds, found once: starts[r * 16 + f], ends[...] (the .tbl line's trailing '|' dropped).
const starts = new Int32Array(rows * FIELDS);
const ends = new Int32Array(rows * FIELDS);
{
  let k = 0;
  let at = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === 0x7c) {
      starts[k] = at;
      ends[k] = i;
      k++;
      at = i + 1;
    } else if (c === 0x0a) at = i + 1; // the line's last '|' ended its last field
  }
  if (k !== rows * FIELDS) throw new Error(`cut ${k} fields from ${rows} rows`);
}

const typeOf = (sqlType: string): string =>
  sqlType.startsWith('numeric') ? 'numeric' : sqlType.startsWith('char') ? 'bpchar' : sqlType.startsWith('varchar') ? 'varchar' : sqlType === 'bigint' ? 'int8' : sqlType === 'integer' ? 'int4' : sqlType;
const columnTypes = DBT3_COLUMNS.lineitem.map(([, t]) => typeOf(t));
const encoders: FieldEncoder[] = columnTypes.map((t) => encoderFor({ typname: t, typmod: -1, oid: 0 }, session)!);
const out = new WireBuffer(2 * 1024 * 1024);
const FLUSH_AT = 1024 * 1024;

function cpuNs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const d = process.cpuUsage(before);
  return (d.user + d.system) * 1000;
}

function encodeRows(): void {
  for (let r = 0; r < rows; r++) {
    if (out.pos > FLUSH_AT) out.pos = 0;
    writeTupleStart(out, FIELDS);
    const base = r * FIELDS;
    for (let f = 0; f < FIELDS; f++) {
      if (!encoders[f]!.encode(data, starts[base + f]!, ends[base + f]!, out)) throw new Error(`refused row ${r} field ${f}`);
    }
  }
}

function encodeColumns(columns: readonly number[]): void {
  for (const f of columns) {
    const enc = encoders[f]!;
    for (let r = 0; r < rows; r++) {
      if (out.pos > FLUSH_AT) out.pos = 0;
      enc.encode(data, starts[r * FIELDS + f]!, ends[r * FIELDS + f]!, out);
    }
  }
}

// Other types, on synthetic values (one buffer of values, cut the same way).
const SYNTHETIC: Record<string, (i: number) => string> = {
  float8: (i) => (i * 7.31).toFixed(3),
  float4: (i) => String(Math.fround(i / 7)),
  bool: (i) => (i % 2 ? 't' : 'f'),
  timestamp: (i) => `1995-03-${String((i % 28) + 1).padStart(2, '0')} 12:${String(i % 60).padStart(2, '0')}:07.123456`,
  timestamptz: (i) => `1995-03-${String((i % 28) + 1).padStart(2, '0')} 12:34:56+02`,
  uuid: (i) => `a0eebc99-9c0b-4ef8-bb6d-${String(i).padStart(12, '0')}`,
  bytea: (i) => `\\x${i.toString(16).padStart(32, '0')}`,
  jsonb: (i) => `{"id": ${i}, "name": "x${i}"}`,
};
const N_SYNTH = 200000;
const synthetic = Object.entries(SYNTHETIC).map(([type, make]) => {
  const values = Array.from({ length: N_SYNTH }, (_, i) => make(i));
  const buf = Buffer.from(values.join(''));
  const bounds = new Int32Array(N_SYNTH + 1);
  let at = 0;
  values.forEach((v, i) => {
    bounds[i] = at;
    at += Buffer.byteLength(v);
  });
  bounds[N_SYNTH] = at;
  return { type, buf, bounds, enc: encoderFor({ typname: type, typmod: -1, oid: 0 }, session)! };
});

const groups: [string, number[]][] = [
  ['int8 (l_orderkey)', [0]],
  ['int4 (3 columns)', [1, 2, 3]],
  ['numeric(15,2) (4 columns)', [4, 5, 6, 7]],
  ['date (3 columns)', [10, 11, 12]],
  ['char/varchar (5 columns)', [8, 9, 13, 14, 15]],
];

const perRow: number[] = [];
const perField = new Map<string, number[]>();
const add = (k: string, v: number): void => void (perField.get(k) ?? perField.set(k, []).get(k)!).push(v);
for (let round = 0; round < rounds + 1; round++) {
  const rowNs = cpuNs(encodeRows) / rows;
  const fieldNs = groups.map(([name, cols]) => [name, cpuNs(() => encodeColumns(cols)) / (rows * cols.length)] as const);
  const synthNs = synthetic.map((s) => {
    const ns = cpuNs(() => {
      for (let i = 0; i < N_SYNTH; i++) {
        if (out.pos > FLUSH_AT) out.pos = 0;
        if (!s.enc.encode(s.buf, s.bounds[i]!, s.bounds[i + 1]!, out)) throw new Error(`${s.type} refused value ${i}`);
      }
    });
    return [s.type, ns / N_SYNTH] as const;
  });
  if (round === 0) continue; // warm-up: the JIT's first pass
  perRow.push(rowNs);
  for (const [k, v] of [...fieldNs, ...synthNs]) add(k, v);
}

console.log(`# ${rows} lineitem rows (${orders} orders, ${(data.length / rows).toFixed(0)} bytes/row as .tbl), ${rounds} rounds after one warm-up, CPU time medians`);
console.log(`lineitem row (tuple start + 16 fields): ${(median(perRow) / 1000).toFixed(3)} µs/row  (rounds: ${perRow.map((x) => (x / 1000).toFixed(3)).join(' ')})`);
for (const [k, v] of perField) console.log(`${k.padEnd(28)} ${median(v).toFixed(1).padStart(7)} ns/field`);
