/**
 * The binary wire's client cost, in process and without a server: lineitem.tbl framed
 * into chunks (what the text wire sends), then those chunks encoded into binary COPY
 * tuples (what the binary wire sends on top). Prints µs per row of each, CPU time from
 * process.cpuUsage, median of --repeat rounds.
 *
 *   node dist/bench/wire-encode.js [--scale 0.05] [--repeat 5]
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { TblFramer } from '../src/framing/tbl-framer.js';
import { encoderFor } from '../src/wire/encoders/index.js';
import { WireBuffer, type ColumnType, type SessionFacts } from '../src/wire/field-encoder.js';
import { RecordSplitter, splitFormatOf, type SplitFormat } from '../src/wire/record-splitter.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { typnameOf } from './lib/dbt3-types.js';

const scale = Number(arg('scale', '0.05'));
const repeat = Number(arg('repeat', '5'));
const CHUNK = 8 * 1024 * 1024;

const session: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-wire-encode-'));
try {
  console.log(`# bench/wire-encode: ${process.argv.slice(1).map((a) => path.relative(process.cwd(), a) || a).join(' ')}`);
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const { files } = await generateDbt3({ scale, outDir: work, tables: ['lineitem'] });
  const file = files[0]!;
  const raw = await fs.readFile(file.path);
  console.log(`# input: lineitem.tbl at scale ${scale}: ${file.rows.toLocaleString('en-US')} rows, ${(raw.length / 1e6).toFixed(0)} MB`);
  const types: ColumnType[] = DBT3_COLUMNS.lineitem.map(([, t]) => ({ typname: typnameOf(t), typmod: -1, oid: 0 }));
  const encoders = types.map((t) => encoderFor(t, session)!);
  const format = splitFormatOf({ format: 'text', delimiter: '|' }) as SplitFormat;
  const cpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };

  const frame = (): Buffer[] => {
    const framer = new TblFramer();
    const out: Buffer[] = [];
    for (let at = 0; at < raw.length; ) {
      const end = Math.min(raw.length, at + CHUNK);
      const framed = framer.frame(raw.subarray(at, end), end === raw.length);
      out.push(Buffer.from(framed.out));
      at += framed.consumed;
    }
    return out;
  };
  const chunks = frame();
  const framing: number[] = [];
  const encoding: number[] = [];
  const out = new WireBuffer(CHUNK * 2);
  const splitter = new RecordSplitter(format, encoders);
  for (let r = 0; r < repeat; r++) {
    let t = cpu();
    frame();
    framing.push(((cpu() - t) * 1e6) / file.rows);
    t = cpu();
    let rows = 0;
    for (const c of chunks) {
      out.pos = 0;
      const n = splitter.encode(c, out);
      if (typeof n !== 'number') throw new Error(`refused: ${JSON.stringify(n)}`);
      rows += n;
    }
    encoding.push(((cpu() - t) * 1e6) / rows);
  }
  console.log(`tbl framing (the text wire's client work):  ${median(framing).toFixed(3)} µs/row`);
  console.log(`binary encoding, on top of the framing:     ${median(encoding).toFixed(3)} µs/row (issue's prototype: 0.74)`);
} finally {
  await fs.rm(work, { recursive: true, force: true });
}
