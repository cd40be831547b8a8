import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoadError } from '../../../src/core/load-error.js';
import { DecodeThreadFailed } from '../../../src/input/parquet/decode-thread.js';
import { undecodable } from '../../../src/input/parquet/parquet-source.js';

/** A row group that does not decode is the input's fault, said with where; other failures pass as they are. */
describe('undecodable', () => {
  const file = { path: 'data/lineitem.parquet' };
  const slice = { rowGroup: 2, firstRow: 8192, rows: 4096, bytes: 1000 };

  it('names the file, row group and its rows (1-based), keeps the cause, and says to start over', () => {
    const cause = new Error('a snappy page of l_comment does not decompress: a copy reaches before its start');
    const e = undecodable(file, slice, cause);
    assert.ok(e instanceof LoadError);
    assert.equal(e.code, 'bad-input');
    assert.equal(e.message, 'data/lineitem.parquet: row group 2 (rows 8193–12288) does not decode: a snappy page of l_comment does not decompress: a copy reaches before its start');
    assert.equal(e.details.startOver, true);
    assert.match(e.details.hint!, /--truncate/);
    assert.equal(e.details.cause, cause);
  });

  it('passes a LoadError, a decoding thread that failed, an internal error and a non-Error as they are', () => {
    for (const error of [new LoadError('bad-input', 'x.parquet: field f has 3 values'), new DecodeThreadFailed('the Parquet decoding thread exited with code 1'), new Error('internal: the Parquet decoding thread was closed'), 'a string']) {
      assert.equal(undecodable(file, slice, error), error);
    }
  });
});
