import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Format } from '../../../src/input/formats.js';
import { WireBuffer, type FieldEncoder } from '../../../src/codecs/field-encoder.js';
import { RecordSplitter, splitFormatOf, type SplitFormat, type SplitRefusal } from '../../../src/wire/record-splitter.js';
import { decodeRecords, type DecodedRecord } from '../../../src/wire/decode-records.js';
import { wireFormat } from '../../../src/wire/wire-format.js';
import { prng } from '../../helpers/lineitem-data.js';

/** Encodes a value as its bytes (what text's receive function reads); refuses the value `refuse`. */
const bytes = (refuse?: string): FieldEncoder => ({
  encode(src, start, end, out) {
    if (refuse !== undefined && Buffer.from(src.subarray(start, end)).toString('utf8') === refuse) {
      out.reserve(3);
      out.bytes[out.pos] = 0x99; // written past pos, but a refusal does not count it
      return false;
    }
    const n = end - start;
    out.reserve(4 + n);
    new DataView(out.bytes.buffer, out.bytes.byteOffset).setInt32(out.pos, n);
    out.bytes.set(src.subarray(start, end), out.pos + 4);
    out.pos += 4 + n;
    return true;
  },
});

/** Binary COPY tuples back into field values, the way a receive function sees them. */
function readTuples(buf: Uint8Array): DecodedRecord[] {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: DecodedRecord[] = [];
  let p = 0;
  while (p < buf.length) {
    const n = v.getInt16(p);
    p += 2;
    const r: DecodedRecord = [];
    for (let i = 0; i < n; i++) {
      const len = v.getInt32(p);
      p += 4;
      if (len < 0) r.push(null);
      else {
        r.push(Buffer.from(buf.subarray(p, p + len)).toString('utf8'));
        p += len;
      }
    }
    out.push(r);
  }
  return out;
}

function formatOf(format: Format): SplitFormat {
  const f = splitFormatOf(wireFormat({ table: 't', schema: undefined, format, file: 'x' }));
  assert.equal(typeof f, 'object');
  return f as SplitFormat;
}

