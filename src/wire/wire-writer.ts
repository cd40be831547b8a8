import type pg from 'pg';
import type { Chunk, LoadTarget } from '../batching/chunk.js';
import { copySql, copyWriter, streamCopy } from '../writer/copy-writer.js';
import { RedoAsText, type ChunkResult, type ChunkWriter } from '../writer/chunk-writer.js';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { wireFormat } from '../writer/wire-format.js';
import { readSessionFacts, readWireColumns } from './catalog.js';
import { WireBuffer, type EncoderLookup, type SessionFacts } from './field-encoder.js';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER, writeRaw } from './binary-copy.js';
import { encoderFor } from './encoders/index.js';
import { RecordSplitter, splitFormatOf, type SplitRefusal } from './record-splitter.js';
import { planWire, type WirePlan } from './wire-plan.js';
import { isLocalHost } from './auto-rule.js';
import type { TableWire, WireChoice } from './wire-report.js';

/** What one connection keeps: its session's facts, its output buffer (reused chunk after chunk), a splitter per table. */
interface ConnectionState {
  readonly facts: SessionFacts;
  /** The server shares this machine (a Unix socket, loopback): `auto`'s rule needs it. */
  readonly local: boolean;
  readonly out: WireBuffer;
  /** The COPY text pieces' buffers (`streamEncoded`). */
  readonly pieces: PieceBuffers;
  readonly splitters: Map<WirePlan, RecordSplitter>;
}

type Tally = { -readonly [K in keyof TableWire]: TableWire[K] };

/**
 * COPY through the binary wire where it is exact (see `planWire`), text COPY where not:
 * per table, the columns' types are read from the catalog once and an encoder picked for
 * each; per connection, the session's facts once. A chunk the splitter or an encoder
 * cannot encode exactly goes as text whole (a "fallback chunk"). A binary chunk the
 * server refuses is rolled back by the caller and loaded again through `refusedWriter`,
 * text COPY, whose isolation finds the bad rows with the messages text gives.
 *
 * `options.workers`: the load's connections, for `auto`'s rule (`autoPicksBinary`).
 *
 * A source that already holds binary tuples (a typed source: Parquet) sets `chunk.binary`
 * and the writer sends those as they are.
 */
