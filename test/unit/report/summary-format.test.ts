import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatQuietSummary, formatSummary } from '../../../src/report/summary-format.js';
import { LoadCounters } from '../../../src/metrics/load-counters.js';

describe('the summary of a load of keys to delete', () => {
  const counters = new LoadCounters();
  counters.expect('t', 'keys.txt');
  counters.add('t', 'keys.txt', 3, 8, 0, 1, { read: 4, rejected: 0, skipped: 1 });

  it('names its counts deleted and not found, in the tables and in the line of totals', () => {
    const text = formatSummary({ ...counters.summary(2, 'server'), deletes: true });
    assert.match(text, /^table\s+read\s+deleted\s+rejected\s+not found\s+MB/m);
    assert.match(text, /^file\s+table\s+read\s+deleted\s+rejected\s+not found$/m);
    assert.match(text, /^deleted 3 of 4 keys read \(read 4 = deleted 3 \+ rejected 0 \+ not found 1\) in /m);
    assert.doesNotMatch(text, /loaded|skipped/);
    assert.match(formatQuietSummary({ ...counters.summary(2, 'server'), deletes: true }), /^deleted 3 of 4 keys read \(read 4 = deleted 3 \+ rejected 0 \+ not found 1\)/);
  });

  it('any other load keeps loaded and skipped', () => {
    assert.match(formatSummary(counters.summary(2, 'server')), /^loaded 3 of 4 rows read \(read 4 = loaded 3 \+ rejected 0 \+ skipped 1\)/m);
  });
});
