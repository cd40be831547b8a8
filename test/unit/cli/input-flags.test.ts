import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inputOptionsFor, parseColumnList, parseEncodingFlag, parseHeaderMode, parseSingleByte } from '../../../src/cli/input-flags.js';
import { planInputs } from '../../../src/cli/plan-inputs.js';
import { parseHeader } from '../../../src/input/header.js';
import type { LoadTarget } from '../../../src/core/chunk.js';

describe('input options: each message names the flag and the value', () => {
  it('--header alone skips, `--header match` maps, anything else is refused', () => {
    assert.equal(parseHeaderMode(true), 'skip');
    assert.equal(parseHeaderMode('match'), 'match');
    assert.throws(() => parseHeaderMode('data.csv'), { message: 'Expected `--header` to be given alone, or as `--header match`, got `data.csv`' });
  });
  it('--columns, --delimiter, --encoding', () => {
    assert.deepEqual(parseColumnList('a, b,c'), ['a', 'b', 'c']);
    assert.throws(() => parseColumnList('a,,b'), /Expected `--columns` to be column names separated by commas, got `a,,b`/);
    assert.equal(parseSingleByte('--delimiter', ';'), ';');
    assert.throws(() => parseSingleByte('--delimiter', '||'), /Expected `--delimiter` to be one single-byte character \(not a newline\), got `\|\|`/);
    assert.throws(() => parseSingleByte('--quote', 'é'), /`--quote`/);
    assert.equal(parseEncodingFlag('windows-1252'), 'WIN1252');
    assert.throws(() => parseEncodingFlag('utf-16'), /Expected `--encoding` to be one of UTF8, LATIN1, .* got `utf-16`/);
  });
  it('options that do not apply to the format are refused, naming both', () => {
    assert.throws(() => inputOptionsFor('json', { header: 'skip' }), /`--header` is for csv, text and tbl input, not json/);
    assert.throws(() => inputOptionsFor('tbl', { delimiter: ',' }), /`--delimiter` is for text and csv input, not tbl/);
    assert.throws(() => inputOptionsFor('text', { quote: "'" }), /`--quote` is for csv input, not text/);
    assert.throws(() => inputOptionsFor('csv', { jsonPath: 'a.b' }), /`--json-path` is for json \(array\) input, not csv/);
    assert.throws(() => inputOptionsFor('ndjson', { jsonPath: 'a.b' }), /not ndjson/);
    assert.throws(() => inputOptionsFor('csv', { ignoreExtraKeys: true }), /`--ignore-extra-keys` is for json and ndjson input, not csv/);
    assert.throws(() => inputOptionsFor('csv', { header: 'match', columns: ['a'] }), /`--header match` and `--columns` both name the columns/);
    assert.deepEqual(inputOptionsFor('csv', { header: 'skip', delimiter: ';', skip: 0 }), { header: 'skip', delimiter: ';', skip: 0 });
  });
  it('the format and table come from the name under .gz', () => {
    const [t] = planInputs(['/x/orders.csv.gz'], { input: { null: 'NA' } });
    assert.deepEqual(t, { file: '/x/orders.csv.gz', format: 'csv', table: 'orders', schema: undefined, input: { null: 'NA' } });
  });
  it('header lines split as COPY reads them', () => {
    const t = (format: LoadTarget['format'], input = {}): LoadTarget => ({ file: 'f', table: 't', schema: undefined, format, input });
    assert.deepEqual(parseHeader('a|b|c|', t('tbl')), ['a', 'b', 'c']);
    assert.deepEqual(parseHeader('a\tb\\tx', t('text')), ['a', 'b\tx']);
    assert.deepEqual(parseHeader('"a,1",b,"c""d"', t('csv')), ['a,1', 'b', 'c"d']);
    assert.deepEqual(parseHeader("'a;1';b", t('csv', { delimiter: ';', quote: "'" })), ['a;1', 'b']);
  });
});
