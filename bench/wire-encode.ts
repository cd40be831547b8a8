/**
 * The binary wire's client cost, in process and without a server: lineitem.tbl framed
 * into chunks (what the text wire does), and each chunk sent as the writers send it to a
 * sink process over a Unix socket (the kernel's copy of 1.75× the bytes is client CPU
 * too): text as 64 KB CopyData pieces, binary encoded a piece at a time as
 * `streamEncoded` does, once through the encoders' general path only (`fastPaths: false`,
 * the splitter before the fast paths) and once with the fast paths. Interleaved per
 * round; CPU time of this process (process.cpuUsage: user + system, the sink's not
 * counted) per row, medians over rounds, and the medians of the per-round ratios.
 *
 *   node dist/bench/wire-encode.js [--scale 0.05] [--repeat 5]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DBT3_COLUMNS } from '../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { TblFramer } from '../src/framing/tbl-framer.js';
import { encoderFor } from '../src/wire/encoders/index.js';
import { WireBuffer, type ColumnType, type SessionFacts } from '../src/wire/field-encoder.js';
import { RecordSplitter, splitFormatOf, type SplitFormat } from '../src/wire/record-splitter.js';
import { encodePieces } from '../src/wire/wire-writer.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { typnameOf } from './lib/dbt3-types.js';

const scale = Number(arg('scale', '0.05'));
const repeat = Number(arg('repeat', '5'));
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
  const frameChunks = (): Buffer[] => {
    const framer = new TblFramer();
    const out: Buffer[] = [];
    for (let at = 0; at < raw.length; ) {
      const end = Math.min(raw.length, at + CHUNK);
      const framed = framer.frame(raw.subarray(at, end), end === raw.length);
      out.push(framed.out);
      at += framed.consumed;
    }
    return out;
  };
  const sendText = async (): Promise<void> => {
    for (const c of frameChunks()) for (let at = 0; at < c.length; at += TEXT_PIECE) await sendPiece(c.subarray(at, at + TEXT_PIECE));
  };
  const sendBinary = (splitter: RecordSplitter) => async (): Promise<void> => {
    const out = new WireBuffer();
    for (const c of frameChunks()) {
      // A copy of each piece, as streamEncoded makes (the socket may hold it while `out` is reused).
      const r = await encodePieces(c, splitter, out, (piece) => sendPiece(Buffer.from(piece)));
      if (typeof r !== 'number') throw new Error(`refused: ${JSON.stringify(r)}`);
    }
  };
  const variants: [string, () => Promise<void>][] = [
    ['text: frame + send', sendText],
    ['binary, general path only', sendBinary(new RecordSplitter(format, encoders, { fastPaths: false }))],
    ['binary, fast paths', sendBinary(new RecordSplitter(format, encoders))],
  ];
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
    const extra = i === 0 ? '' : `; binary's cost on top of text: ${median(perRow[i]!.map((v, k) => v - text[k]!)).toFixed(3)} µs/row`;
    console.log(`${name.padEnd(28)} ${m.toFixed(3)} µs/row (rounds: ${perRow[i]!.map((v) => v.toFixed(3)).join(' ')})${extra}`);
  }
  const general = perRow[1]!;
  const fast = perRow[2]!;
  console.log(`fast / general, median of per-round ratios: ${median(fast.map((v, k) => v / general[k]!)).toFixed(2)}`);
  socket.end();
} finally {
  sink.kill();
  await fs.rm(work, { recursive: true, force: true });
}
