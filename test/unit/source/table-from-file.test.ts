import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sqlIdent, sqlQualifiedName } from '../../../src/core/identifiers.js';
import type { SniffedDialect } from '../../../src/input/input-format.js';
import { createTableFromFile, dialectFlags, dialectInputOptions } from '../../../src/input/table-from-file.js';

/*
 * The CREATE TABLE `--create` runs for a file's description, and the read options and load
 * flags a sniffed dialect becomes (a flag the user gave wins).
 */

const dialect = (d: Partial<SniffedDialect> = {}): SniffedDialect => ({
  format: 'csv',
  delimiter: ',',
  quote: '"',
  escape: '"',
  header: false,
  lineEnding: 'LF',
  encoding: 'UTF8',
  bom: false,
  null: '',
  nullMarkers: [''],
  ...d,
});

describe('identifiers as a DBA types them', () => {
  it('quotes only a name SQL would not read back unchanged', () => {
    assert.deepEqual(
      ['id', 'order_date', 'c2024', '_x', 'name', 'date', 'int', 'Name', 'my col', 'select', 'user', 'order', 'left', '1st', 'é', 'a"b'].map(sqlIdent),
      ['id', 'order_date', 'c2024', '_x', 'name', 'date', 'int', '"Name"', '"my col"', '"select"', '"user"', '"order"', '"left"', '"1st"', '"é"', '"a""b"'],
    );
    assert.equal(sqlIdent('x'.repeat(63)), 'x'.repeat(63));
    assert.equal(sqlIdent('x'.repeat(64)), `"${'x'.repeat(64)}"`);
    assert.equal(sqlQualifiedName('t', 'My Schema'), '"My Schema".t');
  });
});

describe('createTableFromFile', () => {
  it('one column a line, aligned, text where the file says no type, NOT NULL where it declares one', () => {
    const sql = createTableFromFile('Trips', 'public', {
      columns: [
        { name: 'id', type: 'bigint', notNull: true },
        { name: 'Pick up', type: 'timestamptz' },
        { name: 'note' },
      ],
      sampled: 0,
      whole: true,
    });
    assert.equal(sql, 'CREATE TABLE public."Trips" (\n  id        bigint NOT NULL,\n  "Pick up" timestamptz,\n  note      text\n)');
  });

  it('refuses a description without columns', () => {
    assert.throws(() => createTableFromFile('t', undefined, { columns: [], sampled: 0, whole: false }), /cannot tell the columns of t/);
  });
});

describe('a sniffed dialect as read options and load flags', () => {
  it("says only what differs from COPY's defaults for the format", () => {
    assert.deepEqual(dialectInputOptions('csv', dialect()), {});
    assert.deepEqual(dialectFlags('csv', dialect()), []);
    const d = dialect({ delimiter: ';', header: true, encoding: 'WIN1252', null: 'NA', quote: "'", escape: '\\' });
    assert.deepEqual(dialectInputOptions('csv', d), { header: 'skip', delimiter: ';', quote: "'", escape: '\\', encoding: 'WIN1252', null: 'NA' });
    assert.deepEqual(dialectFlags('csv', d), ['--header', "--delimiter ';'", `--quote "'"`, "--escape '\\'", '--encoding WIN1252', '--null NA']);
    assert.deepEqual(dialectFlags('csv', dialect({ delimiter: '\t' })), ["--delimiter $'\\t'"]);
    assert.deepEqual(dialectInputOptions('text', dialect({ format: 'text', delimiter: '\t', null: '\\N', quote: undefined, escape: undefined })), {});
    assert.deepEqual(dialectInputOptions('tbl', dialect({ format: 'tbl', delimiter: '|', null: '\\N', header: true })), { header: 'skip' });
  });

  it('a flag the user gave wins; --columns means no header is taken', () => {
    const d = dialect({ delimiter: ';', header: true, null: 'NA' });
    assert.deepEqual(dialectInputOptions('csv', d, { delimiter: ',', null: '' }), { header: 'skip', delimiter: ',', null: '' });
    assert.deepEqual(dialectInputOptions('csv', d, { columns: ['a', 'b'] }), { columns: ['a', 'b'], delimiter: ';', null: 'NA' });
  });
});
