import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { parseDbt3GenOptions, parseNarrowOptions, parseWholeNumber } from '../../../src/cli/gen-options.js';
import { registerGenCommands } from '../../../src/cli/gen-commands.js';
import { DBT3_TABLES } from '../../../src/datasets/dbt3-schema.js';
import { LoadError } from '../../../src/core/load-error.js';

describe('dbt3 gen options', () => {
  it('parses a full command line', () => {
    assert.deepEqual(parseDbt3GenOptions({ scale: '0.1', out: 'data', tables: 'lineitem, orders', seed: '7', parts: '4', part: '2', workers: '1' }), {
      scale: 0.1,
      out: 'data',
      seed: 7,
      tables: ['orders', 'lineitem'],
      parts: 4,
      part: 2,
      workers: 1,
      format: 'tbl',
      compression: 'snappy',
      rowGroupRows: 122_880,
      refresh: 0,
    });
    const defaults = parseDbt3GenOptions({ scale: '1', out: '.' });
    assert.deepEqual(defaults.tables, DBT3_TABLES);
    assert.equal(defaults.parts, 1);
    assert.equal(defaults.part, 1);
    assert.equal(defaults.format, 'tbl');
  });

  it('parses --format parquet with its compression and row-group size', () => {
    const opts = parseDbt3GenOptions({ scale: '0.1', out: 'pq', format: 'parquet', compression: 'gzip', rowGroupSize: '1_000_000' });
    assert.deepEqual([opts.format, opts.compression, opts.rowGroupRows], ['parquet', 'gzip', 1_000_000]);
    assert.deepEqual([parseDbt3GenOptions({ scale: '1', out: 'pq', format: 'parquet' }).compression], ['snappy']);
  });

  it('parses --refresh: the sets beside the tables, or alone with --tables none', () => {
    const both = parseDbt3GenOptions({ scale: '0.01', out: 'd', refresh: '2' });
    assert.deepEqual([both.refresh, both.tables], [2, DBT3_TABLES]);
    const alone = parseDbt3GenOptions({ scale: '0.01', out: 'd', refresh: '3', tables: 'none' });
    assert.deepEqual([alone.refresh, alone.tables], [3, []]);
    for (const raw of [
      { scale: '0.01', out: 'd', refresh: '0' },
      { scale: '0.01', out: 'd', refresh: '1000' },
      { scale: '0.01', out: '-', tables: 'orders', refresh: '1' },
      { scale: '0.01', out: 'd', parts: '2', part: '1', refresh: '1' },
      { scale: '0.01', out: 'd', format: 'parquet', refresh: '1' },
      { scale: '0.01', out: 'd', tables: 'none' },
    ]) {
      assert.throws(() => parseDbt3GenOptions(raw), (e: unknown) => e instanceof LoadError && e.code === 'bad-option', JSON.stringify(raw));
    }
  });

  it('option errors are usage errors (exit 2)', () => {
    assert.throws(() => parseDbt3GenOptions({ scale: '1', out: 'x', format: 'csv' }), (e: unknown) => e instanceof LoadError && e.code === 'bad-option');
  });

  const BAD = [
    { raw: { scale: 'abc', out: 'x' }, message: 'Expected `--scale` to be a number greater than 0, got `abc`' },
    { raw: { scale: '-1', out: 'x' }, message: 'Expected `--scale` to be a number greater than 0, got `-1`' },
    { raw: { scale: '0', out: 'x' }, message: 'Expected `--scale` to be a number greater than 0, got `0`' },
    { raw: { out: 'x' }, message: 'Expected `--scale` to be a number greater than 0, got nothing' },
    { raw: { scale: '0.001', out: 'x' }, message: /`--scale` to be a scale factor whose supplier count/ },
    { raw: { scale: '1' }, message: 'Expected `--out` to be a directory, or - for stdout, got nothing' },
    { raw: { scale: '1', out: 'x', tables: 'lineitem,foo' }, message: /`--tables` to be a comma-separated list of region, .*, got `lineitem,foo`/ },
    { raw: { scale: '1', out: '-' }, message: /`--tables` to be exactly one table when `--out -`/ },
    { raw: { scale: '1', out: 'x', seed: 'x1' }, message: 'Expected `--seed` to be a whole number from 0 to 4294967295, got `x1`' },
    { raw: { scale: '1', out: 'x', parts: '0', part: '1' }, message: 'Expected `--parts` to be a whole number from 1 up, got `0`' },
    { raw: { scale: '1', out: 'x', parts: '4', part: '5' }, message: 'Expected `--part` to be a whole number from 1 to 4, got `5`' },
    { raw: { scale: '1', out: 'x', parts: '4' }, message: /`--part` to be a whole number from 1 to 4 \(which slice/ },
    { raw: { scale: '1', out: 'x', part: '2' }, message: /`--parts` to be given with `--part`/ },
    { raw: { scale: '1', out: 'x', workers: 'two' }, message: 'Expected `--workers` to be a whole number from 0 to 64, got `two`' },
    { raw: { scale: '1', out: 'x', format: 'csv' }, message: 'Expected `--format` to be tbl or parquet, got `csv`' },
    { raw: { scale: '1', out: 'x', format: 'parquet', compression: 'lzo' }, message: /Expected `--compression` to be snappy, gzip, none .*, got `lzo`$/ },
    { raw: { scale: '1', out: 'x', format: 'parquet', rowGroupSize: '0' }, message: 'Expected `--row-group-size` to be a whole number from 1 to 100000000, got `0`' },
    { raw: { scale: '1', out: 'x', compression: 'gzip' }, message: /`--format` to be parquet when `--compression` is given/ },
    { raw: { scale: '1', out: 'x', format: 'tbl', rowGroupSize: '10' }, message: /`--format` to be parquet when `--row-group-size` is given, got `tbl`/ },
    { raw: { scale: '1', out: '-', tables: 'region', format: 'parquet' }, message: /`--out` to be a directory with `--format parquet`/ },
  ] as const;
  for (const { raw, message } of BAD) {
    it(`rejects ${JSON.stringify(raw)}`, () => {
      assert.throws(() => parseDbt3GenOptions(raw), typeof message === 'string' ? { message } : message);
    });
  }
});

describe('gen narrow options', () => {
  it('parses with defaults', () => {
    assert.deepEqual(parseNarrowOptions({ rows: '100_000_000', out: '-' }), { rows: 100_000_000, out: '-', keys: 'sequential', seed: 42, format: 'text' });
    assert.equal(parseNarrowOptions({ rows: '1e6', out: 'f', keys: 'random', format: 'tbl' }).rows, 1_000_000);
  });
  const BAD = [
    { raw: { rows: 'many', out: 'f' }, message: 'Expected `--rows` to be a whole number from 0 to 4503599627370496, got `many`' },
    { raw: { rows: '1.5', out: 'f' }, message: /`--rows` to be a whole number/ },
    { raw: { rows: '10', out: 'f', keys: 'shuffled' }, message: 'Expected `--keys` to be sequential or random, got `shuffled`' },
    { raw: { rows: '10', out: 'f', format: 'csv' }, message: 'Expected `--format` to be text or tbl, got `csv`' },
    { raw: { rows: '10' }, message: 'Expected `--out` to be a file, or - for stdout, got nothing' },
  ] as const;
  for (const { raw, message } of BAD) {
    it(`rejects ${JSON.stringify(raw)}`, () => {
      assert.throws(() => parseNarrowOptions(raw), typeof message === 'string' ? { message } : message);
    });
  }
  it('reads whole numbers with separators', () => {
    assert.equal(parseWholeNumber('--x', '1,000', 0), 1000);
    assert.throws(() => parseWholeNumber('--x', '', 0), /got ``/);
  });
});

describe('registerGenCommands', () => {
  it('adds `dbt3 gen` and `gen narrow`', () => {
    const program = new Command('pgsurge');
    const dbt3 = program.command('dbt3');
    registerGenCommands(program, dbt3);
    const gen = dbt3.commands.find((c) => c.name() === 'gen');
    assert.ok(gen !== undefined);
    assert.deepEqual(gen.options.map((o) => o.long), ['--scale', '--out', '--tables', '--seed', '--parts', '--part', '--workers', '--format', '--compression', '--row-group-size', '--refresh']);
    const narrow = program.commands.find((c) => c.name() === 'gen')?.commands.find((c) => c.name() === 'narrow');
    assert.ok(narrow !== undefined);
    assert.deepEqual(narrow.options.map((o) => o.long), ['--rows', '--out', '--keys', '--format', '--seed']);
  });

  it('reports a bad option as an Error from parseAsync', async () => {
    const program = new Command('pgsurge').exitOverride();
    const dbt3 = program.command('dbt3');
    registerGenCommands(program, dbt3);
    await assert.rejects(program.parseAsync(['dbt3', 'gen', '--scale', 'abc', '--out', 'x'], { from: 'user' }), {
      message: 'Expected `--scale` to be a number greater than 0, got `abc`',
    });
  });
});