export function wireCopyWriter(choice: WireChoice, lookup: EncoderLookup = encoderFor, options: { workers?: number | undefined } = {}): ChunkWriter {
  const connections = new WeakMap<pg.Client, ConnectionState>();
  const plans = new Map<string, Promise<WirePlan>>();
  const tallies = new Map<string, Tally>();
  const sentBinary = new WeakSet<Chunk>();

  /** `textWhy`: why the table goes as text; undefined for binary. */
  const tallyOf = (table: string, textWhy: string | undefined): Tally => {
    let t = tallies.get(table);
    if (t === undefined) {
      t = { table, wire: textWhy === undefined ? 'binary' : 'text', binaryChunks: 0, fallbackChunks: 0, redoneChunks: 0, ...(textWhy === undefined ? {} : { why: textWhy }) };
      tallies.set(table, t);
    }
    return t;
  };

  const stateOf = async (client: pg.Client): Promise<ConnectionState> => {
    let s = connections.get(client);
    if (s === undefined) {
      s = { facts: await readSessionFacts(client), local: isLocalHost((client as unknown as { host?: string }).host), out: new WireBuffer(), pieces: new PieceBuffers(), splitters: new Map() };
      connections.set(client, s);
    }
    return s;
  };

  const planOf = (client: pg.Client, target: LoadTarget, state: ConnectionState): Promise<WirePlan> => {
    const { facts, local } = state;
    const key = JSON.stringify([target.schema, target.table, target.columns, target.format, target.input?.delimiter, target.input?.null, target.input?.quote, target.input?.escape, facts, local]);
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = readWireColumns(client, target).then((columns) => planWire(choice, columns, facts, splitFormatOf(wireFormat(target)), lookup, { serverIsLocal: local, workers: options.workers }));
      plans.set(key, plan);
      // A failed read (a lost connection) is tried again by the next chunk.
      plan.catch(() => plans.delete(key));
    }
    return plan;
  };

  async function send(client: pg.Client, chunk: Chunk, begin: boolean): Promise<ChunkResult> {
    const prefix = begin ? 'BEGIN; ' : '';
    const sql = `${prefix}${copySql(chunk.target, undefined, { binary: true })}`;
    if (chunk.binary !== undefined) {
      const tally = tallyOf(chunk.target.table, undefined);
      sentBinary.add(chunk);
      const loaded = await streamCopy(client, sql, chunk.binary);
      tally.binaryChunks++;
      return { loaded, skipped: 0 };
    }
    if (choice !== 'text') {
      const state = await stateOf(client);
      const plan = await planOf(client, chunk.target, state);
      const tally = tallyOf(chunk.target.table, plan.binary ? undefined : plan.why);
      if (plan.binary) {
        let splitter = state.splitters.get(plan);
        if (splitter === undefined) state.splitters.set(plan, (splitter = new RecordSplitter(plan.format, plan.encoders)));
        const out = state.out;
        if (!plan.format.csv) {
          // COPY text: a raw newline always ends a record, so the chunk is encoded a piece at a time while the server parses the pieces before.
          // Marked before it goes: a chunk the server refuses part way is counted as redone by the text path.
          sentBinary.add(chunk);
          const streamed = await streamEncoded(client, sql, chunk.data, splitter, state.pieces);
          if (typeof streamed === 'number') {
            tally.binaryChunks++;
            return { loaded: streamed, skipped: 0 };
          }
          sentBinary.delete(chunk);
          tally.fallbackChunks++;
          tally.firstFallback ??= describeRefusal(streamed.refusal, chunk, plan.columns.map((c) => c.name));
          if (streamed.sent) throw new RedoAsText(`part of the chunk went as binary before ${streamed.refusal.why}: loaded again as text`);
          return begin ? copyWriter.beginAndWriteRows!(client, chunk) : copyWriter.writeRows(client, chunk);
        }
        out.pos = 0;
        // Room for the whole chunk up front (binary lineitem is ~1.75× its text): the buffer grows once, on the first chunk.
        out.reserve(2 * chunk.data.length + 64);
        writeRaw(out, BINARY_COPY_HEADER);
        const encoded = splitter.encode(chunk.data, out);
        if (typeof encoded === 'number') {
          writeRaw(out, BINARY_COPY_TRAILER);
          sentBinary.add(chunk);
          const bytes = out.bytes;
          const loaded = await streamCopy(client, sql, Buffer.from(bytes.buffer, bytes.byteOffset, out.pos));
          tally.binaryChunks++;
          return { loaded, skipped: 0 };
        }
        tally.fallbackChunks++;
        tally.firstFallback ??= describeRefusal(encoded, chunk, plan.columns.map((c) => c.name));
      }
    } else {
      tallyOf(chunk.target.table, '--wire text');
    }
    return begin ? copyWriter.beginAndWriteRows!(client, chunk) : copyWriter.writeRows(client, chunk);
  }

  // The text path for a refused binary chunk: counts it, then COPY text as ever.
  const refusedWriter: ChunkWriter = {
    name: 'copy',
    async writeRows(client, chunk) {
      if (sentBinary.has(chunk)) {
        sentBinary.delete(chunk);
        const t = tallies.get(chunk.target.table);
        if (t) t.redoneChunks++;
      }
      return copyWriter.writeRows(client, chunk);
    },
    failedRecord: copyWriter.failedRecord!.bind(copyWriter),
  };

  return {
    name: 'copy',
    async prepare(client) {
      connections.delete(client);
      if (choice !== 'text') await stateOf(client);
    },
    writeRows: (client, chunk) => send(client, chunk, false),
    beginAndWriteRows: (client, chunk) => send(client, chunk, true),
    failedRecord: copyWriter.failedRecord!.bind(copyWriter),
    refusedWriter,
    wireReport: () => [...tallies.values()].map((t) => ({ ...t })),
  };
}

/**
 * Text bytes encoded per piece. Encoding a whole 8 MB chunk before sending it left the
 * server idle for the encoding's time (~70 ms a chunk): binary -w 1 ran slower than text
 * although the server's CPU per row was 0.7× (bench/wire.ts, SF 1). A piece is encoded
 * while the server parses the one before; its binary form (~1.75× the text) stays under
 * the 128 KB at which the socket's writer was measured to wake too late (copy-writer.ts).
 */
const PIECE_TEXT_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** A chunk that went as binary: its record count; or the refusal that sends it as text, and whether pieces had gone out already. */
export type PiecesResult = number | { refusal: SplitRefusal; sent: boolean };

/**
 * Encodes a COPY text chunk as binary COPY a piece (whole records, ~PIECE_TEXT_BYTES of
 * text) at a time, handing each piece to `send` — header first, trailer last — before the
 * next is encoded. `send` gives back the buffer to encode the next piece into: the same
 * one when it is done with the bytes, another while something may still read them.
 */
export async function encodePieces(data: Buffer, splitter: RecordSplitter, first: WireBuffer, send: (piece: WireBuffer) => Promise<WireBuffer>): Promise<PiecesResult> {
  let records = 0;
  let out = first;
  for (let at = 0; at < data.length; ) {
    const next = at + PIECE_TEXT_BYTES >= data.length ? -1 : data.indexOf(NEWLINE, at + PIECE_TEXT_BYTES - 1);
    const end = next < 0 ? data.length : next + 1;
    out.pos = 0;
    out.reserve(2 * (end - at) + 64);
    if (at === 0) writeRaw(out, BINARY_COPY_HEADER);
    const encoded = splitter.encode(data.subarray(at, end), out, at > 0);
    if (typeof encoded !== 'number') return { refusal: { ...encoded, record: records + encoded.record }, sent: at > 0 };
    records += encoded;
    if (end === data.length) writeRaw(out, BINARY_COPY_TRAILER);
    out = await send(out);
    at = end;
  }
  return records;
}

