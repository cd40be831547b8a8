import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

/**
 * run-tests.ts counts from node:test's own events through count-reporter.js: a real
 * `node --test` run over small files with passing, failing, skipped, todo tests, suites and
 * a file that does not load, its counts compared with what the files hold.
 */
const reporter = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../count-reporter.js');

function countsOf(files: Record<string, string>): { pass: number; fail: number; skipped: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgsurge-count-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const out = path.join(dir, 'counts.json');
    spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, `--test-reporter-destination=${out}`, ...Object.keys(files).map((f) => path.join(dir, f))], {
      stdio: 'ignore',
      // Without the runner's own context, or the child would report to this test's runner.
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT')),
    });
    return JSON.parse(readFileSync(out, 'utf8')) as { pass: number; fail: number; skipped: number };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('count-reporter', () => {
  it('counts tests, not suites; skipped and todo as skipped', () => {
    const counts = countsOf({
      'a.test.mjs': `import { describe, test } from 'node:test';
describe('suite', () => {
  test('passes', () => {});
  test('fails', () => { throw new Error('no'); });
  test('skipped', { skip: true }, () => {});
  test('todo', { todo: true }, () => { throw new Error('not yet'); });
  describe('inner', () => { test('passes too', () => {}); });
});
test('top level', () => {});
`,
    });
    assert.deepEqual(counts, { pass: 3, fail: 1, skipped: 2 });
  });

  it('counts a file that does not load as a failure', () => {
    const counts = countsOf({
      'a.test.mjs': `import { test } from 'node:test'; test('passes', () => {});\n`,
      'b.test.mjs': `throw new Error('does not load');\n`,
    });
    assert.deepEqual(counts, { pass: 1, fail: 1, skipped: 0 });
  });
});
