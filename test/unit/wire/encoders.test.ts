import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encoderFor } from '../../../src/codecs/index.js';
import { encodeHex, PG13, PG15 } from '../../helpers/wire-hex.js';

const hex = (...words: string[]): string => words.join('');

interface Case {
  readonly type: string;
  readonly input: string;
  /** Hex of length + value, or false: the encoder refuses it. */
  readonly expected: string | false;
  readonly session?: typeof PG15;
}

const cases: Case[] = [
  // integers
  { type: 'int2', input: '0', expected: hex('00000002', '0000') },
  { type: 'int2', input: '-1', expected: hex('00000002', 'ffff') },
  { type: 'int2', input: '32767', expected: hex('00000002', '7fff') },
  { type: 'int2', input: '-32768', expected: hex('00000002', '8000') },
  { type: 'int2', input: '+007', expected: hex('00000002', '0007') },
  { type: 'int2', input: '32768', expected: false },
  { type: 'int2', input: '-32769', expected: false },
  { type: 'int4', input: '2147483647', expected: hex('00000004', '7fffffff') },
  { type: 'int4', input: '-2147483648', expected: hex('00000004', '80000000') },
  { type: 'int4', input: '-0', expected: hex('00000004', '00000000') },
  { type: 'int4', input: '000000000000000042', expected: hex('00000004', '0000002a') },
  { type: 'int4', input: '2147483648', expected: false },
  { type: 'int4', input: '', expected: false },
  { type: 'int4', input: '-', expected: false },
  { type: 'int4', input: ' 1', expected: false },
  { type: 'int4', input: '1 ', expected: false },
  { type: 'int4', input: '1_000', expected: false },
  { type: 'int4', input: '0x1f', expected: false },
  { type: 'int4', input: '1.0', expected: false },
  { type: 'int8', input: '9223372036854775807', expected: hex('00000008', '7fffffffffffffff') },
  { type: 'int8', input: '-9223372036854775808', expected: hex('00000008', '8000000000000000') },
  { type: 'int8', input: '-1', expected: hex('00000008', 'ffffffffffffffff') },
  { type: 'int8', input: '4294967296', expected: hex('00000008', '0000000100000000') },
  { type: 'int8', input: '-4294967297', expected: hex('00000008', 'fffffffeffffffff') },
  { type: 'int8', input: '999999999999999', expected: hex('00000008', '00038d7ea4c67fff') },
  { type: 'int8', input: '1234567890123456789', expected: hex('00000008', '112210f47de98115') },
  { type: 'int8', input: '9223372036854775808', expected: false },
  { type: 'int8', input: '1e3', expected: false },
  // numeric: ndigits, weight, sign, dscale, digits
  { type: 'numeric', input: '12345.678', expected: hex('0000000e', '0003', '0001', '0000', '0003', '0001', '0929', '1a7c') },
  { type: 'numeric', input: '0', expected: hex('00000008', '0000', '0000', '0000', '0000') },
  { type: 'numeric', input: '-0.00', expected: hex('00000008', '0000', '0000', '0000', '0002') },
  { type: 'numeric', input: '1.50', expected: hex('0000000c', '0002', '0000', '0000', '0002', '0001', '1388') },
  { type: 'numeric', input: '-1.5', expected: hex('0000000c', '0002', '0000', '4000', '0001', '0001', '1388') },
  { type: 'numeric', input: '.5', expected: hex('0000000a', '0001', 'ffff', '0000', '0001', '1388') },
  { type: 'numeric', input: '5.', expected: hex('0000000a', '0001', '0000', '0000', '0000', '0005') },
  { type: 'numeric', input: '+0005', expected: hex('0000000a', '0001', '0000', '0000', '0000', '0005') },
  { type: 'numeric', input: '10000', expected: hex('0000000a', '0001', '0001', '0000', '0000', '0001') },
  { type: 'numeric', input: '0.00001', expected: hex('0000000a', '0001', 'fffe', '0000', '0005', '03e8') },
  { type: 'numeric', input: '1.00001', expected: hex('0000000e', '0003', '0000', '0000', '0005', '0001', '0000', '03e8') },
  { type: 'numeric', input: 'NaN', expected: hex('00000008', '0000', '0000', 'c000', '0000') },
  { type: 'numeric', input: 'nan', expected: hex('00000008', '0000', '0000', 'c000', '0000') },
  { type: 'numeric', input: 'Infinity', expected: hex('00000008', '0000', '0000', 'd000', '0020') },
  { type: 'numeric', input: '-infinity', expected: hex('00000008', '0000', '0000', 'f000', '0020') },
  { type: 'numeric', input: '+Infinity', expected: hex('00000008', '0000', '0000', 'd000', '0020') },
  { type: 'numeric', input: 'Infinity', expected: false, session: PG13 },
  { type: 'numeric', input: 'NaN', expected: hex('00000008', '0000', '0000', 'c000', '0000'), session: PG13 },
  { type: 'numeric', input: '-NaN', expected: false },
  { type: 'numeric', input: 'inf', expected: false },
  { type: 'numeric', input: '1e5', expected: false },
  { type: 'numeric', input: '.', expected: false },
  { type: 'numeric', input: '', expected: false },
  { type: 'numeric', input: '+', expected: false },
  { type: 'numeric', input: '1.2.3', expected: false },
  { type: 'numeric', input: ' 1', expected: false },
  { type: 'numeric', input: '1_000', expected: false },
  // date: days since 2000-01-01
  { type: 'date', input: '2000-01-01', expected: hex('00000004', '00000000') },
  { type: 'date', input: '2000-01-02', expected: hex('00000004', '00000001') },
  { type: 'date', input: '1999-12-31', expected: hex('00000004', 'ffffffff') },
  { type: 'date', input: '2024-02-29', expected: hex('00000004', (8825).toString(16).padStart(8, '0')) },
  { type: 'date', input: '0001-01-01', expected: hex('00000004', (-730119 >>> 0).toString(16)) },
  { type: 'date', input: '9999-12-31', expected: hex('00000004', (2921939).toString(16).padStart(8, '0')) },
  { type: 'date', input: '2023-02-29', expected: false },
  { type: 'date', input: '1900-02-29', expected: false },
  { type: 'date', input: '2000-02-29', expected: hex('00000004', (59).toString(16).padStart(8, '0')) },
  { type: 'date', input: '2024-04-31', expected: false },
  { type: 'date', input: '2024-13-01', expected: false },
  { type: 'date', input: '0000-01-01', expected: false },
  { type: 'date', input: '2024-1-01', expected: false },
  { type: 'date', input: 'infinity', expected: false },
  { type: 'date', input: 'epoch', expected: false },
  { type: 'date', input: '2024-01-01 BC', expected: false },
  { type: 'date', input: '2024-01-01 ', expected: false },
  { type: 'date', input: '01/02/2024', expected: false },
  // floats: IEEE 754 big-endian
  { type: 'float8', input: '1', expected: hex('00000008', '3ff0000000000000') },
  { type: 'float8', input: '-0', expected: hex('00000008', '8000000000000000') },
  { type: 'float8', input: '0.1', expected: hex('00000008', '3fb999999999999a') },
  { type: 'float8', input: '.5', expected: hex('00000008', '3fe0000000000000') },
  { type: 'float8', input: '5.', expected: hex('00000008', '4014000000000000') },
  { type: 'float8', input: '1e300', expected: hex('00000008', '7e37e43c8800759c') },
  { type: 'float8', input: '1.7976931348623157e308', expected: hex('00000008', '7fefffffffffffff') },
  { type: 'float8', input: '2.2250738585072014E-308', expected: hex('00000008', '0010000000000000') },
  { type: 'float8', input: '0.30000000000000000000000001', expected: hex('00000008', '3fd3333333333333') },
  { type: 'float8', input: 'NaN', expected: hex('00000008', '7ff8000000000000') },
  { type: 'float8', input: 'infinity', expected: hex('00000008', '7ff0000000000000') },
  { type: 'float8', input: '-Infinity', expected: hex('00000008', 'fff0000000000000') },
  { type: 'float8', input: '1e309', expected: false },
  { type: 'float8', input: '1e-400', expected: false },
  { type: 'float8', input: '4e-320', expected: false },
  { type: 'float8', input: 'inf', expected: false },
  { type: 'float8', input: '0x10', expected: false },
  { type: 'float8', input: '1e', expected: false },
  { type: 'float8', input: '.', expected: false },
  { type: 'float8', input: '-.e1', expected: false },
  { type: 'float8', input: ' 1', expected: false },
  { type: 'float8', input: '-NaN', expected: false },
  { type: 'float4', input: '1', expected: hex('00000004', '3f800000') },
  { type: 'float4', input: '0.1', expected: hex('00000004', '3dcccccd') },
  { type: 'float4', input: '3.4028235e38', expected: hex('00000004', '7f7fffff') },
  { type: 'float4', input: '3.5e38', expected: false },
  { type: 'float4', input: '1e-46', expected: false },
  { type: 'float4', input: '1e-40', expected: false },
  { type: 'float4', input: 'NaN', expected: hex('00000004', '7fc00000') },
  { type: 'float4', input: '-infinity', expected: hex('00000004', 'ff800000') },
  // 1 + 2^-24 is exactly halfway between the floats 1 and 1 + 2^-23: strtof and fround(double) could differ
  { type: 'float4', input: '1.000000059604644775390625', expected: false },
  // just above that midpoint, but its nearest double IS the midpoint: strtof says 1 + 2^-23, fround says 1
  { type: 'float4', input: '1.0000000596046448', expected: false },
  { type: 'float4', input: '1.00000006', expected: hex('00000004', '3f800001') },
  // bool
  { type: 'bool', input: 't', expected: hex('00000001', '01') },
  { type: 'bool', input: 'TRUE', expected: hex('00000001', '01') },
  { type: 'bool', input: 'tru', expected: hex('00000001', '01') },
  { type: 'bool', input: 'yes', expected: hex('00000001', '01') },
  { type: 'bool', input: 'on', expected: hex('00000001', '01') },
  { type: 'bool', input: '1', expected: hex('00000001', '01') },
  { type: 'bool', input: 'f', expected: hex('00000001', '00') },
  { type: 'bool', input: 'False', expected: hex('00000001', '00') },
  { type: 'bool', input: 'no', expected: hex('00000001', '00') },
  { type: 'bool', input: 'of', expected: hex('00000001', '00') },
  { type: 'bool', input: 'OFF', expected: hex('00000001', '00') },
  { type: 'bool', input: '0', expected: hex('00000001', '00') },
  { type: 'bool', input: 'o', expected: false },
  { type: 'bool', input: 'truex', expected: false },
  { type: 'bool', input: 'offf', expected: false },
  { type: 'bool', input: ' t', expected: false },
  { type: 'bool', input: '', expected: false },
  { type: 'bool', input: '2', expected: false },
  // timestamp: µs since 2000-01-01
  { type: 'timestamp', input: '2000-01-01 00:00:00', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamp', input: '2000-01-01', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamp', input: '2000-01-01T00:00:01', expected: hex('00000008', '00000000000f4240') },
  { type: 'timestamp', input: '2000-01-01 00:00:00.000001', expected: hex('00000008', '0000000000000001') },
  { type: 'timestamp', input: '2000-01-01 00:00:00.5', expected: hex('00000008', '000000000007a120') },
  { type: 'timestamp', input: '1999-12-31 23:59:59.999999', expected: hex('00000008', 'ffffffffffffffff') },
  { type: 'timestamp', input: '2000-01-01 12:34', expected: hex('00000008', (45240n * 1000000n).toString(16).padStart(16, '0')) },
  { type: 'timestamp', input: '0001-01-01 00:00:00', expected: hex('00000008', BigInt.asUintN(64, -730119n * 86400000000n).toString(16)) },
  { type: 'timestamp', input: '9999-12-31 23:59:59.999999', expected: hex('00000008', (2921940n * 86400000000n - 1n).toString(16).padStart(16, '0')) },
  { type: 'timestamp', input: '2000-01-01 00:00:00+02', expected: false },
  { type: 'timestamp', input: '2000-01-01 24:00:00', expected: false },
  { type: 'timestamp', input: '2000-01-01 23:59:60', expected: false },
  { type: 'timestamp', input: '2000-01-01 00:00:00.1234567', expected: false },
  { type: 'timestamp', input: '2000-01-01 00:00:00.', expected: false },
  { type: 'timestamp', input: '2000-01-01 0:00:00', expected: false },
  { type: 'timestamp', input: 'epoch', expected: false },
  { type: 'timestamp', input: 'now', expected: false },
  { type: 'timestamp', input: '2000-01-01 00:00:00 BC', expected: false },
  { type: 'timestamptz', input: '2000-01-01 00:00:00+00', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamptz', input: '2000-01-01 02:00:00+02', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamptz', input: '2000-01-01 05:30:00+05:30', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamptz', input: '1999-12-31 18:30:00-0530', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamptz', input: '2000-01-01 00:00:00', expected: hex('00000008', '0000000000000000') },
  { type: 'timestamptz', input: '2000-01-01 00:00:00', expected: false, session: { ...PG15, timeZone: 'Europe/Paris' } },
  { type: 'timestamptz', input: '2000-01-01 01:00:00+01', expected: hex('00000008', '0000000000000000'), session: { ...PG15, timeZone: 'Europe/Paris' } },
  { type: 'timestamptz', input: '2000-01-01 00:00:00', expected: hex('00000008', '0000000000000000'), session: { ...PG15, timeZone: 'Etc/UTC' } },
  { type: 'timestamptz', input: '2000-01-01 00:00:00Z', expected: false },
  { type: 'timestamptz', input: '2000-01-01 00:00:00 UTC', expected: false },
  { type: 'timestamptz', input: '2000-01-01 00:00:00+16', expected: false },
  { type: 'timestamptz', input: '2000-01-01 00:00:00+1', expected: false },
  { type: 'timestamptz', input: '2000-01-01 00:00:00+01:0', expected: false },
  { type: 'timestamptz', input: 'infinity', expected: false },
  // bytea
  { type: 'bytea', input: '\\x', expected: hex('00000000') },
  { type: 'bytea', input: '\\xDEADbeef', expected: hex('00000004', 'deadbeef') },
  { type: 'bytea', input: '\\xabc', expected: false },
  { type: 'bytea', input: '\\xde ad', expected: false },
  { type: 'bytea', input: '\\xzz', expected: false },
  { type: 'bytea', input: 'abc', expected: hex('00000003', '616263') },
  { type: 'bytea', input: 'a\\\\b', expected: hex('00000003', '615c62') },
  { type: 'bytea', input: '\\000\\377', expected: hex('00000002', '00ff') },
  { type: 'bytea', input: '\\400', expected: false },
  { type: 'bytea', input: '\\01', expected: false },
  { type: 'bytea', input: 'a\\', expected: false },
  { type: 'bytea', input: '\\X00', expected: false },
  { type: 'bytea', input: 'é', expected: false },
  // uuid
  { type: 'uuid', input: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', expected: hex('00000010', 'a0eebc999c0b4ef8bb6d6bb9bd380a11') },
  { type: 'uuid', input: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', expected: hex('00000010', 'a0eebc999c0b4ef8bb6d6bb9bd380a11') },
  { type: 'uuid', input: 'a0eebc999c0b4ef8bb6d6bb9bd380a11', expected: hex('00000010', 'a0eebc999c0b4ef8bb6d6bb9bd380a11') },
  { type: 'uuid', input: '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', expected: false },
  { type: 'uuid', input: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g', expected: false },
  { type: 'uuid', input: 'a0eebc999-c0b-4ef8-bb6d-6bb9bd380a11', expected: false },
  // json, jsonb: the text as written; jsonb after its version byte
  { type: 'json', input: '{"a": 1}', expected: hex('00000008', Buffer.from('{"a": 1}').toString('hex')) },
  { type: 'jsonb', input: '{"a": 1}', expected: hex('00000009', '01', Buffer.from('{"a": 1}').toString('hex')) },
  { type: 'jsonb', input: '', expected: hex('00000001', '01') },
  // text
  { type: 'text', input: '', expected: hex('00000000') },
  { type: 'text', input: 'abc', expected: hex('00000003', '616263') },
  { type: 'varchar', input: 'héllo', expected: hex('00000006', Buffer.from('héllo').toString('hex')) },
  { type: 'bpchar', input: 'a  ', expected: hex('00000003', '612020') },
  { type: 'text', input: '😀', expected: hex('00000004', 'f09f9880') },
  { type: 'name', input: 'x'.repeat(63), expected: hex('0000003f', '78'.repeat(63)) },
  { type: 'name', input: 'x'.repeat(64), expected: false },
];

describe('encoders: input text → the bytes typsend(typinput(text)) gives, or a refusal', () => {
  for (const c of cases) {
    it(`${c.type} '${c.input.length > 20 ? c.input.slice(0, 20) + '…' : c.input}' → ${c.expected === false ? 'refused' : c.expected}`, () => {
      assert.equal(encodeHex(c.type, c.input, c.session), c.expected);
    });
  }

  const badBytes: [string, number[]][] = [
    ['NUL', [0x61, 0x00, 0x62]],
    ['lone continuation byte', [0x80]],
    ['truncated sequence', [0x61, 0xc3]],
    ['overlong slash', [0xc0, 0xaf]],
    ['surrogate', [0xed, 0xa0, 0x80]],
    ['past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['Latin-1 é', [0xe9]],
  ];
  for (const [name, bytes] of badBytes) {
    it(`text refuses ${name}`, () => {
      assert.equal(encodeHex('text', Uint8Array.from(bytes)), false);
    });
  }

  it('a long numeric: 1000 digits each side of the point', () => {
    const s = '9'.repeat(1000) + '.' + '1'.repeat(1000);
    const h = encodeHex('numeric', s);
    assert.ok(h);
    const b = Buffer.from(h, 'hex');
    assert.equal(b.readInt16BE(4), 500); // ndigits
    assert.equal(b.readInt16BE(6), 249); // weight
    assert.equal(b.readUInt16BE(10), 1000); // dscale
    assert.equal(b.readInt16BE(12), 9999);
    assert.equal(b.readInt16BE(12 + 2 * 250), 1111);
  });

  it('jsonb refuses invalid UTF-8', () => {
    assert.equal(encodeHex('jsonb', Uint8Array.from([0x22, 0xff, 0x22])), false);
  });

  it('no encoder for other types, nor for text types on a non-UTF8 server', () => {
    assert.equal(encoderFor({ typname: 'interval', typmod: -1, oid: 1186 }, PG15), undefined);
    assert.equal(encoderFor({ typname: 'text', typmod: -1, oid: 25 }, { ...PG15, serverEncoding: 'LATIN1' }), undefined);
  });
});

describe('numeric: the small-value shortcut (≤ 8 integer digits, ≤ 4 after the point) equals the grouping done by hand', () => {
  /** numeric_in's digits, weight, sign and dscale, computed on strings. */
  function reference(s: string): string {
    let neg = s.startsWith('-');
    if (neg || s.startsWith('+')) s = s.slice(1);
    const [intText = '', frac = ''] = s.split('.');
    const int = intText.replace(/^0+/, '');
    const padded = '0'.repeat((4 - (int.length % 4)) % 4) + int;
    const groups: number[] = [];
    for (let k = 0; k < padded.length; k += 4) groups.push(Number(padded.slice(k, k + 4)));
    let weight = groups.length - 1;
    const fracPadded = frac + '0'.repeat((4 - (frac.length % 4)) % 4);
    for (let k = 0; k < fracPadded.length; k += 4) groups.push(Number(fracPadded.slice(k, k + 4)));
    while (groups.length > 0 && groups[0] === 0) {
      groups.shift();
      weight--;
    }
    while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
    if (groups.length === 0) {
      weight = 0;
      neg = false;
    }
    const b = Buffer.alloc(12 + 2 * groups.length);
    b.writeInt32BE(8 + 2 * groups.length, 0);
    b.writeInt16BE(groups.length, 4);
    b.writeInt16BE(weight, 6);
    b.writeUInt16BE(neg ? 0x4000 : 0, 8);
    b.writeUInt16BE(frac.length, 10);
    groups.forEach((g, k) => b.writeInt16BE(g, 12 + 2 * k));
    return b.toString('hex');
  }

  it('20 000 seeded values with zeros in every position', () => {
    let seed = 42;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const digit = (): string => (random() < 0.35 ? '0' : String(Math.floor(random() * 10)));
    for (let t = 0; t < 20000; t++) {
      const intLen = Math.floor(random() * 10);
      const fracLen = Math.floor(random() * 6);
      const s = `${random() < 0.3 ? '-' : ''}${Array.from({ length: intLen }, digit).join('')}${fracLen > 0 || intLen === 0 ? '.' : ''}${Array.from({ length: fracLen || (intLen === 0 ? 1 : 0) }, digit).join('')}`;
      assert.equal(encodeHex('numeric', s), reference(s), s);
    }
  });
});
