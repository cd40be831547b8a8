/**
 * The binary wire's client cost, in process and without a server: lineitem.tbl framed
 * into chunks once (the framing, the same for both wires, is timed on its own), then each
 * chunk sent as the writers send it to a
 * sink process over a Unix socket (the kernel's copy of 1.75× the bytes is client CPU
 * too): text as 64 KB CopyData pieces, binary encoded a piece at a time as
 * `streamPieces` does: through the encoders' general path only (`fastPaths: false`, the
 * splitter before the fast paths) with each piece copied into a fresh Buffer (the writer
 * before), with the fast paths in JavaScript, with those and the pieces' buffers reused
 * (`PieceBuffers`), and with whole records in WebAssembly and the buffers reused
 * (src/wire/wasm-records.ts: the writer now). Interleaved per
 * round; CPU time of this process (process.cpuUsage: user + system, the sink's not
 * counted) per row, medians over rounds, and the medians of the per-round ratios.
 *
 * Under contention a process's CPU time per row still varies between rounds (up to 2× on
 * a 2-core machine at load average 10), so the least disturbed round — the minimum — is
 * printed beside the median.
 *
 *   node dist/bench/wire-encode.js [--scale 0.05] [--repeat 9] [--only <variant>]
 */
import './lib/usage.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { TblFramer } from '../src/input/text/tbl-framer.js';
import { encoderFor } from '../src/codecs/index.js';
import type { ColumnType, SessionFacts } from '../src/codecs/field-encoder.js';
import { RecordSplitter, splitFormatOf, type SplitFormat } from '../src/wire/record-splitter.js';
import { encodePieces, PieceBuffers } from '../src/writer/wire-writer.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { typnameOf } from './lib/dbt3-types.js';

const scale = Number(arg('scale', '0.05'));
const repeat = Number(arg('repeat', '9'));
/** `--only <substring>`: the variants whose name holds it (to profile one: node --cpu-prof …). */
const only = arg('only', '');
const CHUNK = 8 * 1024 * 1024;
const TEXT_PIECE = 64 * 1024;

