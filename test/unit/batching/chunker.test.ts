import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk, LoadTarget } from '../../../src/core/chunk.js';
import { chunkRecords } from '../../../src/input/chunker.js';
import type { Format } from '../../../src/input/formats.js';
import { framerFor } from '../../../src/input/framer-for.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chunkSource } from '../../../src/core/chunk.js';
import { LoadError } from '../../../src/core/load-error.js';
import { rangeReader, type ByteReader } from '../../../src/input/byte-reader.js';

/** A reader over `buf` that hands out at most `max` bytes per read, varying with a seed. */
function memoryReader(buf: Buffer, max: number, seed: number): ByteReader {
  let pos = 0;
  let s = seed;
  return {
    async read(into, at, length) {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      const n = Math.min(length, buf.length - pos, 1 + (s % max));
      if (n <= 0) return 0;
      buf.copy(into, at, pos, pos + n);
      pos += n;
      return n;
    },
  };
}

const target = (format: Format): LoadTarget => ({ table: 't', schema: undefined, format, file: 'f' });

/** dbgen-like `.tbl` lines ending in `lineEnd`; every eleventh holds an escaped backslash (a block with one is framed record by record). */
function tblInput(rows: number, seed: number, lineEnd = '\n'): { input: Buffer; expected: string } {
  let s = seed;
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    lines.push(`${i}|${'v'.repeat(s % 40)}${i % 11 === 3 ? '\\\\' : ''}|${s % 7 === 0 ? '' : 'x'}|`);
  }
  return { input: Buffer.from(lines.map((l) => l + lineEnd).join('')), expected: lines.map((l) => l.slice(0, -1) + '\n').join('') };
}

/** Checks the chunks against the input: wire bytes, source bytes at their locations, lines, one record at least each. */
function checkChunks(chunks: readonly { data: Buffer; source?: Buffer; location: Chunk['location']; records: number; lines: number }[], input: Buffer, expected: string): void {
  assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), expected);
  let offset = 0;
  let line = 1;
  for (const c of chunks) {
    assert.equal(c.location.byteOffset, offset);
    assert.equal(c.location.firstLine, line);
    assert.ok(c.records > 0);
    assert.ok(c.source!.equals(input.subarray(offset, offset + c.location.byteLength)), `source of the chunk at ${offset}`);
    offset += c.location.byteLength;
    line += c.lines;
  }
  assert.equal(offset, input.length, 'the chunks cover every byte once');
}

describe('chunker: reading in steps into chunk-sized buffers', () => {
  it('tbl and text, read in ragged pieces, with steps and chunk sizes from tiny to larger than the input', async () => {
    const { input, expected } = tblInput(300, 7);
    const crlf = tblInput(300, 7, '\r\n').input;
    const text = Buffer.from(expected);
    for (const [format, buf, want] of [['tbl', input, expected], ['tbl', crlf, expected], ['text', text, expected]] as const) {
      for (const chunkBytes of [1, 5, 64, 1000, 1 << 20]) {
        for (const readStep of [1, 3, 100, 4096]) {
          const chunks: Chunk[] = [];
          for await (const c of chunkRecords(memoryReader(buf, 97, chunkBytes + readStep), { target: target(format), framer: framerFor(format), chunkBytes, startOffset: 0, startLine: 1, readStep })) chunks.push(c);
          checkChunks(chunks, buf, want);
          if (chunkBytes >= 64) assert.ok(chunks.every((c) => c.location.byteLength <= chunkBytes || c.records === 1), `chunks of ${format} stay within ${chunkBytes} bytes`);
        }
      }
    }
  });

  it('a record longer than a chunk and many steps stays whole', async () => {
    const long = `1|${'y'.repeat(50_000)}|\n`;
    const input = Buffer.from(`0|a|\n${long}2|b|`);
    const chunks: Chunk[] = [];
    for await (const c of chunkRecords(memoryReader(input, 1000, 3), { target: target('tbl'), framer: framerFor('tbl'), chunkBytes: 100, startOffset: 0, startLine: 1, readStep: 10 })) chunks.push(c);
    checkChunks(chunks, input, `0|a\n1|${'y'.repeat(50_000)}\n2|b\n`);
    assert.equal(chunks[0]!.records, 1);
    assert.equal(chunks.reduce((n, c) => n + c.records, 0), 3);
  });

  it('released chunks lend their buffers to later ones, and a chunk not released is never written over', async () => {
    const { input, expected } = tblInput(5000, 11);
    for (const format of ['tbl', 'text'] as const) {
      const buf = format === 'tbl' ? input : Buffer.from(expected);
      const kept: { chunk: Chunk; data: Buffer; source: Buffer }[] = [];
      const all: { data: Buffer; source?: Buffer; location: Chunk['location']; records: number; lines: number }[] = [];
      const buffers = new Set<ArrayBufferLike>();
      let n = 0;
      for await (const c of chunkRecords(memoryReader(buf, 5000, 5), { target: target(format), framer: framerFor(format), chunkBytes: 4096, startOffset: 0, startLine: 1, readStep: 1000 })) {
        const copy = { data: Buffer.from(c.data), source: Buffer.from(c.source!) };
        all.push({ ...c, ...copy });
        buffers.add(c.data.buffer);
        // Release two chunks of three as soon as they come; keep the third for the end.
        if (n++ % 3 === 2) kept.push({ chunk: c, ...copy });
        else c.release?.();
      }
      checkChunks(all, buf, expected);
      for (const k of kept) {
        assert.ok(k.chunk.data.equals(k.data), `${format}: a chunk still held kept its wire bytes`);
        assert.ok(k.chunk.source!.equals(k.source), `${format}: a chunk still held kept its source bytes`);
      }
      assert.ok(buffers.size < all.length / 2, `${format}: ${all.length} chunks used ${buffers.size} buffers`);
    }
  });
});

