import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER } from '../../../src/codecs/binary-copy.js';
import { encoderFor } from '../../../src/codecs/index.js';
import { WireBuffer, type SessionFacts } from '../../../src/codecs/field-encoder.js';
import { RecordSplitter, type SplitFormat } from '../../../src/wire/record-splitter.js';
import { encodePieces, PieceBuffers, type Drainable } from '../../../src/writer/wire-writer.js';
import { lineitemFields } from '../../helpers/lineitem-data.js';

const session: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
const format: SplitFormat = { csv: false, delimiter: 0x7c, null: Buffer.from('\\N'), quote: 0x22, escape: 0x22 };
const types = ['int8', 'int4', 'int4', 'int4', 'numeric', 'numeric', 'numeric', 'numeric', 'bpchar', 'bpchar', 'date', 'date', 'date', 'bpchar', 'bpchar', 'varchar'];
const splitter = (): RecordSplitter => new RecordSplitter(format, types.map((t) => encoderFor({ typname: t, typmod: -1, oid: 0 }, session)!));

/** A writer that keeps what it was given for `lag` more writes before "sending" it (reading its bytes then), like a socket whose writes finish later. */
class LaggingSocket implements Drainable {
  readonly sent: Buffer[] = [];
  private readonly queue: Uint8Array[] = [];
  constructor(private readonly lag: number) {}
  get writableLength(): number {
    return this.queue.reduce((n, q) => n + q.length, 0);
  }
  write(bytes: Uint8Array): void {
    this.queue.push(bytes);
    while (this.queue.length > this.lag) this.sent.push(Buffer.from(this.queue.shift()!));
  }
  drain(): void {
    while (this.queue.length > 0) this.sent.push(Buffer.from(this.queue.shift()!));
  }
}

describe('binary pieces: reused buffers', () => {
  it('a piece the socket still holds is never overwritten; the bytes sent are the whole chunk encoded at once', async () => {
    const data = Buffer.from(lineitemFields(12000).map((f) => `${f.join('|')}\n`).join(''));
    const whole = new WireBuffer();
    whole.bytes.set(BINARY_COPY_HEADER);
    whole.pos = BINARY_COPY_HEADER.length;
    assert.equal(splitter().encode(data, whole), 12000);
    const expected = Buffer.concat([Buffer.from(whole.bytes.subarray(0, whole.pos)), Buffer.from(BINARY_COPY_TRAILER)]);
    for (const lag of [0, 1, 3]) {
      const socket = new LaggingSocket(lag);
      const buffers = new PieceBuffers();
      const seen = new Set<WireBuffer>();
      let pieces = 0;
      const r = await encodePieces(data, splitter(), buffers.take([socket]), async (piece) => {
        seen.add(piece);
        pieces++;
        buffers.hold(piece);
        socket.write(piece.bytes.subarray(0, piece.pos));
        // Now and then the socket catches up (a drain).
        if (pieces % 4 === 0) socket.drain();
        return buffers.take([socket]);
      });
      socket.drain();
      assert.equal(r, 12000);
      assert.ok(pieces >= 16, `${pieces} pieces`);
      assert.ok(Buffer.concat(socket.sent).equals(expected), `lag ${lag}: the bytes sent`);
      // Reused: no more buffers than pieces written between two drains, plus the one being encoded.
      assert.ok(seen.size <= 5, `lag ${lag}: ${seen.size} buffers for ${pieces} pieces`);
    }
  });

  it('take gives back a held buffer only once every writer is empty', () => {
    const buffers = new PieceBuffers();
    const a = buffers.take([]);
    buffers.hold(a);
    const busy = { writableLength: 10 };
    const idle = { writableLength: 0 };
    const b = buffers.take([idle, busy]);
    assert.notEqual(b, a);
    buffers.hold(b);
    const c = buffers.take([idle, idle]);
    assert.ok(c === a || c === b);
  });
});

describe('binary pieces: cut where a record ends', () => {
  it('a newline a backslash escapes at the piece boundary stays inside its value', async () => {
    const textFormat: SplitFormat = { csv: false, delimiter: 0x09, null: Buffer.from('\\N'), quote: 0x22, escape: 0x22 };
    const textSplitter = (): RecordSplitter => new RecordSplitter(textFormat, ['int4', 'text'].map((t) => encoderFor({ typname: t, typmod: -1, oid: 0 }, session)!));
    let text = '';
    let i = 0;
    while (text.length < 65000) text += `${++i}\tname ${i}\n`;
    // The escaped newline right where the first piece would end (64 KB from the start).
    const prefix = `${++i}\t`;
    text += `${prefix}${'x'.repeat(65535 - text.length - prefix.length - 1)}\\\ny\n`;
    assert.equal(text.indexOf('\\\n') + 1, 65535);
    for (let k = 0; k < 2000; k++) text += `${++i}\tname ${i}\n`;
    const data = Buffer.from(text);
    const r = await encodePieces(data, textSplitter(), new WireBuffer(), async (piece) => {
      piece.pos = 0;
      return piece;
    });
    assert.equal(r, i, 'every record encoded, none refused');
  });
});
