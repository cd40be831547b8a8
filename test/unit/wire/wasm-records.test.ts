import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { encoderFor } from '../../../src/codecs/index.js';
import { WireBuffer, type SessionFacts } from '../../../src/codecs/field-encoder.js';
import { RecordSplitter, type SplitFormat } from '../../../src/wire/record-splitter.js';
import { FAST_RECORDS_SOURCE_SHA256 } from '../../../src/wire/wasm/fast-records-wasm.js';
import { WasmRecords } from '../../../src/wire/wasm-records.js';
import { prng } from '../../helpers/lineitem-data.js';
import { committedModuleTests } from '../../helpers/wasm-module.js';

// The WebAssembly fast records (src/wire/wasm-records.ts, src/wire/wasm/fast-records.c)
// against the JavaScript fast paths: the same bytes and results where it takes records,
// and records it does not take left to the JavaScript. (test/unit/wire/fast-fields.test.ts
// compares all three paths on seeded random records of every fast type.)

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const session: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
const textFormat = (nul = '\\N'): SplitFormat => ({ csv: false, delimiter: 0x7c, null: Buffer.from(nul), quote: 0x22, escape: 0x22 });
const LINEITEM = ['int8', 'int4', 'int4', 'int4', 'numeric', 'numeric', 'numeric', 'numeric', 'bpchar', 'bpchar', 'date', 'date', 'date', 'bpchar', 'bpchar', 'varchar'];

/** Encodes `input` in pieces of about `piece` bytes (cut after a newline), as the writer does; the result and the bytes. */
function encode(typnames: readonly string[], input: Buffer, wasm: boolean, piece = 65536, format = textFormat()): { r: unknown; hex: string } {
  const splitter = new RecordSplitter(format, typnames.map((typname) => encoderFor({ typname, typmod: -1, oid: 0 }, session)!), { wasm });
  const out = new WireBuffer(16);
  let records = 0;
  for (let at = 0; at < input.length; ) {
    let end = Math.min(input.length, at + piece);
    if (end < input.length) end = input.lastIndexOf(0x0a, end - 1) + 1 || input.length;
    if (end <= at) end = input.length;
    const r = splitter.encode(input.subarray(at, end), out, at > 0);
    if (typeof r !== 'number') return { r: { ...r, record: records + r.record }, hex: '' };
    records += r;
    at = end;
  }
  return { r: records, hex: Buffer.from(out.bytes.subarray(0, out.pos)).toString('hex') };
}

/** Counts the records the WebAssembly took while `f` runs. */
function wasmRecordsDuring(f: () => void): number {
  const run = WasmRecords.prototype.run;
  let taken = 0;
  WasmRecords.prototype.run = function (this: WasmRecords, ...args: Parameters<typeof run>) {
    const n = run.apply(this, args);
    taken += n;
    return n;
  };
  try {
    f();
  } finally {
    WasmRecords.prototype.run = run;
  }
  return taken;
}

function same(typnames: readonly string[], input: Buffer, what: string, piece?: number, format?: SplitFormat): { r: unknown; taken: number } {
  let withWasm: { r: unknown; hex: string } | undefined;
  const taken = wasmRecordsDuring(() => (withWasm = encode(typnames, input, true, piece, format)));
  const without = encode(typnames, input, false, piece, format);
  assert.deepEqual(withWasm!.r, without.r, `${what}: result`);
  assert.ok(withWasm!.hex === without.hex, `${what}: bytes differ`);
  return { r: without.r, taken };
}

