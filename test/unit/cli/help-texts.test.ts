import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { demoQueryHint } from '../../../src/cli/demo-command.js';
import { buildProgram } from '../../../src/cli/main.js';
import { planInputs } from '../../../src/cli/plan-inputs.js';
import { LoadError } from '../../../src/core/load-error.js';
import { DECAY_COLUMNS } from '../../../src/decay/narrow-rows.js';
import { FORMATS } from '../../../src/input/formats.js';

function helpOf(...names: string[]): string {
  let cmd: Command = buildProgram();
  for (const n of names) cmd = cmd.commands.find((c) => c.name() === n)!;
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), writeErr: () => {} });
  cmd.outputHelp();
  return out;
}

describe('help texts say what the commands do', () => {
  it('compare names every input format it reads', () => {
    const file = /\bfile input file \(([^)]*)\)/.exec(helpOf('compare').replace(/\s+/g, ' '));
    assert.ok(file, 'compare --help does not describe <file>');
    for (const f of FORMATS) assert.match(file[1]!, new RegExp(`\\b${f}\\b`), `compare --help: ${f}`);
  });

  it("decay names its table's columns", () => {
    const m = /creates the table \(([^)]*)\)/.exec(helpOf('decay').replace(/\s+/g, ' '));
    assert.ok(m, 'decay --help names no columns');
    assert.equal(m[1]!.split(';')[0], DECAY_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', '));
  });

  it('the load examples that pipe DBT-3 rows into a fresh database create the table', () => {
    for (const help of [helpOf('load'), helpOf('dbt3', 'gen')]) {
      const lines = help.split('\n').filter((l) => /\| pgsurge load - /.test(l));
      assert.ok(lines.length > 0);
      for (const l of lines) assert.match(l, /--create\b/, l);
    }
  });

  it('the format hint for stdin offers only formats stdin can be read in', () => {
    assert.throws(
      () => planInputs(['-'], { table: 't' }),
      (e: unknown) => e instanceof LoadError && e.details.hint !== undefined && /pass -f tbl\|text\|csv\|ndjson\|json$/.test(e.details.hint) && !e.details.hint.includes('parquet'),
    );
    assert.throws(
      () => planInputs(['data.unknown'], { table: 't' }),
      (e: unknown) => e instanceof LoadError && e.details.hint !== undefined && e.details.hint.includes('parquet'),
    );
  });

  it("the demo's closing hint says npx pgsurge in a checkout, pgsurge where installed", () => {
    assert.match(demoQueryHint(true), /^to query it: npx pgsurge cluster start && psql "\$\(npx pgsurge cluster url\)"/);
    assert.match(demoQueryHint(false), /^to query it: pgsurge cluster start && psql "\$\(pgsurge cluster url\)"/);
  });
});
