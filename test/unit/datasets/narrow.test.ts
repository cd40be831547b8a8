import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { KeyPermutation } from '../../../src/datasets/narrow/key-permutation.js';
import { generateNarrow, narrowBlocks } from '../../../src/datasets/narrow/generate.js';
import { NARROW_COLUMNS, narrowPrimaryKeySql } from '../../../src/datasets/narrow-schema.js';
import { KNOWN_TABLE_COLUMNS, createTableSql } from '../../../src/datasets/table-ddl.js';
import { removeDir, tempDir } from './dbt3-fixture.js';

/** The id column of every row, read straight from the bytes. */
function ids(blocks: Iterable<Buffer>, visit: (id: number) => void): void {
  for (const block of blocks) {
    let id = 0;
    let inId = true;
    for (let i = 0; i < block.length; i++) {
      const c = block[i]!;
      if (inId) {
        if (c >= 0x30 && c <= 0x39) id = id * 10 + (c - 0x30);
        else {
          visit(id);
          id = 0;
          inId = false;
        }
      } else if (c === 0x0a) inId = true;
    }
  }
}

describe('narrow key permutation', () => {
  it('maps 0..n-1 onto itself exactly, for every n from 1 to 200', () => {
    for (let n = 1; n <= 200; n++) {
      for (const seed of [0, 42]) {
        const p = new KeyPermutation(n, seed);
        const seen = new Uint8Array(n);
        for (let i = 0; i < n; i++) {
          const x = p.at(i);
          assert.ok(Number.isInteger(x) && x >= 0 && x < n, `n=${n} i=${i} → ${x}`);
          seen[x]!++;
        }
        assert.ok(seen.every((c) => c === 1), `n=${n} seed=${seed}`);
      }
    }
  });

  it('scrambles: neighbours land far apart and seeds differ', () => {
    const n = 1_000_000;
    const a = new KeyPermutation(n, 1);
    const b = new KeyPermutation(n, 2);
    let inOrder = 0;
    let same = 0;
    for (let i = 0; i < 1000; i++) {
      if (a.at(i + 1) === a.at(i) + 1) inOrder++;
      if (a.at(i) === b.at(i)) same++;
    }
    assert.ok(inOrder < 5, `${inOrder} neighbours stayed neighbours`);
    assert.ok(same < 5, `${same} keys equal across seeds`);
  });

  it('handles domains far past memory without allocating', () => {
    const p = new KeyPermutation(2 ** 40 + 3, 9);
    for (const i of [0, 1, 2 ** 40, 2 ** 40 + 2]) {
      const x = p.at(i);
      assert.ok(Number.isInteger(x) && x >= 0 && x < 2 ** 40 + 3);
    }
  });
});

describe('narrow rows', () => {
  it('has no duplicate key in 3 million random rows (bitmap check)', () => {
    const n = 3_000_000;
    const seen = new Uint8Array((n >> 3) + 1);
    let count = 0;
    ids(narrowBlocks({ rows: n, keys: 'random', format: 'text' }), (id) => {
      assert.ok(id >= 1 && id <= n);
      const bit = 1 << (id & 7);
      if ((seen[id >> 3]! & bit) !== 0) assert.fail(`duplicate id ${id}`);
      seen[id >> 3]! |= bit;
      count++;
    });
    assert.equal(count, n);
  });

  const SHAPES = [
    { format: 'text', keys: 'sequential', line: /^(\d+)\t(\d+)\t([a-z]{20,28})$/ },
    { format: 'text', keys: 'random', line: /^(\d+)\t(\d+)\t([a-z]{20,28})$/ },
    { format: 'tbl', keys: 'sequential', line: /^(\d+)\|(\d+)\|([a-z]{20,28})\|$/ },
  ] as const;
  for (const { format, keys, line } of SHAPES) {
    it(`writes ${keys} keys as ${format}`, () => {
      const n = 10_000;
      const text = Buffer.concat([...narrowBlocks({ rows: n, keys, format })]).toString('latin1');
      const lines = text.split('\n');
      assert.equal(lines.pop(), '');
      assert.equal(lines.length, n);
      const keysSeen = lines.map((l, i) => {
        const m = line.exec(l);
        assert.ok(m !== null, l);
        assert.ok(Number(m[2]) <= 2147483647);
        if (keys === 'sequential') assert.equal(Number(m[1]), i + 1);
        return Number(m[1]);
      });
      assert.deepEqual(keysSeen.sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i + 1));
      const width = text.length / n;
      assert.ok(width > 35 && width < 50, `${width} bytes a row`);
    });
  }

  it('is deterministic for a seed and writes files and stdout alike', async () => {
    const dir = await tempDir('narrow');
    try {
      const file = path.join(dir, 'narrow.txt');
      const result = await generateNarrow({ rows: 50_000, keys: 'random', seed: 5, format: 'text', out: file });
      const bytes = await readFile(file);
      assert.equal(result.bytes, bytes.length);
      const stdout = new PassThrough();
      const chunks: Buffer[] = [];
      stdout.on('data', (c: Buffer) => chunks.push(c));
      await generateNarrow({ rows: 50_000, keys: 'random', seed: 5, format: 'text', out: '-', stdout });
      assert.ok(Buffer.concat(chunks).equals(bytes));
      const other = Buffer.concat([...narrowBlocks({ rows: 50_000, keys: 'random', seed: 6, format: 'text' })]);
      assert.ok(!other.equals(bytes));
    } finally {
      await removeDir(dir);
    }
  });

  it('writes nothing for zero rows and rejects bad options', () => {
    assert.equal([...narrowBlocks({ rows: 0, keys: 'random', format: 'text' })].length, 0);
    assert.throws(() => [...narrowBlocks({ rows: -1, keys: 'random', format: 'text' })], /number of rows/);
    assert.throws(() => [...narrowBlocks({ rows: 1, keys: 'shuffled' as 'random', format: 'text' })], /Key order/);
  });

  it('is a table --create knows, with its primary key', () => {
    assert.equal(KNOWN_TABLE_COLUMNS['narrow'], NARROW_COLUMNS);
    assert.match(createTableSql('narrow')!, /"id" bigint,\n {2}"val" integer,\n {2}"note" text/);
    assert.equal(narrowPrimaryKeySql(), 'ALTER TABLE "narrow" ADD CONSTRAINT "narrow_pkey" PRIMARY KEY ("id")');
    assert.equal(narrowPrimaryKeySql('n2', 'bench'), 'ALTER TABLE "bench"."n2" ADD CONSTRAINT "n2_pkey" PRIMARY KEY ("id")');
  });
});
