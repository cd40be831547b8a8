import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encoderFor } from '../../../src/codecs/index.js';
import { WireBuffer, type FieldEncoder, type SessionFacts } from '../../../src/codecs/field-encoder.js';
import { fastKinds, KIND_NONE } from '../../../src/wire/fast-fields.js';
import { RecordSplitter, type SplitFormat, type SplitRefusal } from '../../../src/wire/record-splitter.js';
import { prng } from '../../helpers/lineitem-data.js';

// The splitter's fast paths (src/wire/fast-fields.ts), and its whole fast records in
// WebAssembly (src/wire/wasm-records.ts) where every column has a fast kind, against the
// encoders' general path: the same bytes, or the same refusal, for every input — including
// the forms that must not take a fast path.

const session: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
const TYPES = ['int2', 'int4', 'int8', 'numeric', 'date', 'text', 'bpchar', 'varchar'] as const;
const encoder = (typname: string): FieldEncoder => encoderFor({ typname, typmod: -1, oid: 0 }, session)!;

const textFormat = (delimiter: string, nul = '\\N'): SplitFormat => ({ csv: false, delimiter: delimiter.charCodeAt(0), null: Buffer.from(nul), quote: 0x22, escape: 0x22 });

/** The splitters compared: fast paths with the WebAssembly records, fast paths in JavaScript only, the general path only. */
const VARIANTS = [
  { fastPaths: true, wasm: true },
  { fastPaths: true, wasm: false },
  { fastPaths: false, wasm: false },
] as const;

/** Encodes `input` with each variant; all must agree (bytes, count, or refusal). */
const splitters = new Map<string, RecordSplitter>();
function splitterFor(format: SplitFormat, typnames: readonly string[], options: (typeof VARIANTS)[number]): RecordSplitter {
  const key = JSON.stringify([format.delimiter, Buffer.from(format.null).toString(), typnames, options]);
  let s = splitters.get(key);
  if (s === undefined) splitters.set(key, (s = new RecordSplitter(format, typnames.map(encoder), options)));
  return s;
}

function agree(format: SplitFormat, typnames: readonly string[], input: Buffer, what: string): number | SplitRefusal {
  const results = VARIANTS.map((options) => {
    const out = new WireBuffer(16);
    const splitter = splitterFor(format, typnames, options);
    // In two pieces, as the writer sends a chunk, where the input has a record boundary in its middle.
    const cut = input.indexOf(0x0a, input.length >> 1) + 1;
    const split = cut > 0 && cut < input.length;
    const first = splitter.encode(split ? input.subarray(0, cut) : input, out);
    const second = typeof first === 'number' && split ? splitter.encode(input.subarray(cut), out, true) : 0;
    const r = typeof first !== 'number' ? first : typeof second !== 'number' ? { ...second, record: first + second.record } : first + second;
    return { r, bytes: Buffer.from(out.bytes.subarray(0, out.pos)).toString('hex') };
  });
  for (const k of [1, 2]) {
    assert.deepEqual(results[0]!.r, results[k]!.r, `${what}: result, ${JSON.stringify(VARIANTS[0])} vs ${JSON.stringify(VARIANTS[k])}`);
    if (typeof results[0]!.r === 'number') assert.equal(results[0]!.bytes, results[k]!.bytes, `${what}: bytes, ${JSON.stringify(VARIANTS[0])} vs ${JSON.stringify(VARIANTS[k])}`);
  }
  return results[0]!.r;
}

const digits = (rnd: () => number, n: number): string => Array.from({ length: n }, () => String(Math.floor(rnd() * 10))).join('');
const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

