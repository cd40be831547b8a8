import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDurability } from '../../../src/cli/parse-options.js';
import { crashCanLose, DURABILITY_PRESETS } from '../../../src/writer/durability/presets.js';

describe('durability presets', () => {
  for (const p of DURABILITY_PRESETS) it(`--durability ${p} parses`, () => assert.equal(parseDurability(p), p));
  for (const bad of ['', 'SAFE', 'off', 'unsafe '])
    it(`--durability ${JSON.stringify(bad)} is refused with the flag and the value`, () =>
      assert.throws(() => parseDurability(bad), { message: `Expected \`--durability\` to be one of safe, fast, unsafe, got \`${bad}\`` }));
  it('each preset says what a crash can lose', () => {
    assert.match(crashCanLose({ preset: 'safe', unlogged: false }), /^nothing committed/);
    assert.match(crashCanLose({ preset: 'fast', unlogged: false }), /no corruption; but .* last chunks/);
    assert.match(crashCanLose({ preset: 'unsafe', unlogged: false }), /corrupt the whole cluster/);
    assert.match(crashCanLose({ preset: 'safe', unlogged: true }), /but the table is unlogged until SET LOGGED finishes: a crash before then empties it$/);
  });
});
