import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DBT3_TABLES } from '../../../src/datasets/dbt3-schema.js';
import { dbt3TableStream, generateDbt3 } from '../../../src/datasets/dbt3/generate.js';
import { generateTo, removeDir, tempDir } from './dbt3-fixture.js';

const SCALE = 0.01;

describe('dbt3 determinism and slices', () => {
  const dirs: string[] = [];
  let whole: Awaited<ReturnType<typeof generateTo>>['files'] = new Map();
  before(async () => {
    const run = await generateTo('whole', { scale: SCALE, workers: 0 });
    dirs.push(run.dir);
    whole = run.files;
  });
  after(async () => {
    for (const dir of dirs) await removeDir(dir);
  });

  it('gives byte-identical files for the same scale and seed, with or without workers', async () => {
    for (const workers of [0, 2]) {
      const run = await generateTo('again', { scale: SCALE, workers });
      dirs.push(run.dir);
      for (const table of DBT3_TABLES) {
        assert.ok((await readFile(run.files.get(table)!.path)).equals(await readFile(whole.get(table)!.path)), `${table} with ${workers} workers`);
      }
    }
  });

  it('gives different data for another seed', async () => {
    const run = await generateTo('seed', { scale: SCALE, seed: 7, tables: ['customer'] });
    dirs.push(run.dir);
    assert.ok(!(await readFile(run.files.get('customer')!.path)).equals(await readFile(whole.get('customer')!.path)));
  });

  for (const parts of [2, 3, 7]) {
    it(`writes ${parts} slices that concatenate to the whole table`, async () => {
      const dir = await tempDir('slices');
      dirs.push(dir);
      const slices = new Map<string, Buffer[]>();
      for (let part = 1; part <= parts; part++) {
        const { files } = await generateDbt3({ scale: SCALE, parts, part, outDir: dir, workers: part % 2 === 0 ? 2 : 0 });
        for (const f of files) {
          assert.ok(f.path.endsWith(`${f.table}.tbl.${part}`), f.path);
          const list = slices.get(f.table) ?? [];
          list.push(await readFile(f.path));
          slices.set(f.table, list);
        }
      }
      for (const table of DBT3_TABLES) {
        assert.ok(Buffer.concat(slices.get(table)!).equals(await readFile(whole.get(table)!.path)), table);
      }
    });
  }

  it('streams a table with the same bytes as its file', async () => {
    for (const table of ['orders', 'lineitem'] as const) {
      const chunks: Buffer[] = [];
      for await (const chunk of dbt3TableStream(table, { scale: SCALE, workers: 2 })) chunks.push(chunk as Buffer);
      assert.ok(Buffer.concat(chunks).equals(await readFile(whole.get(table)!.path)), table);
    }
  });

  it('stops its workers when the stream is dropped early', async () => {
    const stream = dbt3TableStream('lineitem', { scale: 1, workers: 2 });
    for await (const chunk of stream) {
      assert.ok((chunk as Buffer).length > 0);
      break; // the for-await exit destroys the stream, which must end the generator and its workers
    }
    assert.ok(stream.destroyed);
  });

  it('rejects bad options with a clear message', async () => {
    await assert.rejects(generateDbt3({ scale: 0, outDir: '/nonexistent' }), /scale factor must be a number greater than 0/);
    await assert.rejects(generateDbt3({ scale: 0.01, parts: 2, part: 3, outDir: '/nonexistent' }), /part must be a whole number from 1 to 2/);
    await assert.rejects(generateDbt3({ scale: 0.001, outDir: '/nonexistent' }), /same supplier twice/);
  });
});
