import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seriesLabel } from '../../../src/cli/observe-options.js';

describe("a load's series name in its report", () => {
  it('is --label, else its files\' names (stdin as stdin), the first two and how many more past three', () => {
    assert.equal(seriesLabel('SF 1, -w 2', ['data/lineitem.tbl']), 'SF 1, -w 2');
    assert.equal(seriesLabel(undefined, ['data/sf1/lineitem.tbl']), 'lineitem.tbl');
    assert.equal(seriesLabel('  ', ['-']), 'stdin');
    assert.equal(seriesLabel(undefined, ['a/lineitem.tbl.1', 'a/lineitem.tbl.2', 'a/lineitem.tbl.3']), 'lineitem.tbl.1, lineitem.tbl.2, lineitem.tbl.3');
    assert.equal(seriesLabel(undefined, ['x.1', 'x.2', 'x.3', 'x.4', 'x.5']), 'x.1, x.2 and 3 more');
  });
});
