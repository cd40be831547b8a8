/**
 * Peak RSS of `pgsurge load` for JSON arrays (and the same rows as NDJSON and CSV) at two
 * input sizes 10× apart: memory must stay flat while the input grows (the JSON array is
 * streamed, never parsed whole). Runs are interleaved (small, big, small, big …) and the
 * figures are medians; rows/s of each format is reported as a ratio to CSV on the same rows.
 *
 *   node dist/bench/json-memory.js [--rows 50000] [--repeat 2] [--workers 2] [--chunk-size 1MB] [--heap-cap-mb 24] [--pg-bin system|embedded|<dir>]
 *
 * The bound is about workers × chunk size × 2 (chunks read ahead and in flight) plus Node
 * itself; 1 MB chunks keep it well below the smaller input, so both sizes are past it.
 */
import './lib/usage.js';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { run } from './lib/run.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const smallRows = Number(arg('rows', '50000'));
const repeat = Number(arg('repeat', '2'));
const workers = arg('workers', '2');
const chunkSize = arg('chunk-size', '1MB');
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');

const FORMATS = ['json', 'ndjson', 'csv'] as const;
type Format = (typeof FORMATS)[number];

function row(i: number): { id: number; name: string; price: string; tags: string[]; doc: { n: number; s: string } } {
  return { id: i, name: `customer ${i} of the bench, héllo`, price: ((i * 7.31) % 10000).toFixed(2), tags: [`t${i % 7}`, `u${i % 13}`], doc: { n: i, s: `v${i % 101}` } };
}

/** Writes `rows` rows in one format, streaming (the bench itself must not hold the file). */
async function writeRows(file: string, format: Format, rows: number): Promise<number> {
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const write = async (s: string): Promise<void> => {
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  if (format === 'json') await write('{"exported": "bench", "data": {"items": [\n');
  for (let i = 1; i <= rows; i++) {
    const r = row(i);
    if (format === 'csv') await write(`${r.id},"${r.name}",${r.price},"{${r.tags.join(',')}}","${JSON.stringify(r.doc).replace(/"/g, '""')}"\n`);
    else {
      const json = JSON.stringify(r).replace(/"price":"([^"]+)"/, '"price":$1');
      await write(format === 'json' ? `${i > 1 ? ',\n' : ''}  ${json}` : `${json}\n`);
    }
  }
  if (format === 'json') await write('\n]}}\n');
  await new Promise<void>((r) => out.end(() => r()));
  return (await fs.stat(file)).size;
}

const { work, cluster } = await openBenchCluster('pgsurge-bench-json-', pgBin);
try {
  console.log(benchCommandLine('json-memory'));
  console.log(`# machine: ${describeMachine()}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster with default settings, Unix socket`);
  const sizes = [smallRows, smallRows * 10];
  const files = new Map<string, { file: string; bytes: number; rows: number; format: Format }>();
  for (const rows of sizes) {
    for (const format of FORMATS) {
      const file = path.join(work, `items-${rows}.${format}`);
      files.set(`${format} ${rows}`, { file, bytes: await writeRows(file, format, rows), rows, format });
    }
  }
  for (const [name, f] of files) console.log(`# input ${name.padEnd(14)} ${(f.bytes / 1e6).toFixed(1).padStart(7)} MB`);

  await cluster.start();
  const url = cluster.url();
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  // The cluster stops when the bench ends, failed or not: that must not hide the failure.
  admin.on('error', (e) => console.error(`bench: the admin connection failed: ${e.message}`));
  await admin.query('CREATE TABLE items (id int, name text, price numeric(12,2), tags text[], doc jsonb)');

  const rss: Record<string, number[]> = {};
  const rate: Record<string, number[]> = {};
  for (let round = 1; round <= repeat; round++) {
    for (const rows of sizes) {
      for (const format of FORMATS) {
        const name = `${format} ${rows}`;
        const f = files.get(name)!;
        await admin.query('TRUNCATE items');
        await admin.query('CHECKPOINT');
        // --truncate: the table was emptied behind the ledger's back; without it, rerunning the same load is refused.
        const args = [pgsurge, 'load', f.file, '-t', 'items', '--truncate', '--db', url, '-w', workers, '--chunk-size', chunkSize, '-q', ...(format === 'json' ? ['--json-path', 'data.items'] : [])];
        const r = await run(process.execPath, args);
        const count = Number((await admin.query('SELECT count(*) AS n FROM items')).rows[0].n);
        if (count !== rows) throw new Error(`${name} loaded ${count} rows, expected ${rows}`);
        (rss[name] ??= []).push(r.peakRss ?? NaN);
        (rate[name] ??= []).push(rows / r.seconds);
        console.log(`round ${round} ${name.padEnd(14)} ${r.seconds.toFixed(2).padStart(6)} s  ${Math.round(rows / r.seconds).toLocaleString('en-US').padStart(9)} rows/s  peak RSS ${((r.peakRss ?? NaN) / 1024 ** 2).toFixed(0)} MB`);
      }
    }
  }
  const mb = (v: number): string => (v / 1024 ** 2).toFixed(0);
  console.log(`\npeak RSS (VmHWM) of \`pgsurge load -w ${workers} --chunk-size ${chunkSize}\`, median of ${repeat}; rows/s as a ratio to CSV on the same rows (median of paired runs)`);
  console.log('format   rows        input MB  peak RSS MB  rows/s     vs csv');
  for (const rows of sizes) {
    for (const format of FORMATS) {
      const name = `${format} ${rows}`;
      const ratio = median(rate[name]!.map((v, i) => v / rate[`csv ${rows}`]![i]!));
      console.log(`${format.padEnd(8)} ${String(rows).padEnd(11)} ${(files.get(name)!.bytes / 1e6).toFixed(1).padStart(8)}  ${mb(median(rss[name]!)).padStart(11)}  ${Math.round(median(rate[name]!)).toLocaleString('en-US').padStart(9)}  ${ratio.toFixed(2).padStart(6)}`);
    }
  }
  for (const format of FORMATS) {
    const growth = median(rss[`${format} ${sizes[1]}`]!) / median(rss[`${format} ${sizes[0]}`]!);
    console.log(`${format}: input ×10 → peak RSS ×${growth.toFixed(2)}`);
  }
  // RSS also holds V8's lazily collected garbage; the sharper check is a JavaScript heap
  // capped below the input's size: an O(input) loader would die, a bounded one just collects more often.
  const cap = Number(arg('heap-cap-mb', '24'));
  console.log(`\nthe ${sizes[1]}-row inputs with the JavaScript heap capped at ${cap} MB (node --max-old-space-size=${cap}):`);
  for (const format of FORMATS) {
    const f = files.get(`${format} ${sizes[1]}`)!;
    await admin.query('TRUNCATE items');
    const args = [`--max-old-space-size=${cap}`, pgsurge, 'load', f.file, '-t', 'items', '--truncate', '--db', url, '-w', workers, '--chunk-size', chunkSize, '-q', ...(format === 'json' ? ['--json-path', 'data.items'] : [])];
    const r = await run(process.execPath, args);
    const count = Number((await admin.query('SELECT count(*) AS n FROM items')).rows[0].n);
    if (count !== f.rows) throw new Error(`${format} under the heap cap loaded ${count} rows, expected ${f.rows}`);
    console.log(`  ${format.padEnd(7)} ${(f.bytes / 1e6).toFixed(1).padStart(6)} MB input: loaded all ${f.rows.toLocaleString('en-US')} rows in ${r.seconds.toFixed(2)} s, peak RSS ${mb(r.peakRss ?? NaN)} MB`);
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
