import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asServerKeeps } from '../../../src/core/old-backend.js';

describe('asServerKeeps (application_name as pg_stat_activity shows it)', () => {
  it('keeps a name of up to 63 bytes, cuts a longer one to 63 bytes at a character start', () => {
    assert.equal(asServerKeeps('pgsurge-w1'), 'pgsurge-w1');
    const long = `pgsurge-${'x'.repeat(60)}-part3of4-n7`;
    assert.equal(asServerKeeps(long), long.slice(0, 63));
    assert.equal(Buffer.byteLength(asServerKeeps(long)), 63);
    // 'é' is 2 bytes: 62 ASCII bytes then 'é' would end at byte 64, so it is left out whole.
    assert.equal(asServerKeeps(`${'a'.repeat(62)}éz`), 'a'.repeat(62));
    assert.equal(asServerKeeps('a'.repeat(63)), 'a'.repeat(63));
  });
});
