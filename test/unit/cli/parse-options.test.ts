import { constants } from 'node:buffer';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChunkSize, parseSize, parseWholeNumber } from '../../../src/cli/parse-options.js';
import { planInputs } from '../../../src/cli/plan-inputs.js';
import { formatFromFileName, tableFromFileName } from '../../../src/input/formats.js';
import { redactUrl } from '../../../src/cluster/target.js';

describe('option parsing', () => {
  const sizes: [string, number][] = [['65536', 65536], ['64KB', 65536], ['64kb', 65536], ['16MB', 16 << 20], ['1.5MB', 1572864], ['2G', 2 * 1024 ** 3], ['1', 1]];
  for (const [input, bytes] of sizes) it(`--chunk-size ${input} = ${bytes}`, () => assert.equal(parseSize('--chunk-size', input), bytes));
  for (const bad of ['', 'abc', '-1', '0', '12XB', '1 2'])
    it(`--chunk-size rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseSize('--chunk-size', bad), /Expected `--chunk-size`/));
  it('--chunk-size is at most one buffer, said as a usage error', () => {
    assert.equal(parseChunkSize('--chunk-size', '1GB'), 1024 ** 3);
    const over = `${Math.ceil(constants.MAX_LENGTH / 2 ** 20) + 1}MB`; // 4097MB on Node 20
    assert.throws(() => parseChunkSize('--chunk-size', over), new RegExp(`^InvalidArgumentError: Expected \`--chunk-size\` to be at most \\d+MB \\(a chunk is held in one buffer\\), got \`${over}\`$`));
  });
  it('--workers names the flag and the value', () => {
    assert.throws(() => parseWholeNumber('--workers', 'zero'), { message: 'Expected `--workers` to be a whole number from 1 up, got `zero`' });
    assert.throws(() => parseWholeNumber('--workers', '0'), /from 1 up/);
    assert.equal(parseWholeNumber('--workers', '7'), 7);
  });
});

describe('names', () => {
  const names: [string, string | undefined, string | undefined][] = [
    ['lineitem.tbl', 'tbl', 'lineitem'],
    ['/data/lineitem.tbl.3', 'tbl', 'lineitem'],
    ['orders.csv', 'csv', 'orders'],
    ['events.txt', 'text', 'events'],
    ['README', undefined, undefined],
    ['archive.tar', undefined, undefined],
  ];
  for (const [file, format, table] of names) {
    it(`${file} → ${format}, ${table}`, () => {
      assert.equal(formatFromFileName(file), format);
      assert.equal(tableFromFileName(file), table);
    });
  }
  it('stdin needs -f and -t', () => {
    assert.throws(() => planInputs(['-'], {}), /format of stdin/);
    assert.throws(() => planInputs(['-'], { format: 'tbl' }), /table for stdin/);
    assert.deepEqual(planInputs(['-'], { format: 'tbl', table: 'lineitem' }), [{ file: '-', format: 'tbl', table: 'lineitem', schema: undefined }]);
  });
  it('passwords are redacted from URLs', () => {
    assert.equal(redactUrl('postgresql://me:s3cret@db:5432/x'), 'postgresql://me:***@db:5432/x');
    assert.equal(redactUrl('postgresql://me@db/x?password=s3cret'), 'postgresql://me@db/x?password=***');
    assert.equal(redactUrl('host=db password=s3cret user=me'), 'host=db password=*** user=me');
  });
});
