import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashBytes, hashInt4, hashInt8, hashInt8Number, hashText, hashUint32 } from '../../../src/writer/citus/pg-hash.js';

// Every expected value below is PostgreSQL 15's own (hashint4, hashint8, hashint2, hashtext
// on x86-64); test/citus/citus-route.test.ts checks thousands more against the cluster.
describe('PostgreSQL hash functions, as Citus places rows', () => {
  it('hashint4 (and hashint2: the same, sign-extended), edges and signs', () => {
    const expected: [number, number][] = [
      [0, -272711505],
      [1, -1905060026],
      [-1, 385747274],
      [2147483647, -96758253],
      [-2147483648, -1524351049],
      [42, 1509752520],
      [-42, -487492805],
      [1000000, -723906379],
    ];
    for (const [v, h] of expected) assert.equal(hashInt4(v), h, `hashint4(${v})`);
  });

  it('hashint8 folds the high half in, so an int8 equal to an int4 hashes alike', () => {
    const expected: [bigint, number][] = [
      [0n, -272711505],
      [-1n, 385747274],
      [4294967296n, -1905060026],
      [-4294967296n, -272711505],
      [9223372036854775807n, -1524351049],
      [-9223372036854775808n, -96758253],
      [5000000000n, -694934712],
      [-5000000000n, 954517114],
    ];
    for (const [v, h] of expected) assert.equal(hashInt8(v), h, `hashint8(${v})`);
    for (const v of [0, 1, -1, 123456, -2147483648, 2147483647]) assert.equal(hashInt8(BigInt(v)), hashInt4(v));
  });

  it('hashint8 of a safe integer without BigInt equals the BigInt one, across the halves and signs', () => {
    const values = [0, 1, -1, 4294967295, 4294967296, -4294967296, -4294967297, 5000000000, -5000000000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 32 * 12345 + 678, -(2 ** 32 * 12345 + 678)];
    for (let i = 0; i < 2000; i++) values.push(Math.floor((Math.random() * 2 - 1) * 2 ** 53));
    for (const v of values) assert.equal(hashInt8Number(v), hashInt8(BigInt(v)), `hashint8(${v})`);
  });

  it('hashtext over every tail length (0–11 bytes after the 12-byte blocks) and multi-byte UTF-8', () => {
    const expected: [string, number][] = [
      ['', -1477818771],
      ['a', 1075015857],
      ['abcd', -393934804],
      ['abcdefg', 501636814],
      ['abcdefgh', -1960928205],
      ['abcdefghijk', -1483803693],
      ['abcdefghijkl', -1586087212],
      ['abcdefghijklmnopqrstuvwxyz', 167831483],
      ['ÅÄÖ ünïcødé', 794234766],
      ['🙂', -347278218],
      ['hello world, 12 bytes+', 1897278597],
    ];
    for (const [v, h] of expected) assert.equal(hashText(Buffer.from(v, 'utf8')), h, `hashtext(${JSON.stringify(v)})`);
  });

  it('hash_bytes of a sub-range is the hash of those bytes alone; hash_bytes_uint32(k) = hash_bytes of k\'s 4 bytes', () => {
    const whole = Buffer.from('xxabcdefghijklmnopyy');
    assert.equal(hashBytes(whole, 2, whole.length - 2), hashBytes(Buffer.from('abcdefghijklmnop')));
    for (const k of [0, 1, 0xdeadbeef, 0xffffffff, 123456789]) {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(k >>> 0);
      assert.equal(hashUint32(k), hashBytes(b), `k = ${k}`);
    }
  });
});
