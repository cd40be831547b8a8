import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { openingComment } from '../../bench/lib/usage.js';

/** Every bench answers `--help` with what it measures and its command line, and runs nothing. */
const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench');

describe('bench --help', () => {
  it('takes the opening doc comment without its stars', () => {
    assert.equal(openingComment('/**\n * What it does.\n *\n *   node dist/bench/x.js [--a 1]\n */\nimport x;'), 'What it does.\n\n  node dist/bench/x.js [--a 1]');
    assert.equal(openingComment('#!/usr/bin/env node\n/** One line. */\n'), 'One line.');
    assert.equal(openingComment('import x;\n/** later */'), '');
  });

  for (const file of readdirSync(benchDir).filter((f) => f.endsWith('.js'))) {
    it(`${file} prints its usage and exits 0 without starting a server`, () => {
      const name = path.basename(file, '.js');
      const result = spawnSync(process.execPath, [path.join(benchDir, file), '--help'], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`node dist/bench/${name}\\.js`));
      assert.doesNotMatch(result.stdout, /# machine:/); // the bench itself did not start
    });
  }
});