/** Values of a type: mostly what the fast path takes, and the edge forms that must not take it. */
function valueOf(rnd: () => number, typname: string): string {
  const sign = rnd() < 0.3 ? '-' : rnd() < 0.05 ? '+' : '';
  const edge = rnd() < 0.35;
  switch (typname) {
    case 'int2':
    case 'int4':
    case 'int8':
      if (edge) return pick(rnd, ['', ' 1', '1 ', '-', '+5', '1e3', '0x1F', '1_000', '00000000000000000001', '32767', '-32768', '32768', '2147483647', '-2147483648', '2147483648', '9223372036854775807', '-9223372036854775808', '9223372036854775808', '-0', digits(rnd, 16 + Math.floor(rnd() * 5)), 'NaN', '١']);
      return sign + digits(rnd, 1 + Math.floor(rnd() * (typname === 'int2' ? 5 : typname === 'int4' ? 10 : 17)));
    case 'numeric':
      if (edge)
        return pick(rnd, [
          '1e5', '1.5E-3', ' 1.5', '1.5 ', '', '.', '-.', '-', 'NaN', 'nan', 'Infinity', '-Infinity', 'inf', '1_000.5', '0x1F',
          digits(rnd, 1000), `${digits(rnd, 500)}.${digits(rnd, 500)}`, `0.${digits(rnd, 1000)}`, '-0', '-0.00', '00000000.0000', '000000000.5',
          '5.', '.5', '-.5', '99999999.9999', '100000000', '1.00000', '12345678.12345',
        ]);
      return `${sign}${digits(rnd, Math.floor(rnd() * 11))}${rnd() < 0.7 ? `.${digits(rnd, Math.floor(rnd() * 7))}` : ''}`;
    case 'date':
      if (edge) return pick(rnd, ['infinity', '-infinity', 'epoch', 'today', '2024-02-30', '2023-02-29', '2024-02-29', '0000-01-01', '0001-01-01', '9999-12-31', '2024-1-02', '2024-01-02 BC', ' 2024-01-02', '2024-01-02 ', '2024-13-01', '2024-00-10', '2024-01-00', '10000-01-01', '01/02/2024', '2024-01-02T00:00', '20240102']);
      return `${String(1 + Math.floor(rnd() * 9999)).padStart(4, '0')}-${String(1 + Math.floor(rnd() * 12)).padStart(2, '0')}-${String(1 + Math.floor(rnd() * 31)).padStart(2, '0')}`;
    default: {
      if (edge) return pick(rnd, ['', 'héllo', '日本', 'a\\tb', 'a\\\\b', '\\x41', '\\101', 'tab\\\tin', 'nul\\0x', ' blanks ', '\\.', 'back\\', '\xff'.repeat(2)]);
      const alphabet = 'abcXYZ 019.,-+_"\'';
      return Array.from({ length: Math.floor(rnd() * 30) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
    }
  }
}

describe('record splitter fast paths: the general path\'s bytes and refusals', () => {
  it('lineitem-like forms take the fast path and give the general path\'s bytes', () => {
    const types = ['int8', 'int4', 'int4', 'int4', 'numeric', 'numeric', 'numeric', 'numeric', 'bpchar', 'bpchar', 'date', 'date', 'date', 'bpchar', 'bpchar', 'varchar'];
    assert.ok(fastKinds(types.map(encoder), 0x7c).slice(0, types.length).every((k) => k !== KIND_NONE), 'every lineitem column has a fast path');
    const line = '1|155190|7706|1|17.00|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the\n';
    assert.equal(agree(textFormat('|'), types, Buffer.from(line.repeat(3)), 'lineitem'), 3);
  });

  for (const delimiter of ['\t', '|', '5', '.']) {
    it(`seeded random fields, one column per record, delimiter ${JSON.stringify(delimiter)}`, () => {
      const seed = Number(process.env.PGSURGE_FUZZ_SEED ?? 20261201);
      for (const typname of TYPES) {
        const rnd = prng(seed + typname.length * 7919 + delimiter.charCodeAt(0));
        let binary = 0;
        for (let i = 0; i < 1500; i++) {
          const v = valueOf(rnd, typname);
          const r = agree(textFormat(delimiter), [typname, 'int4'], Buffer.from(`${v}${delimiter}1\n`), `${typname} ${JSON.stringify(v)} (seed ${seed})`);
          if (typeof r === 'number') binary++;
        }
        // (A delimiter inside the values cuts them into more fields than there are columns.)
        if (delimiter === '\t' || delimiter === '|') assert.ok(binary > 700, `${typname}: ${binary} values encoded, the rest refused`);
      }
    });
  }

  it('seeded random records of every type, NULLs, escapes, line endings, several NULL strings', () => {
    const seed = Number(process.env.PGSURGE_FUZZ_SEED ?? 20261201);
    const rnd = prng(seed);
    for (let round = 0; round < 400; round++) {
      const nul = pick(rnd, ['\\N', '', 'NULL', '1', '0.5', '2024-01-02', 'x']);
      const delimiter = pick(rnd, ['\t', '|', ',']);
      const typnames = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick(rnd, TYPES));
      const eol = pick(rnd, ['\n', '\n', '\r\n']);
      const lines = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => {
        const fields = typnames.map((t) => (rnd() < 0.1 ? nul : valueOf(rnd, t).replaceAll(delimiter, '')));
        // Now and then a record with one field too many or too few, or another line ending.
        if (rnd() < 0.03) fields.push('1');
        if (rnd() < 0.03) fields.pop();
        return fields.join(delimiter) + (rnd() < 0.03 ? '\r\n' : eol);
      });
      agree(textFormat(delimiter, nul), typnames, Buffer.from(lines.join('')), `round ${round} (seed ${seed}): ${JSON.stringify(lines)} null ${JSON.stringify(nul)} types ${typnames}`);
    }
  });

  it('the NULL string is NULL even where it looks like a value the fast path takes', () => {
    const out = new WireBuffer(16);
    const r = new RecordSplitter(textFormat('|', '1'), [encoder('int4'), encoder('text')]).encode(Buffer.from('1|1\n2|x\n'), out);
    assert.equal(r, 2);
    assert.equal(Buffer.from(out.bytes.subarray(0, out.pos)).toString('hex'), ['0002', 'ffffffff', 'ffffffff', '0002', '00000004', '00000002', '00000001', '78'].join(''));
  });

  it('no fast path for number-like columns when the delimiter could be read as part of a number', () => {
    for (const d of '0123456789-.') assert.deepEqual([...fastKinds([encoder('int4'), encoder('numeric'), encoder('date')], d.charCodeAt(0))], [0, 0, 0, 0], d);
  });
});
