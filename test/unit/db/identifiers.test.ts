import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planInputs, tableFlag } from '../../../src/cli/plan-inputs.js';
import { splitQualifiedName } from '../../../src/core/identifiers.js';

describe('-t schema.table, as psql reads it', () => {
  const cases: [string, { schema?: string; table: string }][] = [
    ['lineitem', { table: 'lineitem' }],
    ['public.lineitem', { schema: 'public', table: 'lineitem' }],
    ['Public.LineItem', { schema: 'public', table: 'lineitem' }],
    ['"My Schema"."Line Item"', { schema: 'My Schema', table: 'Line Item' }],
    ['"a.b".c', { schema: 'a.b', table: 'c' }],
    ['"say ""hi"""', { table: 'say "hi"' }],
    ['s."T"x', { schema: 's', table: 'Tx' }],
    ['Ünï', { table: 'Ünï' }],
  ];
  for (const [input, expected] of cases) it(input, () => assert.deepEqual(splitQualifiedName(input), expected));
  for (const [input, message] of [
    ['', /empty name/],
    ['.x', /empty name before/],
    ['x.', /empty name after/],
    ['"open', /unterminated quoted identifier/],
    ['db.s.t', /at most schema.table/],
    ['../../../tmp/x', /empty name/],
  ] as const) {
    it(`refuses ${JSON.stringify(input)}`, () => assert.throws(() => splitQualifiedName(input), message));
  }
  it('names the flag, and a schema given twice must agree', () => {
    assert.deepEqual(tableFlag('-t', 'public.x', undefined), { schema: 'public', table: 'x' });
    assert.deepEqual(tableFlag('-t', 'public.x', 'public'), { schema: 'public', table: 'x' });
    assert.deepEqual(tableFlag('-t', 'x', 'other'), { schema: 'other', table: 'x' });
    assert.throws(() => tableFlag('-t', 'public.x', 'other'), /-t "public.x" names schema "public" but --schema is "other"/);
    assert.throws(() => tableFlag('--table', '"x', undefined), /^LoadError: --table "\\"x": unterminated/);
  });
  it('load targets take the schema from -t', () => {
    const [t] = planInputs(['data.csv'], { table: '"My Schema"."Line Item"' });
    assert.equal(t?.table, 'Line Item');
    assert.equal(t?.schema, 'My Schema');
  });
});