/** A socket-like writable: its `writableLength` is 0 once every byte written has been handed on (to the kernel). */
export interface Drainable {
  readonly writableLength: number;
}

/**
 * The pieces' buffers, reused instead of copying each piece into a fresh Buffer for the
 * socket (a 112 KB copy and allocation per piece; ~15% of the binary wire's client CPU in
 * bench/wire-encode.ts's profile). A written piece is held until every writer that may
 * still read it — the COPY stream (which queues pieces until the server's CopyInResponse)
 * and the socket (whose write may finish asynchronously, after its callback-less return) —
 * holds no bytes at all; then the kernel has them and the buffer is free again. While they
 * are busy, `take` hands out another buffer: a connection ends up with the two or three
 * its pipeline needs (a piece being written, one being encoded), never more than MAX_FREE
 * kept when idle.
 */
export class PieceBuffers {
  private readonly free: WireBuffer[] = [];
  private held: WireBuffer[] = [];

  /** `piece` has been written: not to be reused before `take` finds the writers idle. */
  hold(piece: WireBuffer): void {
    this.held.push(piece);
  }

  /** Gives back a buffer `take` gave that nothing was written from. */
  give(unused: WireBuffer): void {
    if (this.free.length < MAX_FREE) this.free.push(unused);
  }

  /** A buffer no writer holds; `writers`: those that may hold earlier pieces. */
  take(writers: readonly Drainable[]): WireBuffer {
    if (this.held.length > 0 && writers.every((w) => w.writableLength === 0)) {
      for (const b of this.held) if (this.free.length < MAX_FREE) this.free.push(b);
      this.held = [];
    }
    return this.free.pop() ?? new WireBuffer(2 * PIECE_TEXT_BYTES + 64 * 1024);
  }
}

const MAX_FREE = 4;

/** The socket under a pg client (pg-copy-streams writes to it too), or undefined when it cannot be found. */
function socketOf(client: pg.Client): Drainable | undefined {
  const stream = (client as unknown as { connection?: { stream?: Partial<Drainable> } }).connection?.stream;
  return typeof stream?.writableLength === 'number' ? (stream as Drainable) : undefined;
}

/**
 * Streams a COPY text chunk as binary COPY, encoding it a piece at a time (`encodePieces`).
 * Returns the server's row count, or the refusal that sends the chunk as text and whether
 * pieces had gone out already (then the COPY was failed, and the transaction with it).
 */
async function streamEncoded(client: pg.Client, sql: string, data: Buffer, splitter: RecordSplitter, buffers: PieceBuffers): Promise<PiecesResult> {
  let stream: ReturnType<typeof copyFrom> | undefined;
  let done: Promise<void> | undefined;
  const socket = socketOf(client);
  // The buffer being encoded into (nothing of an earlier chunk is still being written once the socket is idle: its
  // COPY's reply came after its bytes); the one left over when the chunk is done or refused goes back.
  let spare = buffers.take(socket === undefined ? [] : [socket]);
  const encoded = await encodePieces(data, splitter, spare, async (piece) => {
    if (stream === undefined) {
      stream = client.query(copyFrom(sql));
      done = finished(stream);
    }
    const bytes = Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.pos);
    if (socket === undefined) {
      // Not a socket we can watch: a copy, as the piece's buffer is reused at once.
      if (!stream.write(Buffer.from(bytes))) await Promise.race([once(stream, 'drain'), done]);
      return piece;
    }
    buffers.hold(piece);
    if (!stream.write(bytes)) await Promise.race([once(stream, 'drain'), done]);
    return (spare = buffers.take([stream, socket]));
  });
  buffers.give(spare);
  if (typeof encoded !== 'number') {
    if (stream !== undefined) {
      // CopyFail: the server ends the COPY with an error and the transaction is aborted; wait for it.
      stream.destroy(new Error(`pgsurge: ${encoded.refusal.why}`));
      await done!.catch(() => undefined);
    }
    return encoded;
  }
  if (stream === undefined) return streamCopy(client, sql, Buffer.from(BINARY_COPY_HEADER_AND_TRAILER));
  stream.end();
  await done;
  return stream!.rowCount;
}

const BINARY_COPY_HEADER_AND_TRAILER = Buffer.concat([Buffer.from(BINARY_COPY_HEADER), Buffer.from(BINARY_COPY_TRAILER)]);

/** `line 7, column l_shipdate: "infinity" (a value its encoder cannot encode exactly)`. */
function describeRefusal(r: SplitRefusal, chunk: Chunk, columns: readonly string[]): string {
  const { firstLine, byteOffset } = chunk.location;
  // Lines number records only where no record spans lines.
  const where = firstLine !== undefined && chunk.lines === chunk.records ? `line ${firstLine + r.record - 1}` : `record ${r.record} of the chunk at byte ${byteOffset}`;
  const column = r.column === undefined ? '' : `, column ${columns[r.column] ?? r.column + 1}`;
  return `${where}${column}: ${r.value !== undefined ? `${JSON.stringify(r.value)} (${r.why})` : r.why}`;
}