const session: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-wire-encode-'));
const sinkPath = path.join(work, 'sink.sock');
// The sink: another process, so reading the bytes is not this process's CPU.
const sink = spawn(process.execPath, ['-e', `require('net').createServer((s) => s.on('data', () => {})).listen(${JSON.stringify(sinkPath)}, () => console.log('ready'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  await once(sink.stdout!, 'data');
  console.log(`# bench/wire-encode: ${process.argv.slice(1).map((a) => path.relative(process.cwd(), a) || a).join(' ')}`);
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const { files } = await generateDbt3({ scale, outDir: work, tables: ['lineitem'] });
  const file = files[0]!;
  const raw = await fs.readFile(file.path);
  console.log(`# input: lineitem.tbl at scale ${scale}: ${file.rows.toLocaleString('en-US')} rows, ${(raw.length / 1e6).toFixed(0)} MB; chunks of ${CHUNK / 2 ** 20} MB`);
  const types: ColumnType[] = DBT3_COLUMNS.lineitem.map(([, t]) => ({ typname: typnameOf(t), typmod: -1, oid: 0 }));
  const encoders = types.map((t) => encoderFor(t, session)!);
  const format = splitFormatOf({ format: 'text', delimiter: '|' }) as SplitFormat;
  const socket = net.connect(sinkPath);
  await once(socket, 'connect');
  const cpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  /** One CopyData message, as pg-copy-streams writes it: a 5-byte header, then the bytes. */
  const sendPiece = async (piece: Uint8Array): Promise<void> => {
    const header = Buffer.from([0x64, 0, 0, 0, 0]);
    header.writeUInt32BE(piece.length + 4, 1);
    socket.write(header);
    if (!socket.write(piece)) await once(socket, 'drain');
  };
  /** `into`: the buffer each chunk is framed into, reused as the chunker reuses its pool's (ChunkBuffers); a fresh one per chunk otherwise. */
  const frameChunks = (into?: Buffer): Buffer[] => {
    const framer = new TblFramer();
    const out: Buffer[] = [];
    for (let at = 0; at < raw.length; ) {
      const end = Math.min(raw.length, at + CHUNK);
      const framed = into ? framer.frameInto(raw.subarray(at, end), end === raw.length, into, 0) : framer.frame(raw.subarray(at, end), end === raw.length);
      out.push(framed.out);
      at += framed.consumed;
    }
    return out;
  };
  // Framed once: the framing is the same work for both wires, timed on its own. Timed into
  // one reused buffer, as a load frames into its pool's: into fresh 8 MB buffers (which this
  // bench did before) the kernel's page faults on first touch were most of the time
  // (`_copyActual` in a --cpu-prof profile), ~2× the framing a load does.
  const chunks = frameChunks();
  const reused = Buffer.allocUnsafe(CHUNK + 1);
  const frame = async (): Promise<void> => {
    frameChunks(reused);
  };
  const sendText = async (): Promise<void> => {
    for (const c of chunks) for (let at = 0; at < c.length; at += TEXT_PIECE) await sendPiece(c.subarray(at, at + TEXT_PIECE));
  };
  /** `reuse`: the pieces' buffers reused as streamPieces does (PieceBuffers); otherwise each piece copied into a fresh Buffer, as it did before. */
  const sendBinary = (splitter: RecordSplitter, reuse: boolean) => async (): Promise<void> => {
    const buffers = new PieceBuffers();
    for (const c of chunks) {
      const r = await encodePieces(c, splitter, buffers.take([socket]), async (piece) => {
        const bytes = Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.pos);
        if (!reuse) {
          await sendPiece(Buffer.from(bytes));
          return piece;
        }
        buffers.hold(piece);
        await sendPiece(bytes);
        return buffers.take([socket]);
      });
      if (typeof r !== 'number') throw new Error(`refused: ${JSON.stringify(r)}`);
    }
  };
  const all: [string, () => Promise<void>][] = [
    ['text: send', sendText],
    ['binary, general path, copies', sendBinary(new RecordSplitter(format, encoders, { fastPaths: false }), false)],
    ['binary, fast paths, copies', sendBinary(new RecordSplitter(format, encoders, { wasm: false }), false)],
    ['binary, fast paths, reused', sendBinary(new RecordSplitter(format, encoders, { wasm: false }), true)],
    ['binary, wasm records, reused', sendBinary(new RecordSplitter(format, encoders, { wasm: true }), true)],
  ];
  const variants = all.filter(([name], i) => i === 0 || name.includes(only));
  variants.push(['tbl framing (both wires)', frame]);
  const perRow: number[][] = variants.map(() => []);
  for (let r = 0; r < repeat + 1; r++) {
    for (const [i, [, run]] of variants.entries()) {
      const t = cpu();
      await run();
      // The first round warms up (the JIT).
      if (r > 0) perRow[i]!.push(((cpu() - t) * 1e6) / file.rows);
    }
  }
  const text = perRow[0]!;
  for (const [i, [name]] of variants.entries()) {
    const m = median(perRow[i]!);
    const extra = i === 0 || i === variants.length - 1 ? '' : `; on top of text: median ${median(perRow[i]!.map((v, k) => v - text[k]!)).toFixed(3)}, of the minima ${(Math.min(...perRow[i]!) - Math.min(...text)).toFixed(3)} µs/row`;
    console.log(`${name.padEnd(28)} median ${m.toFixed(3)}, min ${Math.min(...perRow[i]!).toFixed(3)} µs/row (rounds: ${perRow[i]!.map((v) => v.toFixed(3)).join(' ')})${extra}`);
  }
  // With --only there are no ratios to print. (It exited here, before `finally`, leaving the sink running with the caller's stderr.)
  if (variants.length === all.length + 1) {
    const ratio = (a: number, b: number): string => median(perRow[a]!.map((v, k) => v / perRow[b]![k]!)).toFixed(2);
    console.log(`medians of per-round ratios: fast/general ${ratio(2, 1)}, reused/copies ${ratio(3, 2)}, wasm records/JS fast paths ${ratio(4, 3)}, before → after (general+copies → wasm+reused) ${ratio(4, 1)}`);
  }
  socket.end();
} finally {
  sink.kill();
  await fs.rm(work, { recursive: true, force: true });
}
