import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { writerSpecFromFlags } from '../../../src/cli/writer-options.js';
import type { WireColumn } from '../../../src/codecs/catalog.js';
import { encoderFor } from '../../../src/codecs/index.js';
import type { SessionFacts } from '../../../src/codecs/field-encoder.js';
import { autoPicksBinary, isLocalHost } from '../../../src/wire/auto-rule.js';
import { splitFormatOf } from '../../../src/wire/record-splitter.js';
import { planWire } from '../../../src/wire/wire-plan.js';
import { formatTableWire } from '../../../src/wire/wire-report.js';

const col = (name: string, typname: string, declared = typname): WireColumn => ({ name, typname, declared, typmod: -1, oid: 0 });
const session: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
const tbl = splitFormatOf({ format: 'text', delimiter: '|' });
const lineitemLike = [col('k', 'int8'), col('p', 'int4'), col('q', 'numeric'), col('d', 'date'), col('f', 'bpchar'), col('c', 'varchar')];

describe('planWire: binary only where every step is exact', () => {
  const cases: { name: string; choice: 'text' | 'binary' | 'auto'; columns: WireColumn[]; session?: SessionFacts; format?: ReturnType<typeof splitFormatOf>; local?: boolean; workers?: number; binary: boolean; why?: RegExp }[] = [
    { name: 'binary with an encoder for every column', choice: 'binary', columns: lineitemLike, binary: true },
    { name: '--wire text', choice: 'text', columns: lineitemLike, binary: false, why: /^--wire text$/ },
    { name: 'a column without an encoder names the column and its type', choice: 'binary', columns: [col('id', 'int4'), col('doc', 'xml', 'xml')], binary: false, why: /^column doc is xml: no binary encoder$/ },
    { name: 'a server encoding other than UTF8', choice: 'binary', columns: lineitemLike, session: { ...session, serverEncoding: 'LATIN1' }, binary: false, why: /server_encoding is LATIN1/ },
    { name: 'a framing the splitter cannot cut', choice: 'binary', columns: lineitemLike, format: splitFormatOf({ format: 'text', delimiter: '§' }), binary: false, why: /framing: its delimiter/ },
    { name: 'auto on a typed table, the server elsewhere', choice: 'auto', columns: lineitemLike, local: false, binary: true },
    { name: 'auto on a typed table, the server on this machine, workers unknown', choice: 'auto', columns: lineitemLike, local: true, binary: true },
    { name: 'auto on a typed table, the server on this machine, as many workers as cores', choice: 'auto', columns: lineitemLike, local: true, workers: 2, binary: true },
    { name: 'auto on a typed table, the server on this machine, more workers than cores', choice: 'auto', columns: lineitemLike, local: true, workers: 3, binary: false, why: /^auto: the server runs on this machine, with 3 workers on 2 cores: more backends than cores/ },
    { name: 'auto on a typed table, the server on this machine, fewer workers than cores', choice: 'auto', columns: lineitemLike, local: true, workers: 1, binary: true },
    { name: 'auto on a text-heavy table says why', choice: 'auto', columns: [col('id', 'int4'), col('a', 'text'), col('b', 'text'), col('c', 'varchar'), col('d', 'int8')], local: false, binary: false, why: /^auto: only 0 of 5 columns \(0%\) are of a type whose text the server parses slowly \(numeric, date\/time, interval or float; integers and text are cheap\)/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planWire(c.choice, c.columns, c.session ?? session, c.format ?? tbl, encoderFor, { serverIsLocal: c.local ?? true, workers: c.workers, cores: 2 });
      assert.equal(plan.binary, c.binary);
      if (!plan.binary && c.why) assert.match(plan.why, c.why);
      if (plan.binary) assert.equal(plan.encoders.length, c.columns.length);
    });
  }
});

describe('auto rule', () => {
  it('counts the columns costly to parse; a server on this machine gets binary with no more workers than cores', () => {
    const remote = { serverIsLocal: false };
    assert.equal(autoPicksBinary([col('a', 'numeric'), col('b', 'text'), col('c', 'int4'), col('d', 'int4')], remote).binary, true);
    assert.equal(autoPicksBinary([col('a', 'numeric'), col('b', 'text'), col('c', 'int4'), col('d', 'int4'), col('e', 'int4')], remote).binary, false);
    assert.equal(autoPicksBinary([col('a', 'numeric')], { serverIsLocal: true, cores: 2 }).binary, true);
    assert.equal(autoPicksBinary([col('a', 'numeric')], { serverIsLocal: true, workers: 1, cores: 2 }).binary, true);
    assert.equal(autoPicksBinary([col('a', 'numeric')], { serverIsLocal: true, workers: 2, cores: 2 }).binary, true);
    assert.equal(autoPicksBinary([col('a', 'numeric')], { serverIsLocal: true, workers: 3, cores: 2 }).binary, false);
    assert.equal(autoPicksBinary([col('a', 'numeric')], { serverIsLocal: true, workers: 4, cores: 8 }).binary, true);
    // Too few costly columns: text, wherever the server is.
    assert.equal(autoPicksBinary([col('a', 'int4'), col('b', 'text')], { serverIsLocal: true, workers: 1, cores: 2 }).binary, false);
  });
  it('knows a Unix socket and loopback as this machine', () => {
    for (const h of ['/tmp/x', 'localhost', '127.0.0.1', '::1', undefined]) assert.equal(isLocalHost(h), true, String(h));
    for (const h of ['db1', '10.0.0.5']) assert.equal(isLocalHost(h), false, h);
  });
});

describe('--wire flags', () => {
  it('binary needs plain COPY; text is fine anywhere', () => {
    assert.deepEqual(writerSpecFromFlags({ mode: 'copy', onConflict: 'error', wire: 'binary' }), { mode: 'copy', onConflict: 'error', wire: 'binary' });
    assert.throws(() => writerSpecFromFlags({ mode: 'insert', onConflict: 'error', wire: 'binary' }), /`--wire binary` applies only to --mode copy/);
    assert.throws(() => writerSpecFromFlags({ mode: 'copy', onConflict: 'skip', wire: 'binary' }), /`--wire binary` needs plain COPY/);
    assert.equal(writerSpecFromFlags({ mode: 'insert', onConflict: 'error', wire: 'text' }).mode, 'insert');
  });
});

describe('the summary line', () => {
  it('names the wire, the fallback count and the first value', () => {
    assert.equal(
      formatTableWire({ table: 'lineitem', wire: 'binary', binaryChunks: 9, fallbackChunks: 1, firstFallback: 'line 7, column l_shipdate: "infinity" (a value its encoder cannot encode exactly)', redoneChunks: 1 }),
      'lineitem: binary wire (9 chunks binary; 1 fell back to text, the first for line 7, column l_shipdate: "infinity" (a value its encoder cannot encode exactly); 1 refused by the server and redone as text)',
    );
    assert.equal(formatTableWire({ table: 't', wire: 'text', why: 'column doc is xml: no binary encoder', binaryChunks: 0, fallbackChunks: 0, redoneChunks: 0 }), 't: text wire (column doc is xml: no binary encoder)');
  });
});