describe('WebAssembly fast records: the JavaScript fast paths\' bytes', () => {
  committedModuleTests('src/wire/wasm/fast-records.c', 'src/wire/wasm/fast-records-wasm.ts', FAST_RECORDS_SOURCE_SHA256);

  it('lineitem rows: all taken, the same bytes', () => {
    const rnd = prng(20261203);
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const n = (k: number): string => String(Math.floor(rnd() * k));
      lines.push(`${n(6e6)}|${n(2e5)}|${n(1e4)}|${n(7)}|${n(50)}.00|${n(1e5)}.${n(100).padStart(2, '0')}|0.0${n(10)}|0.0${n(9)}|N|O|199${n(9)}-0${1 + Math.floor(rnd() * 9)}-1${n(9)}|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|${'egular courts above the'.slice(0, 1 + Math.floor(rnd() * 23))}\n`);
    }
    const { r, taken } = same(LINEITEM, Buffer.from(lines.join('')), 'lineitem');
    assert.equal(r, 5000);
    assert.equal(taken, 5000);
  });

  it('every day of years 1 to 9999, and days that do not exist, as dates', () => {
    // Every day, written straight into one buffer ("YYYY-MM-DD\n" is 11 bytes).
    const leap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
    const dim = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    const input = Buffer.alloc(9999 * 366 * 11);
    let at = 0;
    let days = 0;
    const put = (v: number, w: number): void => {
      for (let k = w - 1; k >= 0; k--, v = Math.floor(v / 10)) input[at + k] = 48 + (v % 10);
      at += w;
    };
    for (let y = 1; y <= 9999; y++) {
      for (let m = 1; m <= 12; m++) {
        for (let d = 1; d <= dim[m]! + (m === 2 && leap(y) ? 1 : 0); d++) {
          put(y, 4);
          input[at++] = 0x2d;
          put(m, 2);
          input[at++] = 0x2d;
          put(d, 2);
          input[at++] = 0x0a;
          days++;
        }
      }
    }
    assert.equal(days, 3652059);
    const { r, taken } = same(['date'], input.subarray(0, at), 'every day', 1 << 20);
    assert.equal(r, days);
    assert.equal(taken, days);
    for (const bad of ['2023-02-29', '2024-02-30', '1900-02-29', '2024-04-31', '2024-13-01', '0000-01-01', '2024-00-10', '2024-01-00', '2024-01-32']) {
      const { r: refused, taken: none } = same(['date'], Buffer.from(`2024-01-02\n${bad}\n`), bad);
      assert.equal((refused as { record: number }).record, 2, bad);
      assert.equal(none, 1, bad);
    }
  });

  it('records it cannot take (NULLs, escapes, non-ASCII, long numbers) go to the JavaScript in place, record numbers kept', () => {
    const rnd = prng(7);
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const slow = rnd() < 0.2 ? ['\\N', 'caf\u00e9', 'a\\tb', '123456789.5', '1.23456'][Math.floor(rnd() * 5)]! : String(i);
      lines.push(`${i}|${slow.includes('.') ? slow : `${i}.5`}|${slow.includes('.') ? 'x' : slow}\n`);
    }
    const { r, taken } = same(['int4', 'numeric', 'text'], Buffer.from(lines.join('')), 'mixed', 4096);
    assert.equal(r, 3000);
    assert.ok(taken > 1500 && taken < 3000, `the WebAssembly took ${taken} of 3000 records`);
    // A refusal after records the WebAssembly took names the record by its number in the chunk.
    const refused = same(['int4', 'text'], Buffer.from('1|a\n2|b\n3|c\n4|d|e\n5|f\n'), 'a field too many').r as { record: number; why: string };
    assert.equal(refused.record, 4);
    assert.match(refused.why, /more fields/);
  });

  it('a record larger than its output region, CR-NL input, the NULL string that looks like a number', () => {
    const big = 'x'.repeat(700_000);
    const { r } = same(['int4', 'text'], Buffer.from(`1|a\n2|${big}\n3|c\n`), 'big record');
    assert.equal(r, 3);
    const crnl = same(['int4', 'text'], Buffer.from('1|a\r\n2|b\r\n'), 'CR-NL');
    assert.equal(crnl.r, 2);
    assert.equal(crnl.taken, 0);
    const nul = same(['int4', 'numeric'], Buffer.from('1|1\n1|2\n5|1\n'), 'NULL string 1', 65536, textFormat('1'));
    assert.equal(nul.r, 3);
  });

  it('splitters of other tables, formats and NULL strings take turns with the one memory', () => {
    const a = { types: ['int4', 'text'], format: textFormat(), input: Buffer.from(Array.from({ length: 400 }, (_, i) => `${i}|row ${i}\n`).join('')) };
    const tab: SplitFormat = { csv: false, delimiter: 0x09, null: Buffer.from(''), quote: 0x22, escape: 0x22 };
    const b = { types: ['date', 'numeric', 'int8'], format: tab, input: Buffer.from(Array.from({ length: 400 }, (_, i) => `2024-01-${String(1 + (i % 28)).padStart(2, '0')}\t${i}.25\t${i % 7 === 0 ? '' : -i}\n`).join('')) };
    const make = (t: typeof a, wasm: boolean): RecordSplitter => new RecordSplitter(t.format, t.types.map((typname) => encoderFor({ typname, typmod: -1, oid: 0 }, session)!), { wasm });
    const [wa, wb, ja, jb] = [make(a, true), make(b, true), make(a, false), make(b, false)];
    const outs = [wa, wb, ja, jb].map(() => new WireBuffer(16));
    // Pieces of each, in turn: the other splitter's settings and input are in the memory in between.
    for (let at = 0; at < 400; at += 50) {
      const piece = (t: typeof a): Buffer => {
        const lines = t.input.toString().split('\n');
        return Buffer.from(lines.slice(at, at + 50).join('\n') + '\n');
      };
      for (const [k, s] of [wa, wb, ja, jb].entries()) assert.equal(s.encode(piece(k % 2 === 0 ? a : b), outs[k]!, at > 0), 50);
    }
    const hex = (o: WireBuffer): string => Buffer.from(o.bytes.subarray(0, o.pos)).toString('hex');
    assert.equal(hex(outs[0]!), hex(outs[2]!));
    assert.equal(hex(outs[1]!), hex(outs[3]!));
  });

  it('where WebAssembly cannot run (node --jitless), the JavaScript encodes', () => {
    const script = `
      import { RecordSplitter } from ${JSON.stringify(path.join(root, 'dist/src/wire/record-splitter.js'))};
      import { encoderFor } from ${JSON.stringify(path.join(root, 'dist/src/codecs/index.js'))};
      import { WireBuffer } from ${JSON.stringify(path.join(root, 'dist/src/codecs/field-encoder.js'))};
      const session = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
      const s = new RecordSplitter({ csv: false, delimiter: 124, null: Buffer.from('\\\\N'), quote: 34, escape: 34 }, ['int4', 'text'].map((typname) => encoderFor({ typname, typmod: -1, oid: 0 }, session)));
      const out = new WireBuffer(16);
      console.log(typeof WebAssembly, s.encode(Buffer.from('1|a\\n2|b\\n'), out), Buffer.from(out.bytes.subarray(0, out.pos)).toString('hex'));
    `;
    const r = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const expected = encode(['int4', 'text'], Buffer.from('1|a\n2|b\n'), false).hex;
    assert.equal(r.stdout.trim(), `undefined 2 ${expected}`);
  });
});
