import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk, LoadTarget } from '../../../src/core/chunk.js';
import { chunkRecords } from '../../../src/input/chunker.js';
import { LoadError } from '../../../src/core/load-error.js';
import { framerForTarget } from '../../../src/input/framer-for.js';
import { JsonRecordError, JsonRowMapper, type JsonColumn } from '../../../src/input/json/json-record.js';
import { JsonSyntaxError, objectMembers } from '../../../src/input/json/json-scan.js';
import { jsonArrayChunks } from '../../../src/input/json/json-array-source.js';
import type { InputOptions } from '../../../src/input/input-options.js';

const COLUMNS: JsonColumn[] = [
  { name: 'id', kind: 'scalar' },
  { name: 'name', kind: 'scalar' },
  { name: 'tags', kind: 'array' },
  { name: 'doc', kind: 'json' },
  { name: 'docs', kind: 'array', elementJson: true },
];
const mapper = (ignoreExtraKeys = false): JsonRowMapper => new JsonRowMapper(COLUMNS, { ignoreExtraKeys, tableName: 't' });

describe('a JSON object → a COPY text record (json_populate_record\'s rules)', () => {
  const cases: { name: string; json: string; record: string }[] = [
    { name: 'keys in any order, missing keys NULL', json: '{"name":"a","id":1}', record: '1\ta\t\\N\t\\N\t\\N' },
    { name: 'null is NULL', json: '{"id":null,"name":null,"doc":null}', record: '\\N\t\\N\t\\N\t\\N\t\\N' },
    { name: 'numbers keep their text', json: '{"id":1.50,"name":12345678901234567890123}', record: '1.50\t12345678901234567890123\t\\N\t\\N\t\\N' },
    { name: 'COPY escapes in strings', json: '{"name":"a\\tb\\nc\\\\d\\re"}', record: '\\N\ta\\tb\\nc\\\\d\\re\t\\N\t\\N\t\\N' },
    { name: 'unicode escapes decoded', json: '{"name":"\\u00e9\\ud83d\\ude00"}', record: '\\N\té😀\t\\N\t\\N\t\\N' },
    { name: 'the string "\\N" is not NULL', json: '{"name":"\\\\N"}', record: '\\N\t\\\\N\t\\N\t\\N\t\\N' },
    { name: 'booleans as text', json: '{"id":true,"name":false}', record: 'true\tfalse\t\\N\t\\N\t\\N' },
    { name: 'an object into a scalar column: its JSON text', json: '{"name":{"a": [1, 2]}}', record: '\\N\t{"a": [1, 2]}\t\\N\t\\N\t\\N' },
    { name: 'json column: the value\'s own text, strings quoted', json: '{"doc":"s","id":2}', record: '2\t\\N\t\\N\t"s"\t\\N' },
    { name: 'json column keeps spaces and escapes', json: '{"doc": {"k" : "a\\nb"} }', record: '\\N\t\\N\t\\N\t{"k" : "a\\\\nb"}\t\\N' },
    { name: 'array column: a PostgreSQL array literal', json: '{"tags":["a","b c","q\\"x",null,"back\\\\slash",1.0,true]}', record: '\\N\t\\N\t{"a","b c","q\\\\"x",NULL,"back\\\\\\\\slash","1.0","true"}\t\\N\t\\N' },
    { name: 'nested arrays: dimensions', json: '{"tags":[[1,2],[3,4]]}', record: '\\N\t\\N\t{{"1","2"},{"3","4"}}\t\\N\t\\N' },
    { name: 'empty array', json: '{"tags":[]}', record: '\\N\t\\N\t{}\t\\N\t\\N' },
    { name: 'json[] elements keep their JSON text', json: '{"docs":[{"a":1},"s",null]}', record: '\\N\t\\N\t\\N\t\\N\t{"{\\\\"a\\\\":1}","\\\\"s\\\\"",NULL}' },
    { name: 'a string into an array column is taken as a literal', json: '{"tags":"{x,y}"}', record: '\\N\t\\N\t{x,y}\t\\N\t\\N' },
    { name: 'duplicate keys: the last wins', json: '{"id":1,"id":2}', record: '2\t\\N\t\\N\t\\N\t\\N' },
    { name: 'space around everything', json: '  { "id" : 7 , "name" : "x" }  ', record: '7\tx\t\\N\t\\N\t\\N' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(mapper().toCopyText(c.json), c.record));

  const bad: { name: string; json: string; message: RegExp; at: number }[] = [
    { name: 'a trailing comma', json: '{"id":1,}', message: /expected a key, found `}`/, at: 8 },
    { name: 'a missing brace', json: '{"id":1', message: /expected `,` or `}`, found end of input/, at: 7 },
    { name: 'single quotes', json: "{'id':1}", message: /expected a key/, at: 1 },
    { name: 'a bare word', json: '{"id":nope}', message: /expected a JSON value, found `nope}`/, at: 6 },
    { name: 'a bad escape', json: '{"id":"\\x"}', message: /bad escape \\x/, at: 7 },
    { name: 'a raw newline in a string', json: '{"id":"a\tb"}', message: /control character/, at: 7 },
    { name: 'an array, not an object', json: '[1,2]', message: /expected a JSON object, found `\[1,2\]`/, at: 0 },
    { name: 'two objects on one line', json: '{"id":1}{"id":2}', message: /unexpected `\{"id":2\}` after the object/, at: 8 },
    { name: 'a leading zero', json: '{"id":01}', message: /expected `,` or `}`, found `1}`/, at: 7 },
  ];
  for (const b of bad) {
    it(`rejects ${b.name}, with where`, () => {
      assert.throws(() => mapper().toCopyText(b.json), (e: unknown) => e instanceof JsonRecordError && b.message.test(e.message) && e.at === b.at);
    });
  }
  it('a key that is no column: an error, or left out', () => {
    assert.throws(() => mapper().toCopyText('{"id":1,"nick":"x"}'), (e: unknown) => e instanceof JsonRecordError && e.kind === 'extra-key' && e.at === 8 && /key "nick" is not a column of t/.test(e.message));
    assert.equal(mapper(true).toCopyText('{"id":1,"nick":"x"}'), '1\t\\N\t\\N\t\\N\t\\N');
  });
  it('nesting is bounded', () => {
    assert.throws(() => objectMembers(`{"a":${'['.repeat(600)}${']'.repeat(600)}}`), JsonSyntaxError);
  });
});

async function* blocksOf(buf: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts, buf.length]) {
    yield buf.subarray(at, c);
    at = c;
  }
}