describe('chunker: tbl chunks of a file do not keep their source bytes', () => {
  it('a chunk reads its source again from the file, checked against the bytes it sent', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-chunker-'));
    try {
      const file = path.join(dir, 'lineitem.tbl');
      const { input, expected } = tblInput(2000, 5);
      await fs.writeFile(file, input);
      const fh = await fs.open(file, 'r');
      const chunks: Chunk[] = [];
      const wire: Buffer[] = [];
      const t = { ...target('tbl'), file };
      try {
        for await (const c of chunkRecords(rangeReader(fh, { start: 0, end: input.length }, file), { target: t, framer: framerFor('tbl'), chunkBytes: 4096, startOffset: 0, startLine: 1, readStep: 1000 })) {
          assert.equal(c.source, undefined, 'the source buffer went on to the next chunk');
          chunks.push(c);
          wire.push(Buffer.from(c.data));
        }
      } finally {
        await fh.close();
      }
      assert.equal(Buffer.concat(wire).toString(), expected);
      assert.ok(chunks.length > 10);
      let offset = 0;
      for (const c of chunks) {
        const source = await chunkSource(c);
        assert.ok(source.equals(input.subarray(offset, offset + c.location.byteLength)), `source of the chunk at ${offset}`);
        offset += c.location.byteLength;
      }
      assert.equal(offset, input.length);

      // The file changes under the load: a refused chunk must not write other bytes as its rejects.
      const changed = Buffer.from(input);
      changed[chunks[3]!.location.byteOffset + 2] = 0x41;
      await fs.writeFile(file, changed);
      await assert.rejects(chunkSource(chunks[3]!), (e: unknown) => e instanceof LoadError && e.code === 'bad-input' && /changed while it was being loaded/.test(e.message));
      assert.ok((await chunkSource(chunks[4]!)).equals(input.subarray(chunks[4]!.location.byteOffset, chunks[4]!.location.byteOffset + chunks[4]!.location.byteLength)));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('chunker: tbl chunks of a file are framed in place, in the source buffer', () => {
  /** `memoryReader` that can read its bytes again, as a file's reader can: the chunker then frames in place. */
  const rereadable = (buf: Buffer, max: number, seed: number): ByteReader => ({ ...memoryReader(buf, max, seed), reread: async (offset, length) => Buffer.from(buf.subarray(offset, offset + length)) });

  it('the wire bytes and the source bytes read again are the input, with steps and chunk sizes from tiny to larger than the input', async () => {
    const { input, expected } = tblInput(300, 7);
    const crlf = tblInput(300, 7, '\r\n').input;
    // Last records without their newline, with and without a trailing `|` (framing adds the newline: one byte more than read).
    const ends: [Buffer, string][] = [
      [input, expected],
      [crlf, expected],
      [Buffer.concat([input, Buffer.from('300|w|x')]), `${expected}300|w|x\n`],
      [Buffer.concat([input, Buffer.from('300|w|x|')]), `${expected}300|w|x\n`],
      [Buffer.concat([crlf, Buffer.from('300|w|x|')]), `${expected}300|w|x\n`],
    ];
    for (const [buf, want] of ends) {
      for (const chunkBytes of [1, 5, 64, 1000, 1 << 20]) {
        for (const readStep of [1, 3, 100, 4096]) {
          const chunks: Chunk[] = [];
          const held: Chunk[] = [];
          const wire: Buffer[] = [];
          let n = 0;
          for await (const c of chunkRecords(rereadable(buf, 97, chunkBytes + readStep), { target: target('tbl'), framer: framerFor('tbl'), chunkBytes, startOffset: 0, startLine: 1, readStep })) {
            assert.equal(c.source, undefined, 'framed over its source bytes');
            chunks.push(c);
            wire.push(Buffer.from(c.data));
            // Release some at once (their source read again first: a refused chunk's is read before it commits), hold the
            // others to the end: a held chunk's bytes are never written over.
            if (n++ % 3 === 1) {
              assert.ok((await chunkSource(c)).equals(buf.subarray(c.location.byteOffset, c.location.byteOffset + c.location.byteLength)));
              c.release?.();
            } else held.push(c);
          }
          assert.equal(Buffer.concat(wire).toString(), want, `chunkBytes ${chunkBytes}, readStep ${readStep}`);
          for (const c of held) {
            assert.ok(c.data.equals(wire[chunks.indexOf(c)]!), 'a held chunk kept its wire bytes');
            assert.ok((await chunkSource(c)).equals(buf.subarray(c.location.byteOffset, c.location.byteOffset + c.location.byteLength)), `source of the chunk at ${c.location.byteOffset}`);
          }
          let offset = 0;
          for (const c of chunks) offset += c.location.byteLength;
          assert.equal(offset, buf.length, 'the chunks cover every byte once');
        }
      }
    }
  });

  it('an unterminated last record that fills the buffer to its end gets its newline', async () => {
    // No trailing `|` anywhere: nothing is dropped, so the framed bytes reach the buffer's end and the newline needs a byte more.
    for (const input of ['1|a\n2|b', '2|b', '1|a\r\n22|bb']) {
      const buf = Buffer.from(input);
      const chunks: Chunk[] = [];
      for await (const c of chunkRecords(rereadable(buf, 1000, 1), { target: target('tbl'), framer: framerFor('tbl'), chunkBytes: buf.length, startOffset: 0, startLine: 1, readStep: buf.length })) chunks.push(c);
      assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), input.replace(/\r/g, '') + '\n');
    }
  });
});
