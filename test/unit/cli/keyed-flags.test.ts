import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { writerSpecFromFlags } from '../../../src/cli/writer-options.js';
import { writerFor } from '../../../src/writer/writer-for.js';

/** `--on-conflict update`, `--mode delete`, `--key` and `--update-columns`: what goes together, refused before anything connects. */
describe('--on-conflict update and --mode delete flags', () => {
  const cases: { name: string; flags: Parameters<typeof writerSpecFromFlags>[0]; error?: RegExp; writer?: string }[] = [
    { name: 'update through COPY, with its key and columns', flags: { mode: 'copy', onConflict: 'update', key: ['a'], updateColumns: ['b'] }, writer: 'upsert' },
    { name: 'update with the binary wire (the staging COPY)', flags: { mode: 'copy', onConflict: 'update', wire: 'binary' }, writer: 'upsert' },
    { name: 'delete with a key', flags: { mode: 'delete', onConflict: 'reject', key: ['a', 'b'] }, writer: 'delete' },
    { name: 'update with --mode insert', flags: { mode: 'insert', onConflict: 'update' }, error: /`--on-conflict update` loads through COPY into a staging table/ },
    { name: 'delete with --on-conflict skip', flags: { mode: 'delete', onConflict: 'skip' }, error: /`--mode delete` deletes by key: `--on-conflict` does not apply/ },
    { name: '--key without update or delete', flags: { mode: 'copy', onConflict: 'skip', key: ['a'] }, error: /`--key` applies only to --on-conflict update and --mode delete/ },
    { name: '--update-columns with delete', flags: { mode: 'delete', onConflict: 'reject', updateColumns: ['b'] }, error: /`--update-columns` applies only to --on-conflict update/ },
    { name: "INSERT's knobs with update", flags: { mode: 'copy', onConflict: 'update', batchRows: 10 }, error: /`--batch-rows` applies only to --mode insert/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      if (c.error) return assert.throws(() => writerSpecFromFlags(c.flags), c.error);
      const spec = writerSpecFromFlags(c.flags);
      assert.equal(writerFor(spec).name, c.writer);
      assert.deepEqual(spec.key, c.flags.key);
      assert.deepEqual(spec.updateColumns, c.flags.updateColumns);
    });
  }
});