function target(format: 'ndjson' | 'json', input: InputOptions = {}): LoadTarget {
  return { table: 't', schema: undefined, format, file: 'f', input, columns: COLUMNS.map((c) => c.name), jsonColumns: COLUMNS };
}

async function collect(gen: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const c of gen) out.push(c);
  return out;
}

describe('NDJSON framing wherever the input is cut', () => {
  const input = '{"id":1,"name":"é"}\n\n{"id":2}\r\n  \n{"id":3,"tags":[1]}\n{"id":4}';
  const expected = '1\té\t\\N\t\\N\t\\N\n2\t\\N\t\\N\t\\N\t\\N\n3\t\\N\t{"1"}\t\\N\t\\N\n4\t\\N\t\\N\t\\N\t\\N\n';
  it('every cut, chunk sizes 1…len: records, lines and bytes add up, blank lines skipped', async () => {
    const buf = Buffer.from(input);
    for (let cut = 0; cut <= buf.length; cut++) {
      for (const chunkBytes of [1, 5, 17, buf.length, 1 << 20]) {
        const t = target('ndjson');
        const chunks = await collect(chunkRecords(blocksOf(buf, [cut]), { target: t, framer: framerForTarget(t), chunkBytes, startOffset: 0, startLine: 1 }));
        assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), expected, `cut ${cut}, chunk ${chunkBytes}`);
        // Each chunk's first line is the line of its first record, and records within a chunk are consecutive lines.
        for (const c of chunks) {
          const firstId = /^(\d+)/.exec(c.data.toString())![1];
          assert.equal(c.location.firstLine, { '1': 1, '2': 3, '3': 5, '4': 6 }[firstId!], `cut ${cut}, chunk ${chunkBytes}: first line of record ${firstId}`);
        }
        assert.equal(chunks.reduce((s, c) => s + c.records, 0), 4);
      }
    }
  });

  it('read in small steps: a chunk never holds a blank line between two of its records (its n-th record is on its n-th line)', async () => {
    const buf = Buffer.from(input);
    for (const readStep of [1, 3, 9, 20]) {
      for (const chunkBytes of [17, 1 << 20]) {
        const t = target('ndjson');
        const chunks = await collect(chunkRecords(blocksOf(buf, []), { target: t, framer: framerForTarget(t), chunkBytes, startOffset: 0, startLine: 1, readStep }));
        assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), expected, `step ${readStep}, chunk ${chunkBytes}`);
        for (const c of chunks) {
          // Blank lines may follow the records, never come between them.
          const filled = c.source!.toString().split('\n').flatMap((l, i) => (/^[ \t\r]*$/.test(l) ? [] : [i]));
          assert.deepEqual(filled, [...Array(c.records).keys()], `step ${readStep}, chunk ${chunkBytes}: ${JSON.stringify(c.source!.toString())}`);
        }
      }
    }
  });

  it('wire bytes larger than the input, chunks smaller than Node\'s 4 KB pooled buffers: every row whole', async () => {
    // `{}` becomes eight \N fields: each step's framed rows are a fresh small buffer, which
    // Node may place right after the chunk's own wire buffer in its shared 8 KB pool.
    const rows = 3000;
    const buf = Buffer.from('{}\n'.repeat(rows));
    const cols: JsonColumn[] = 'abcdefgh'.split('').map((name) => ({ name, kind: 'scalar' }));
    const t: LoadTarget = { table: 't', schema: undefined, format: 'ndjson', file: '-', columns: cols.map((c) => c.name), jsonColumns: cols };
    // 4 KB blocks, each a buffer of its own, as from a pipe.
    async function* pipe(): AsyncGenerator<Buffer> {
      for (let i = 0; i < buf.length; i += 4096) yield Buffer.from(buf.subarray(i, i + 4096));
    }
    for (const chunkBytes of [150, 333, 4000]) {
      const chunks = await collect(chunkRecords(pipe(), { target: t, framer: framerForTarget(t), chunkBytes, startOffset: 0, startLine: 1 }));
      assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), `${'\\N\t'.repeat(7)}\\N\n`.repeat(rows), `chunk ${chunkBytes}`);
      for (const c of chunks) assert.equal(c.data.toString().split('\n').length - 1, c.records, `chunk ${chunkBytes}: every record of a chunk is in its wire bytes`);
    }
  });

  it('--missing default: a chunk per run of the same keys, each with its column list', async () => {
    const t = target('ndjson', { missing: 'default' });
    const buf = Buffer.from('{"id":1}\n{"id":2}\n{"id":3,"name":"x"}\n{"id":4}\n');
    const chunks = await collect(chunkRecords(blocksOf(buf, []), { target: t, framer: framerForTarget(t), chunkBytes: 1 << 20, startOffset: 0, startLine: 1 }));
    assert.deepEqual(chunks.map((c) => [c.target.columns, c.data.toString(), c.location.firstLine]), [
      [['id'], '1\n2\n', 1],
      [['id', 'name'], '3\tx\n', 3],
      [['id'], '4\n', 4],
    ]);
  });

  it('invalid UTF-8 is a line of its own to reject (not loaded as U+FFFD); in a JSON array it stops', async () => {
    const t = target('ndjson');
    const buf = Buffer.concat([Buffer.from('{"id":1}\n{"name":"'), Buffer.from([0xe9]), Buffer.from('"}\n')]);
    const chunks = await collect(chunkRecords(blocksOf(buf, []), { target: t, framer: framerForTarget(t), chunkBytes: 100, startOffset: 0, startLine: 1 }));
    assert.deepEqual(
      chunks.map((c) => [c.location.byteOffset, c.location.byteLength, c.location.firstLine, c.records, c.unframable?.message.slice(0, 13)]),
      [
        [0, 9, 1, 1, undefined],
        [9, 13, 2, 1, 'invalid UTF-8'],
      ],
    );
    assert.deepEqual(chunks[1]!.source, buf.subarray(9, 22), 'the line verbatim, with its newline');
    assert.equal(chunks[1]!.data.length, 0, 'nothing sent to the server');
    const latin1 = target('ndjson', { encoding: 'LATIN1' });
    const ok = await collect(chunkRecords(blocksOf(buf, []), { target: latin1, framer: framerForTarget(latin1), chunkBytes: 100, startOffset: 0, startLine: 1 }));
    assert.equal(Buffer.concat(ok.map((c) => c.data)).toString(), '1\t\\N\t\\N\t\\N\t\\N\n\\N\té\t\\N\t\\N\t\\N\n');
    const arr = Buffer.concat([Buffer.from('[{"name":"'), Buffer.from([0xff]), Buffer.from('"}]')]);
    await assert.rejects(collect(jsonArrayChunks(blocksOf(arr, []), { target: target('json'), chunkBytes: 10, startOffset: 0 })), /f: invalid UTF-8 between bytes 0 and 14/);
  });

  it('a malformed last line without its newline is rejected with one (the reject file holds every record with its line ending)', async () => {
    const t = target('ndjson');
    const buf = Buffer.from('{"id":1}\r\n{"id":2,');
    const chunks = await collect(chunkRecords(blocksOf(buf, []), { target: t, framer: framerForTarget(t), chunkBytes: 100, startOffset: 0, startLine: 1 }));
    assert.deepEqual(chunks.filter((c) => c.unframable !== undefined).map((c) => c.source!.toString()), ['{"id":2,\n']);
    assert.equal(chunks.reduce((n, c) => n + c.records, 0), 2);
  });

  it('a malformed line is a chunk of its own to reject, with its line, byte offset and character, wherever the input is cut', async () => {
    const t = target('ndjson');
    const buf = Buffer.from('{"id":1}\n{"id":2}\n{"id":3,}\n{"id":4}');
    for (let cut = 0; cut <= buf.length; cut++) {
      for (const chunkBytes of [4, 1 << 20]) {
        const chunks = await collect(chunkRecords(blocksOf(buf, [cut]), { target: t, framer: framerForTarget(t), chunkBytes, startOffset: 100, startLine: 1 }));
        const bad = chunks.filter((c) => c.unframable !== undefined);
        assert.equal(bad.length, 1, `cut ${cut}, chunk ${chunkBytes}`);
        assert.deepEqual([bad[0]!.location.byteOffset, bad[0]!.location.byteLength, bad[0]!.location.firstLine, bad[0]!.source!.toString()], [118, 10, 3, '{"id":3,}\n']);
        assert.match(bad[0]!.unframable!.message, /expected a key, found `}`/);
        assert.equal(bad[0]!.unframable!.character, 9);
        assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), '1\t\\N\t\\N\t\\N\t\\N\n2\t\\N\t\\N\t\\N\t\\N\n4\t\\N\t\\N\t\\N\t\\N\n', 'the others go on');
        // The chunks tile the input: every byte in exactly one of them.
        let at = 100;
        for (const c of chunks) {
          assert.equal(c.location.byteOffset, at);
          at += c.location.byteLength;
        }
        assert.equal(at, 100 + buf.length);
      }
    }
  });
});

