import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER, writeNull, writeRaw, writeTupleStart } from '../../../src/codecs/binary-copy.js';
import { WireBuffer } from '../../../src/codecs/field-encoder.js';
import {
  NUMERIC_NAN,
  NUMERIC_NINF,
  NUMERIC_PINF,
  writeBool,
  writeBytea,
  writeDateDays,
  writeFloat4,
  writeFloat8,
  writeInt16,
  writeInt32,
  writeInt64,
  writeJsonb,
  writeNumericFromDecimal,
  writeNumericSpecial,
  writeText,
  writeTimestampMicros,
  writeUuid,
} from '../../../src/codecs/index.js';
import { encodeHex } from '../../helpers/wire-hex.js';

function written(write: (out: WireBuffer) => unknown): string {
  const out = new WireBuffer(4); // small, so the writers' reserve() has to grow it
  out.pos = 1;
  write(out);
  return Buffer.from(out.bytes.subarray(1, out.pos)).toString('hex');
}

describe('typed writers (for typed sources) write what the text encoders write for the same value', () => {
  const same: [string, (out: WireBuffer) => unknown, string, string][] = [
    ['int2', (o) => writeInt16(o, -32768), 'int2', '-32768'],
    ['int4', (o) => writeInt32(o, 123456789), 'int4', '123456789'],
    ['int8 bigint', (o) => writeInt64(o, -9223372036854775808n), 'int8', '-9223372036854775808'],
    ['int8 number', (o) => writeInt64(o, -4294967297), 'int8', '-4294967297'],
    ['float4', (o) => writeFloat4(o, 0.1), 'float4', '0.1'],
    ['float4 NaN', (o) => writeFloat4(o, NaN), 'float4', 'NaN'],
    ['float8', (o) => writeFloat8(o, -1.5e-7), 'float8', '-1.5e-7'],
    ['float8 -0', (o) => writeFloat8(o, -0), 'float8', '-0'],
    ['float8 NaN', (o) => writeFloat8(o, NaN), 'float8', 'NaN'],
    ['bool', (o) => writeBool(o, true), 'bool', 't'],
    ['date', (o) => writeDateDays(o, 8825), 'date', '2024-02-29'],
    ['timestamp', (o) => writeTimestampMicros(o, -730119n * 86400000000n), 'timestamp', '0001-01-01 00:00:00'],
    ['timestamptz', (o) => writeTimestampMicros(o, 1n), 'timestamptz', '2000-01-01 00:00:00.000001+00'],
    ['numeric 12345.678', (o) => writeNumericFromDecimal(o, 12345678n, 3), 'numeric', '12345.678'],
    ['numeric -0.05', (o) => writeNumericFromDecimal(o, -5n, 2), 'numeric', '-0.05'],
    ['numeric 0.00', (o) => writeNumericFromDecimal(o, 0n, 2), 'numeric', '0.00'],
    ['numeric 1.50', (o) => writeNumericFromDecimal(o, 150n, 2), 'numeric', '1.50'],
    ['numeric scale 0', (o) => writeNumericFromDecimal(o, 100000000n, 0), 'numeric', '100000000'],
    ['numeric negative scale', (o) => writeNumericFromDecimal(o, 12n, -3), 'numeric', '12000'],
    ['numeric 38 digits', (o) => writeNumericFromDecimal(o, 12345678901234567890123456789012345678n, 10), 'numeric', '1234567890123456789012345678.9012345678'],
    ['numeric NaN', (o) => writeNumericSpecial(o, NUMERIC_NAN), 'numeric', 'NaN'],
    ['numeric +Infinity', (o) => writeNumericSpecial(o, NUMERIC_PINF), 'numeric', 'Infinity'],
    ['numeric -Infinity', (o) => writeNumericSpecial(o, NUMERIC_NINF), 'numeric', '-Infinity'],
    ['text', (o) => writeText(o, Buffer.from('héllo')), 'text', 'héllo'],
    ['bytea', (o) => writeBytea(o, Uint8Array.of(0xde, 0xad)), 'bytea', '\\xdead'],
    ['uuid', (o) => writeUuid(o, Buffer.from('a0eebc999c0b4ef8bb6d6bb9bd380a11', 'hex')), 'uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['jsonb', (o) => writeJsonb(o, Buffer.from('{"a": 1}')), 'jsonb', '{"a": 1}'],
  ];
  for (const [name, write, type, text] of same) {
    it(`${name}`, () => {
      assert.equal(written(write), encodeHex(type, text));
    });
  }

  it('numeric: more than 2000 digits on a side is refused', () => {
    const out = new WireBuffer(16);
    assert.equal(writeNumericFromDecimal(out, 10n ** 2001n, 0), false);
    assert.equal(out.pos, 0);
  });

  it('uuid: anything but 16 bytes is an error', () => {
    assert.throws(() => writeUuid(new WireBuffer(16), new Uint8Array(15)), /16 bytes/);
  });
});

describe('binary COPY frame', () => {
  it('header, one tuple (int4 1, NULL), trailer', () => {
    const out = new WireBuffer(8);
    writeRaw(out, BINARY_COPY_HEADER);
    writeTupleStart(out, 2);
    writeInt32(out, 1);
    writeNull(out);
    writeRaw(out, BINARY_COPY_TRAILER);
    assert.equal(
      Buffer.from(out.bytes.subarray(0, out.pos)).toString('hex'),
      '5047434f50590aff0d0a00' + '00000000' + '00000000' + '0002' + '00000004' + '00000001' + 'ffffffff' + 'ffff',
    );
  });
});