function encode(format: SplitFormat, columns: number, data: string | Buffer, encoders?: FieldEncoder[]): DecodedRecord[] | SplitRefusal {
  const splitter = new RecordSplitter(format, encoders ?? Array.from({ length: columns }, () => bytes()));
  const out = new WireBuffer(16);
  const r = splitter.encode(Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'), out);
  if (typeof r !== 'number') {
    assert.equal(out.pos, 0, 'a refusal leaves the buffer where it was');
    return r;
  }
  const tuples = readTuples(out.bytes.subarray(0, out.pos));
  assert.equal(tuples.length, r);
  return tuples;
}

interface Case {
  name: string;
  format: Format;
  input: string;
  columns: number;
}

// Every case is also decoded by decode-records (the INSERT writer's reading of COPY), which must agree.
const agreeing: Case[] = [
  { name: 'plain tab fields', format: 'text', input: 'a\tb\tc\n1\t2\t3\n', columns: 3 },
  { name: '\\N is NULL, empty is empty', format: 'text', input: '1\t\\N\t\n', columns: 3 },
  { name: 'escaped \\N is text', format: 'text', input: '\\\\N\tx\\N\n', columns: 2 },
  { name: 'simple escapes', format: 'text', input: 'a\\tb\\nc\\rd\\\\e\\bf\\fg\\vh\tz\n', columns: 2 },
  { name: 'escaped delimiter', format: 'text', input: 'a\\\tb\tc\n', columns: 2 },
  { name: 'octal and hex, UTF-8 from bytes', format: 'text', input: '\\101\\7x\\0619\t\\303\\251t\\xc3\\xa9\\x4g\n', columns: 2 },
  { name: 'escaped newline is data', format: 'text', input: 'ab\\\ncd\tx\n', columns: 2 },
  { name: 'CRLF endings throughout', format: 'text', input: 'a\tb\r\nc\td\r\n', columns: 2 },
  { name: 'unicode', format: 'text', input: 'héllo\twörld ✓ 日本\n', columns: 2 },
  { name: 'tbl', format: 'tbl', input: '1|abc|2.50\n2|\\N|\n', columns: 3 },
  { name: 'tbl escapes', format: 'tbl', input: 'a\\|b|c\\\\d|\\t\n', columns: 3 },
  { name: 'csv plain', format: 'csv', input: '1,abc,2.5\n', columns: 3 },
  { name: 'csv NULL vs quoted empty', format: 'csv', input: ',"",x\n', columns: 3 },
  { name: 'csv quotes, doubled quotes, delimiter and newline inside', format: 'csv', input: '"a,b","say ""hi""","two\nlines"\n', columns: 3 },
  { name: 'csv quote opening mid-field', format: 'csv', input: 'ab"c,d"e,f\n', columns: 2 },
  { name: 'csv CR inside quotes, CRLF endings', format: 'csv', input: '"a\rb",c\r\nd,e\r\n', columns: 2 },
  { name: 'csv backslashes are data', format: 'csv', input: '\\N,a\\b\n', columns: 2 },
];

describe('record splitter: the same fields as COPY reads (decode-records agrees)', () => {
  for (const c of agreeing) {
    it(c.name, () => {
      assert.deepEqual(encode(formatOf(c.format), c.columns, c.input), decodeRecords(Buffer.from(c.input), c.format));
    });
  }
});

/** Random records of tricky fields, framed for `format` by an independent writer. */
function randomInput(format: 'text' | 'csv', rows: number, cols: number, seed: number): string {
  const rnd = prng(seed);
  const alphabet = ['a', 'Z', '0', ' ', ',', '\t', '|', '"', '\\', '\n', '\r', 'é', '日', '✓'];
  const field = (): string | null => {
    if (rnd() < 0.1) return null;
    let s = '';
    const n = Math.floor(rnd() * 6);
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    return s;
  };
  const text = (f: string | null): string => (f === null ? '\\N' : f.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r'));
  const csv = (f: string | null): string => (f === null ? '' : f === '' || /[",\n\r]/.test(f) || rnd() < 0.2 ? `"${f.replace(/"/g, '""')}"` : f);
  const lines: string[] = [];
  for (let r = 0; r < rows; r++) lines.push(Array.from({ length: cols }, field).map(format === 'text' ? text : csv).join(format === 'text' ? '\t' : ','));
  return `${lines.join('\n')}\n`;
}

describe('record splitter: seeded random records, against decode-records', () => {
  for (const format of ['text', 'csv'] as const) {
    it(`${format}: 20 seeds × 30 records`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const input = randomInput(format, 30, 4, seed);
        assert.deepEqual(encode(formatOf(format), 4, input), decodeRecords(Buffer.from(input), format), `seed ${seed}`);
      }
    });
  }
});

describe('record splitter: cut at every offset', () => {
  for (const format of ['text', 'csv'] as const) {
    it(`${format}: a prefix that ends at a record boundary gives those records; any other prefix is refused`, () => {
      const input = Buffer.from(randomInput(format, 12, 3, 7));
      const all = encode(formatOf(format), 3, input) as DecodedRecord[];
      // Record boundaries, from the records' own bytes.
      const ends = new Set<number>([0]);
      let consumed = 0;
      for (let k = 1; k <= all.length; k++) {
        // The prefix holding k records is the shortest one that decodes to k records.
        for (let at = consumed + 1; at <= input.length; at++) {
          const r = encode(formatOf(format), 3, input.subarray(0, at));
          if (Array.isArray(r) && r.length === k) {
            ends.add(at);
            consumed = at;
            break;
          }
        }
      }
      assert.equal(consumed, input.length, 'every record found');
      for (let at = 0; at <= input.length; at++) {
        const head = encode(formatOf(format), 3, input.subarray(0, at));
        if (!ends.has(at)) {
          assert.ok(!Array.isArray(head), `offset ${at} (mid-record) is refused`);
          continue;
        }
        const tail = encode(formatOf(format), 3, input.subarray(at));
        assert.ok(Array.isArray(head) && Array.isArray(tail), `offset ${at}`);
        assert.deepEqual([...head, ...tail], all, `cut at ${at}`);
      }
    });
  }
});

describe('record splitter: what sends a chunk to text', () => {
  const refusals: { name: string; format: Format; input: string; columns: number; record: number; why: RegExp; value?: string; encoders?: FieldEncoder[] }[] = [
    { name: 'too few fields', format: 'tbl', input: '1|2|3\n4|5\n', columns: 3, record: 2, why: /2 fields where the table has 3/ },
    { name: 'too many fields', format: 'text', input: 'a\tb\tc\n', columns: 2, record: 1, why: /more fields/ },
    { name: 'a value the encoder refuses', format: 'tbl', input: '1|2000-01-01\n2|infinity\n', columns: 2, record: 2, why: /cannot encode/, value: 'infinity', encoders: [bytes(), bytes('infinity')] },
    { name: 'an unescaped value the encoder refuses', format: 'text', input: 'a\\x41\n', columns: 1, record: 1, why: /cannot encode/, value: 'aA', encoders: [bytes('aA')] },
    { name: 'a quoted value the encoder refuses', format: 'csv', input: '"x,y"\n', columns: 1, record: 1, why: /cannot encode/, value: 'x,y', encoders: [bytes('x,y')] },
    { name: 'a lone CR', format: 'text', input: 'a\rb\n', columns: 1, record: 1, why: /carriage return/ },
    { name: 'LF after CRLF', format: 'text', input: 'a\r\nb\n', columns: 1, record: 2, why: /line ending/ },
    { name: 'CRLF after LF', format: 'csv', input: 'a\nb\r\n', columns: 1, record: 2, why: /carriage return/ },
    { name: 'the end-of-data marker in text', format: 'text', input: 'a\n\\.\n', columns: 1, record: 2, why: /end-of-data/ },
    { name: '\\. inside a text field', format: 'text', input: 'a\\.b\n', columns: 1, record: 1, why: /end-of-data/ },
    { name: 'the end-of-data marker in CSV', format: 'csv', input: 'a\n\\.\n', columns: 1, record: 2, why: /end-of-data/ },
    { name: 'an unterminated quote', format: 'csv', input: '"abc\n', columns: 1, record: 1, why: /unterminated/ },
    { name: 'no final newline', format: 'text', input: 'a\nb', columns: 1, record: 2, why: /without its newline/ },
  ];
  for (const c of refusals) {
    it(c.name, () => {
      const r = encode(formatOf(c.format), c.columns, c.input, c.encoders) as SplitRefusal;
      assert.ok(!Array.isArray(r), 'refused');
      assert.equal(r.record, c.record);
      assert.match(r.why, c.why);
      if (c.value !== undefined) assert.equal(r.value, c.value);
    });
  }
});

describe('record splitter: COPY options', () => {
  it('a NULL string of the user\'s, compared before unescaping; another delimiter', () => {
    const f = splitFormatOf({ format: 'text', delimiter: ';', null: 'NA' }) as SplitFormat;
    assert.deepEqual(encode(f, 3, 'NA;\\N;N\\A\n'), [[null, 'N', 'NA']]);
  });
  it('CSV with its own quote, escape and NULL string; a quoted NULL string is a value', () => {
    const f = splitFormatOf({ format: 'csv', delimiter: ';', quote: "'", escape: '\\', null: 'NULL' }) as SplitFormat;
    assert.deepEqual(encode(f, 4, "NULL;'NULL';'it\\'s';'a\\b'\n"), [[null, 'NULL', "it's", 'a\\b']]);
  });
  it('a delimiter of more than one byte has no split format', () => {
    assert.match(splitFormatOf({ format: 'text', delimiter: '§' }) as string, /delimiter/);
  });
});

describe('record splitter: a chunk encoded in pieces', () => {
  it('pieces cut at newlines (continuing) give the bytes of the whole, and keep the first line ending', () => {
    const text = formatOf('text');
    const data = Buffer.from('1\ta\\tb\n2\t\\N\n3\tc\n4\td\n', 'utf8');
    const whole = new WireBuffer(16);
    assert.equal(new RecordSplitter(text, [bytes(), bytes()]).encode(data, whole), 4);
    for (let cut = 1; cut < data.length; cut++) {
      const nl = data.indexOf(0x0a, cut - 1);
      if (nl < 0 || nl + 1 >= data.length) continue;
      const splitter = new RecordSplitter(text, [bytes(), bytes()]);
      const out = new WireBuffer(16);
      assert.equal(splitter.encode(data.subarray(0, nl + 1), out), data.subarray(0, nl + 1).toString().split('\n').length - 1);
      assert.equal(typeof splitter.encode(data.subarray(nl + 1), out, true), 'number');
      assert.deepEqual(Buffer.from(out.bytes.subarray(0, out.pos)), Buffer.from(whole.bytes.subarray(0, whole.pos)), `cut after byte ${nl}`);
    }
    // The second piece's CRLF is not the first piece's line ending: refused, as one whole COPY would refuse it.
    const splitter = new RecordSplitter(text, [bytes(), bytes()]);
    const out = new WireBuffer(16);
    assert.equal(splitter.encode(Buffer.from('1\ta\n'), out), 1);
    const r = splitter.encode(Buffer.from('2\tb\r\n'), out, true);
    assert.equal(typeof r, 'object');
    assert.match((r as SplitRefusal).why, /carriage return|line ending/);
  });
});