describe('JSON arrays, streamed, wherever the input is cut', () => {
  const doc = '{"meta":{"items":[{"id":-1}]},"data":{"items":[{"id":1,"name":"é"} , {"id":2,"doc":{"a":[1,2.50]}},\n{"id":3,"tags":["x"]}]},"tail":[]}';
  const expected = '1\té\t\\N\t\\N\t\\N\n2\t\\N\t\\N\t{"a":[1,2.50]}\t\\N\n3\t\\N\t{"x"}\t\\N\t\\N\n';
  it('--json-path picks the array; every cut gives the same records', async () => {
    const buf = Buffer.from(doc);
    for (let cut = 0; cut <= buf.length; cut++) {
      for (const chunkBytes of [1, 30, 1 << 20]) {
        const chunks = await collect(jsonArrayChunks(blocksOf(buf, [cut]), { target: target('json', { jsonPath: 'data.items' }), chunkBytes, startOffset: 0 }));
        assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), expected, `cut ${cut}`);
        assert.deepEqual(chunks.map((c) => c.location.firstRecord), chunkBytes === 1 ? [1, 2, 3] : chunks.length === 1 ? [1] : chunks.map((c) => c.location.firstRecord));
      }
    }
  });
  it('--skip and --limit count elements', async () => {
    const buf = Buffer.from(JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ id: i + 1 }))));
    const chunks = await collect(jsonArrayChunks(blocksOf(buf, [7, 30]), { target: target('json', { skip: 3, limit: 4 }), chunkBytes: 1, startOffset: 0 }));
    assert.deepEqual(chunks.map((c) => c.data.toString().split('\t')[0]), ['4', '5', '6', '7']);
    assert.deepEqual(chunks.map((c) => c.location.firstRecord), [1, 2, 3, 4]);
  });
  it('a top-level value that is not an array, an element that is not an object', async () => {
    await assert.rejects(collect(jsonArrayChunks(blocksOf(Buffer.from('{"a":1}'), []), { target: target('json'), chunkBytes: 10, startOffset: 0 })), /f: the document is not a JSON array \(it starts with object\)/);
    await assert.rejects(collect(jsonArrayChunks(blocksOf(Buffer.from('[{"id":1}, 5]'), []), { target: target('json'), chunkBytes: 10, startOffset: 0 })), /f: array element 2 .*expected a JSON object, found `5`/);
    await assert.rejects(collect(jsonArrayChunks(blocksOf(Buffer.from(''), []), { target: target('json'), chunkBytes: 10, startOffset: 0 })), /f: the input is empty/);
  });
  it('malformed JSON: located exactly when the input can be read again', async () => {
    const buf = Buffer.from('[\n{"id":1},\n{"id":2 "x":1}]');
    await assert.rejects(
      collect(jsonArrayChunks(blocksOf(buf, [5]), { target: target('json'), chunkBytes: 10, startOffset: 0, reopen: () => blocksOf(buf, [3]) })),
      /f: malformed JSON at line 3, column 9: expected ','/,
    );
    await assert.rejects(collect(jsonArrayChunks(blocksOf(buf, [5]), { target: target('json'), chunkBytes: 10, startOffset: 0 })), /f: malformed JSON near byte 27: expected ',' \(the parser had read 27 bytes\)$/);
  });
});
