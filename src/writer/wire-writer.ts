import type pg from 'pg';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import { copySql, copyWriter, streamCopy } from './copy-writer.js';
import { RedoAsText, type ChunkResult, type ChunkWriter } from './chunk-writer.js';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { copyFromStdin } from './eager-copy.js';
import { wireFormat } from '../wire/wire-format.js';
import { readSessionFacts, readWireColumns, type WireColumn } from '../codecs/catalog.js';
import { WireBuffer, type EncoderLookup, type SessionFacts } from '../codecs/field-encoder.js';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER, writeRaw } from '../codecs/binary-copy.js';
import { encoderFor } from '../codecs/index.js';
import { RecordSplitter, splitFormatOf, type SplitRefusal } from '../wire/record-splitter.js';
import { planWire, type WirePlan } from '../wire/wire-plan.js';
import { isLocalHost } from '../wire/auto-rule.js';
import type { TableWire, WireChoice } from '../wire/wire-report.js';
import type { TypedTuples } from '../codecs/typed-rows.js';
import { BACKSLASH, escapedAt } from '../input/line-ends.js';

/** What one connection keeps: its session's facts, its output buffer (reused chunk after chunk), a splitter per table. */
interface ConnectionState {
  readonly facts: SessionFacts;
  /** The server shares this machine (a Unix socket, loopback): `auto`'s rule needs it. */
  readonly local: boolean;
  readonly out: WireBuffer;
  /** The binary pieces' buffers (`streamPieces`). */
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
 * `options.workers`: the load's connections, for `auto`'s rule (`autoPicksBinary`);
 * `options.wasm: false`: records split by JavaScript only (`RecordSplitter`).
 *
 * A source that already holds binary tuples (a typed source: Parquet) sets `chunk.binary`
 * and the writer sends those as they are.
 */
export function wireCopyWriter(choice: WireChoice, lookup: EncoderLookup = encoderFor, options: { workers?: number | undefined; wasm?: boolean | undefined } = {}): ChunkWriter {
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
    return remembered(plans, key, () => readWireColumns(client, target).then((columns) => planWire(choice, columns, facts, splitFormatOf(wireFormat(target)), lookup, { serverIsLocal: local, workers: options.workers })));
  };

  // A typed source's tables: their COPY columns' types, read once per table.
  const typedColumns = new Map<string, Promise<readonly WireColumn[]>>();
  const typedColumnsOf = (client: pg.Client, target: LoadTarget): Promise<readonly WireColumn[]> => {
    return remembered(typedColumns, JSON.stringify([target.schema, target.table, target.columns]), () => readWireColumns(client, target));
  };

  /**
   * Streams a chunk as binary pieces (`streamPieces`) and counts it: its result, or
   * undefined when a refusal came before any piece went (the caller sends it as text).
   * Marked as sent before it goes: a chunk the server refuses part way is counted as
   * redone by the text path; one refused by pgsurge after pieces went is redone as text.
   */
  async function sendPieces(client: pg.Client, sql: string, chunk: Chunk, next: NextPiece, buffers: PieceBuffers, tally: Tally, columns: readonly string[]): Promise<ChunkResult | undefined> {
    sentBinary.add(chunk);
    const streamed = await streamPieces(client, sql, next, buffers);
    if (typeof streamed === 'number') {
      tally.binaryChunks++;
      return { loaded: streamed, skipped: 0 };
    }
    sentBinary.delete(chunk);
    tally.fallbackChunks++;
    tally.firstFallback ??= describeRefusal(streamed.refusal, chunk, columns);
    if (streamed.sent) throw new RedoAsText(`part of the chunk went as binary before ${streamed.refusal.why}: loaded again as text`);
    return undefined;
  }

