import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashInt4, hashInt8, hashText } from '../../../src/writer/citus/pg-hash.js';
import { distributionHash, NULL_KEY, parseDecimal, recordBytes, recordsByShard, routeRecords, UNSURE_KEY } from '../../../src/writer/citus/route-records.js';
import { rangeProblem, shardIndexOf, shardMapKey, type RoutableType, type ShardMap } from '../../../src/writer/citus/shard-map.js';

/** Citus's uniform split of the int4 hash range into `n` shards (CreateShardsWithRoundRobinPolicy), over two nodes. */
function uniformMap(n: number, type: RoutableType = 'int4'): ShardMap {
  const step = Math.floor(4294967296 / n);
  const shards = Array.from({ length: n }, (_, i) => ({
    id: String(102008 + i),
    min: -2147483648 + i * step,
    max: i === n - 1 ? 2147483647 : -2147483648 + (i + 1) * step - 1,
    groupId: 1 + (i % 2),
    table: `public.t_${102008 + i}`,
  }));
  return { tableOid: 1, column: 'k', type, shards, nodes: [{ groupId: 1, host: 'w1', port: 1 }, { groupId: 2, host: 'w2', port: 2 }] };
}

const TEXT = { delimiter: 0x09, nullMarker: Buffer.from('\\N') };

describe('shard map', () => {
  it('finds the shard whose range holds a hash, at every edge', () => {
    const map = uniformMap(4);
    assert.equal(shardIndexOf(map, -2147483648), 0);
    assert.equal(shardIndexOf(map, -1073741825), 0);
    assert.equal(shardIndexOf(map, -1073741824), 1);
    assert.equal(shardIndexOf(map, -1), 1);
    assert.equal(shardIndexOf(map, 0), 2);
    assert.equal(shardIndexOf(map, 2147483647), 3);
    const one = uniformMap(1);
    assert.equal(shardIndexOf(one, 12345), 0);
  });

  it('accepts only ranges that cover the int4 hash space once', () => {
    assert.equal(rangeProblem(uniformMap(32).shards), undefined);
    assert.match(rangeProblem([{ min: -2147483648, max: 0 }, { min: 2, max: 2147483647 }])!, /not contiguous at 1/);
    assert.match(rangeProblem([{ min: -2147483648, max: 0 }])!, /end at 0/);
    assert.match(rangeProblem([])!, /no shards/);
  });

  it('its key changes when a shard moves to another node', () => {
    const a = uniformMap(4);
    const moved = { ...a, shards: a.shards.map((s, i) => (i === 1 ? { ...s, groupId: 1 } : s)) };
    assert.notEqual(shardMapKey(a), shardMapKey(moved));
    assert.equal(shardMapKey(a), shardMapKey(uniformMap(4)));
  });
});

describe('reading the distribution value as the server does', () => {
  it('plain decimal with C spaces and a sign; anything else is left to the server', () => {
    const p = (s: string, t: 'int2' | 'int4' | 'int8' = 'int4'): bigint | undefined => parseDecimal(Buffer.from(s, 'latin1'), 0, Buffer.byteLength(s, 'latin1'), t);
    assert.equal(p('42'), 42n);
    assert.equal(p('  -7 '), -7n);
    assert.equal(p('+007'), 7n);
    assert.equal(p('\t\n\v\f\r5\r\n'), 5n);
    assert.equal(p('-2147483648'), -2147483648n);
    assert.equal(p('2147483648'), undefined);
    assert.equal(p('32768', 'int2'), undefined);
    assert.equal(p('-9223372036854775808', 'int8'), -9223372036854775808n);
    assert.equal(p('9223372036854775808', 'int8'), undefined);
    for (const bad of ['', ' ', '-', '1 2', '0x1F', '1_000', '1.0', 'abc', '١']) assert.equal(p(bad), undefined, JSON.stringify(bad));
  });

  it('hashes an integer by its value, text by its bytes', () => {
    const b = (s: string): Buffer => Buffer.from(s);
    assert.equal(distributionHash('int4', b(' 12 '), 0, 4), hashInt4(12));
    assert.equal(distributionHash('int2', b('-3'), 0, 2), hashInt4(-3));
    assert.equal(distributionHash('int8', b('5000000000'), 0, 10), hashInt8(5000000000n));
    assert.equal(distributionHash('text', b(' 12 '), 0, 4), hashText(b(' 12 ')));
    assert.equal(distributionHash('varchar', b('é'), 0, 2), hashText(b('é')));
  });
});

describe('routing a chunk\'s records to shards', () => {
  it('finds each record\'s distribution field (any column), NULLs and values the server must read', () => {
    const map = uniformMap(4);
    const data = Buffer.from(['a\t1', 'b\t-1', 'c\t\\N', 'd\t0x10', 'e\t 7 ', 'f\t\\0612', 'g'].map((r) => `${r}\n`).join(''));
    const routed = routeRecords(data, { ...TEXT, map, field: 1 });
    assert.equal(routed.ends.length, 7);
    assert.equal(routed.shards[0], shardIndexOf(map, hashInt4(1)));
    assert.equal(routed.shards[1], shardIndexOf(map, hashInt4(-1)));
    assert.equal(routed.shards[2], NULL_KEY);
    assert.equal(routed.shards[3], UNSURE_KEY);
    assert.equal(routed.unsure.get(3), '0x10');
    assert.equal(routed.shards[4], shardIndexOf(map, hashInt4(7)));
    // \061 is the digit 1: the value is 12, read after unescaping as COPY does.
    assert.equal(routed.shards[5], shardIndexOf(map, hashInt4(12)));
    // A record without the field: the server refuses it (missing data).
    assert.equal(routed.shards[6], UNSURE_KEY);
    assert.deepEqual(recordBytes(data, routed, [1, 4]).toString(), 'b\t-1\ne\t 7 \n');
  });

  it('an escaped delimiter or newline stays inside its field (tbl, `|`), and the first field works too', () => {
    const map = uniformMap(8, 'text');
    const data = Buffer.from('x\\|y|1|z\na\\\nb|2|\n');
    const routed = routeRecords(data, { delimiter: 0x7c, nullMarker: Buffer.from('\\N'), map, field: 0 });
    assert.deepEqual(routed.ends, [9, 17]);
    assert.equal(routed.shards[0], shardIndexOf(map, hashText(Buffer.from('x|y'))));
    assert.equal(routed.shards[1], shardIndexOf(map, hashText(Buffer.from('a\nb'))));
    const second = routeRecords(data, { delimiter: 0x7c, nullMarker: Buffer.from('\\N'), map: uniformMap(8), field: 1 });
    assert.equal(second.shards[1], shardIndexOf(map, hashInt4(2)));
  });

  it('every record lands in exactly one shard, in input order', () => {
    const map = uniformMap(32, 'int8');
    const rows = Array.from({ length: 2000 }, (_, i) => `${(i * 7919) % 100003 - 50000}|x${i}|\n`).join('');
    const data = Buffer.from(rows);
    const routed = routeRecords(data, { delimiter: 0x7c, nullMarker: Buffer.from('\\N'), map, field: 0 });
    const by = recordsByShard(routed);
    const all = [...by.values()].flat().sort((a, b) => a - b);
    assert.deepEqual(all, Array.from({ length: 2000 }, (_, i) => i));
    for (const list of by.values()) assert.deepEqual(list, [...list].sort((a, b) => a - b));
    const total = [...by.values()].reduce((n, list) => n + recordBytes(data, routed, list).length, 0);
    assert.equal(total, data.length);
  });
});
