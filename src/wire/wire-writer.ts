import type pg from 'pg';
import type { Chunk, LoadTarget } from '../batching/chunk.js';
import { copySql, copyWriter, streamCopy } from '../writer/copy-writer.js';
import { RedoAsText, type ChunkResult, type ChunkWriter } from '../writer/chunk-writer.js';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { wireFormat } from '../writer/wire-format.js';
import { readSessionFacts, readWireColumns, type WireColumn } from './catalog.js';
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
 * A source that already holds binary tuples (a typed source: Parquet) sets `chunk.binary`
 * and the writer sends those as they are.
 */
export function wireCopyWriter(choice: WireChoice, lookup: EncoderLookup = encoderFor): ChunkWriter {
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
      s = { facts: await readSessionFacts(client), local: isLocalHost((client as unknown as { host?: string }).host), out: new WireBuffer(), splitters: new Map() };
      connections.set(client, s);
    }
    return s;
  };

  const planOf = (client: pg.Client, target: LoadTarget, state: ConnectionState): Promise<WirePlan> => {
    const { facts, local } = state;
    const key = JSON.stringify([target.schema, target.table, target.columns, target.format, target.input?.delimiter, target.input?.null, target.input?.quote, target.input?.escape, facts, local]);
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = readWireColumns(client, target).then((columns) => planWire(choice, columns, facts, splitFormatOf(wireFormat(target)), lookup, local));
      plans.set(key, plan);
      // A failed read (a lost connection) is tried again by the next chunk.
      plan.catch(() => plans.delete(key));
    }
    return plan;
  };

  // A typed source's tables: their COPY columns' types, read once per table.
  const typedColumns = new Map<string, Promise<readonly WireColumn[]>>();
  const typedColumnsOf = (client: pg.Client, target: LoadTarget): Promise<readonly WireColumn[]> => {
    const key = JSON.stringify([target.schema, target.table, target.columns]);
    let columns = typedColumns.get(key);
    if (columns === undefined) {
      columns = readWireColumns(client, target);
      typedColumns.set(key, columns);
      columns.catch(() => typedColumns.delete(key));
    }
    return columns;
  };

  async function send(client: pg.Client, chunk: Chunk, begin: boolean): Promise<ChunkResult> {
    const prefix = begin ? 'BEGIN; ' : '';
    const sql = `${prefix}${copySql(chunk.target, undefined, { binary: true })}`;
    if (chunk.typed !== undefined && choice !== 'text') {
      const state = await stateOf(client);
      const tuples = state.facts.serverEncoding !== 'UTF8' ? `server_encoding is ${state.facts.serverEncoding}, not UTF8` : chunk.typed.binary(await typedColumnsOf(client, chunk.target), state.facts);
      const tally = tallyOf(chunk.target.table, typeof tuples === 'string' ? tuples : undefined);
      if (typeof tuples !== 'string') {
        sentBinary.add(chunk);
        let from = 0;
        const streamed = await streamPieces(client, sql, state.out, (out) => {
          if (from >= tuples.rows) return undefined;
          const to = tuples.write(from, out, out.pos + PIECE_BINARY_BYTES);
          if (typeof to !== 'number') return { record: to.row + 1, column: to.column, why: to.why };
          const records = to - from;
          from = to;
          return records;
        });
        if (typeof streamed === 'number') {
          tally.binaryChunks++;
          return { loaded: streamed, skipped: 0 };
        }
        sentBinary.delete(chunk);
        tally.fallbackChunks++;
        tally.firstFallback ??= describeRefusal(streamed.refusal, chunk, chunk.target.columns ?? []);
        if (streamed.sent) throw new RedoAsText(`part of the chunk went as binary before ${streamed.refusal.why}: loaded again as text`);
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
        if (splitter === undefined) state.splitters.set(plan, (splitter = new RecordSplitter(plan.format, plan.encoders)));
        const out = state.out;
        if (!plan.format.csv) {
          // COPY text: a raw newline always ends a record, so the chunk is encoded a piece at a time while the server parses the pieces before.
          // Marked before it goes: a chunk the server refuses part way is counted as redone by the text path.
          sentBinary.add(chunk);
          const streamed = await streamEncoded(client, sql, chunk.data, splitter, out);
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

/** A typed chunk's tuples per piece: as much as the socket takes at once (see PIECE_TEXT_BYTES). */
const PIECE_BINARY_BYTES = 112 * 1024;

/**
 * Streams a COPY text chunk as binary COPY, encoding it a piece (whole records) at a time.
 * Returns the server's row count, or the refusal that sends the chunk as text and whether
 * pieces had gone out already (then the COPY was failed, and the transaction with it).
 */
async function streamEncoded(client: pg.Client, sql: string, data: Buffer, splitter: RecordSplitter, out: WireBuffer): Promise<number | { refusal: SplitRefusal; sent: boolean }> {
  let records = 0;
  let at = 0;
  return streamPieces(client, sql, out, (piece) => {
    if (at >= data.length) return undefined;
    const next = at + PIECE_TEXT_BYTES >= data.length ? -1 : data.indexOf(NEWLINE, at + PIECE_TEXT_BYTES - 1);
    const end = next < 0 ? data.length : next + 1;
    piece.reserve(2 * (end - at) + 64);
    const encoded = splitter.encode(data.subarray(at, end), piece, at > 0);
    if (typeof encoded !== 'number') return { ...encoded, record: records + encoded.record };
    records += encoded;
    at = end;
    return encoded;
  });
}

/**
 * Streams binary COPY a piece at a time: `next` appends a piece's tuples to `out` and
 * returns how many, a refusal, or undefined when there are no more. Each piece goes while
 * the next is made (the server parses one while pgsurge encodes the next). Returns the
 * server's row count, or the refusal and whether pieces had gone out already (then the
 * COPY was failed, and the transaction with it).
 */
async function streamPieces(client: pg.Client, sql: string, out: WireBuffer, next: (out: WireBuffer) => number | SplitRefusal | undefined): Promise<number | { refusal: SplitRefusal; sent: boolean }> {
  let stream: ReturnType<typeof copyFrom> | undefined;
  let done: Promise<void> | undefined;
  let first = true;
  for (;;) {
    out.pos = 0;
    if (first) writeRaw(out, BINARY_COPY_HEADER);
    const made = next(out);
    if (made !== undefined && typeof made !== 'number') {
      if (stream === undefined) return { refusal: made, sent: false };
      // CopyFail: the server ends the COPY with an error and the transaction is aborted; wait for it.
      stream.destroy(new Error(`pgsurge: ${made.why}`));
      await done!.catch(() => undefined);
      return { refusal: made, sent: true };
    }
    if (made === undefined) {
      if (stream === undefined) return streamCopy(client, sql, Buffer.from(BINARY_COPY_HEADER_AND_TRAILER));
      writeRaw(out, BINARY_COPY_TRAILER);
    }
    if (stream === undefined) {
      stream = client.query(copyFrom(sql));
      done = finished(stream);
    }
    first = false;
    // A copy: the socket may still hold the piece when `out` is reused for the next one.
    if (!stream.write(Buffer.from(out.bytes.subarray(0, out.pos)))) await Promise.race([once(stream, 'drain'), done]);
    if (made === undefined) break;
  }
  stream.end();
  await done;
  return stream.rowCount;
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