  async function send(client: pg.Client, chunk: Chunk, begin: boolean): Promise<ChunkResult> {
    const prefix = begin ? 'BEGIN; ' : '';
    const sql = `${prefix}${copySql(chunk.target, undefined, { binary: true })}`;
    if (chunk.typed !== undefined && choice !== 'text') {
      const state = await stateOf(client);
      const tuples = state.facts.serverEncoding !== 'UTF8' ? `server_encoding is ${state.facts.serverEncoding}, not UTF8` : chunk.typed.binary(await typedColumnsOf(client, chunk.target), state.facts);
      const tally = tallyOf(chunk.target.table, typeof tuples === 'string' ? tuples : undefined);
      if (typeof tuples !== 'string') {
        const sent = await sendPieces(client, sql, chunk, typedPieces(tuples), state.pieces, tally, chunk.target.columns ?? []);
        if (sent !== undefined) return sent;
      }
      return begin ? copyWriter.beginAndWriteRows!(client, chunk) : copyWriter.writeRows(client, chunk);
    }
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
        if (splitter === undefined) state.splitters.set(plan, (splitter = new RecordSplitter(plan.format, plan.encoders, { wasm: options.wasm })));
        const out = state.out;
        if (!plan.format.csv) {
          // COPY text: a raw newline always ends a record, so the chunk is encoded a piece at a time while the server parses the pieces before.
          const sent = await sendPieces(client, sql, chunk, textPieces(chunk.data, splitter), state.pieces, tally, plan.columns.map((c) => c.name));
          return sent ?? (begin ? copyWriter.beginAndWriteRows!(client, chunk) : copyWriter.writeRows(client, chunk));
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
    wire: choice,
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

/** The promise `make` gives for `key`, made once; forgotten if it fails (a lost connection), so the next chunk tries again. */
function remembered<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (p === undefined) {
    p = make();
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

/**
 * Text bytes encoded per piece. Encoding a whole 8 MB chunk before sending it left the
 * server idle for the encoding's time (~70 ms a chunk): binary -w 1 ran slower than text
 * although the server's CPU per row was 0.7× (bench/wire.ts, SF 1). A piece is encoded
 * while the server parses the one before; its binary form (~1.45× the text for lineitem)
 * stays under the ~100 KB past which the socket's writer was measured to wake too late
 * (copy-writer.ts, PIECE_BINARY_BYTES); 32 and 44 KB measured no better for the `.tbl`.
 */
const PIECE_TEXT_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** A chunk that went as binary: its record count; or the refusal that sends it as text, and whether pieces had gone out already. */
export type PiecesResult = number | { refusal: SplitRefusal; sent: boolean };

/**
 * A typed chunk's tuples per piece. At 112 KB (a text piece's binary size, measured on
 * text) the Parquet -w1 backend waited for pgsurge in 23–25% of its looks; at 64 KB in
 * 9–13% (SF 1 lineitem, interleaved; 32–96 KB all did better than 112): a piece past
 * about half the Unix socket's ~200 KB buffer is never taken by the kernel in one go,
 * so the next is made only once the server has nearly drained it. A text piece's binary
 * form is ~93 KB for lineitem (1.45× its 64 KB), under that.
 */
const PIECE_BINARY_BYTES = 64 * 1024;

/**
 * Appends the next piece's tuples to `out` and says how many; a refusal (its record
 * counted from the chunk's first); or undefined when there are no more.
 */
export type NextPiece = (out: WireBuffer) => number | SplitRefusal | undefined;

/**
 * Makes binary COPY a piece at a time, handing each piece to `send` — the header in the
 * first, the trailer in the last — before the next is made. `send` gives back the buffer to
 * make the next piece in: the same one when it is done with the bytes, another while
 * something may still read them.
 */
export async function makePieces(first: WireBuffer, next: NextPiece, send: (piece: WireBuffer) => Promise<WireBuffer>): Promise<PiecesResult> {
  let records = 0;
  let out = first;
  for (let sent = false; ; sent = true) {
    out.pos = 0;
    if (!sent) writeRaw(out, BINARY_COPY_HEADER);
    const made = next(out);
    if (made !== undefined && typeof made !== 'number') return { refusal: made, sent };
    if (made === undefined) writeRaw(out, BINARY_COPY_TRAILER);
    else records += made;
    out = await send(out);
    if (made === undefined) return records;
  }
}

/** The pieces of a COPY text chunk: whole records, ~PIECE_TEXT_BYTES of text each. */
function textPieces(data: Buffer, splitter: RecordSplitter): NextPiece {
  let records = 0;
  let at = 0;
  return (piece) => {
    if (at >= data.length) return undefined;
    let next = at + PIECE_TEXT_BYTES >= data.length ? -1 : data.indexOf(NEWLINE, at + PIECE_TEXT_BYTES - 1);
    // A newline a backslash escapes is inside a value (COPY text): the piece ends at the next one.
    while (next > at && data[next - 1] === BACKSLASH && escapedAt(data, next, at)) next = data.indexOf(NEWLINE, next + 1);
    const end = next < 0 ? data.length : next + 1;
    piece.reserve(2 * (end - at) + 64);
    const encoded = splitter.encode(data.subarray(at, end), piece, at > 0);
    if (typeof encoded !== 'number') return { ...encoded, record: records + encoded.record };
    records += encoded;
    at = end;
    return encoded;
  };
}

/** The pieces of a typed chunk: ~PIECE_BINARY_BYTES of tuples each. */
function typedPieces(tuples: TypedTuples): NextPiece {
  let from = 0;
  return (piece) => {
    if (from >= tuples.rows) return undefined;
    const to = tuples.write(from, piece, piece.pos + PIECE_BINARY_BYTES);
    if (typeof to !== 'number') return { record: to.row + 1, column: to.column, why: to.why };
    const records = to - from;
    from = to;
    return records;
  };
}

/** Encodes a COPY text chunk as binary COPY a piece at a time (`makePieces`, `textPieces`). */
export function encodePieces(data: Buffer, splitter: RecordSplitter, first: WireBuffer, send: (piece: WireBuffer) => Promise<WireBuffer>): Promise<PiecesResult> {
  return makePieces(first, textPieces(data, splitter), send);
}

/** A socket-like writable: its `writableLength` is 0 once every byte written has been handed on (to the kernel). */
export interface Drainable {
  readonly writableLength: number;
}

/**
 * The pieces' buffers, reused instead of copying each piece into a fresh Buffer for the
 * socket (a 112 KB copy and allocation per piece; ~15% of the binary wire's client CPU in
 * bench/wire-encode.ts's profile). A written piece is held until every writer that may
 * still read it — the COPY stream (which may queue pieces while the socket is full)
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
 * Streams binary COPY a piece at a time (`makePieces`): each piece goes while the next is
 * made, so the server parses one while pgsurge encodes the next. Returns the server's row
 * count, or the refusal that sends the chunk as text and whether pieces had gone out
 * already (then the COPY was failed, and the transaction with it).
 */
async function streamPieces(client: pg.Client, sql: string, next: NextPiece, buffers: PieceBuffers): Promise<PiecesResult> {
  let stream: ReturnType<typeof copyFromStdin> | undefined;
  let done: Promise<void> | undefined;
  const socket = socketOf(client);
  // The buffer being made into (nothing of an earlier chunk is still being written once the socket is idle: its
  // COPY's reply came after its bytes); the one left over when the chunk is done or refused goes back.
  let spare = buffers.take(socket === undefined ? [] : [socket]);
  const made = await makePieces(spare, next, async (piece) => {
    if (stream === undefined) {
      stream = client.query(copyFromStdin(sql));
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
  if (typeof made !== 'number') {
    if (stream !== undefined) {
      // CopyFail: the server ends the COPY with an error and the transaction is aborted; wait for it.
      stream.destroy(new Error(`pgsurge: ${made.refusal.why}`));
      await done!.catch(() => undefined);
    }
    return made;
  }
  stream!.end();
  await done;
  return stream!.rowCount;
}

/** `line 7, column l_shipdate: "infinity" (a value its encoder cannot encode exactly)`. */
function describeRefusal(r: SplitRefusal, chunk: Chunk, columns: readonly string[]): string {
  const { firstLine, byteOffset } = chunk.location;
  // Lines number records only where no record spans lines.
  const where = firstLine !== undefined && chunk.lines === chunk.records ? `line ${firstLine + r.record - 1}` : `record ${r.record} of the chunk at byte ${byteOffset}`;
  const column = r.column === undefined ? '' : `, column ${columns[r.column] ?? r.column + 1}`;
  return `${where}${column}: ${r.value !== undefined ? `${JSON.stringify(r.value)} (${r.why})` : r.why}`;
}
