/**
 * How fast the generators run, whole-process: each run is a fresh `node` that generates
 * into a temp dir, timed from spawn to exit. Prints every run, the median, the command
 * and the machine.
 *
 *   node dist/bench/gen-speed.js [--scale 1] [--runs 3] [--workers n] [--narrow-rows 10000000] [--parquet]
 *
 * `--parquet` adds `dbt3 gen --format parquet` of lineitem at the scale and at a tenth of
 * it: rows/s and the process's peak RSS at two sizes 10× apart (it should not grow).
 */
import './lib/usage.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const self = fileURLToPath(import.meta.url);

async function child(kind: string, args: Record<string, string | undefined>): Promise<void> {
  const started = performance.now();
  let bytes = 0;
  let rows = 0;
  if (kind === 'dbt3-parquet') {
    const { generateDbt3 } = await import('../src/datasets/dbt3/generate.js');
    const { files } = await generateDbt3({ scale: Number(args['scale']), outDir: args['out']!, tables: ['lineitem'], format: 'parquet' });
    for (const f of files) {
      bytes += f.bytes;
      rows += f.rows;
    }
  } else if (kind === 'dbt3') {
    const { generateDbt3 } = await import('../src/datasets/dbt3/generate.js');
    const { files } = await generateDbt3({
      scale: Number(args['scale']),
      outDir: args['out']!,
      ...(args['workers'] === undefined ? {} : { workers: Number(args['workers']) }),
    });
    for (const f of files) bytes += f.bytes;
  } else {
    const { generateNarrow } = await import('../src/datasets/narrow/generate.js');
    ({ bytes } = await generateNarrow({ rows: Number(args['rows']), keys: 'random', format: 'text', out: path.join(args['out']!, 'narrow.txt') }));
  }
  // CPU time of every thread of the process: less skewed than wall time by a busy machine
  const cpu = process.cpuUsage();
  const peakRss = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(JSON.stringify({ bytes, rows, peakRss, innerMs: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n');
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function run(label: string, childArgs: string[], runs: number): void {
  const rates: number[] = [];
  const command = `node ${path.relative(process.cwd(), self)} --child ${childArgs.join(' ')} --out <tmpdir>`;
  console.log(`\n${label}\n  command: ${command}`);
  for (let i = 0; i < runs; i++) {
    const out = mkdtempSync(path.join(tmpdir(), 'pgsurge-gen-speed-'));
    // other work on the machine skews the numbers: show how busy it was
    const load = loadavg()[0]!.toFixed(2);
    try {
      const started = performance.now();
      const result = spawnSync(process.execPath, [self, '--child', ...childArgs, '--out', out], { encoding: 'utf8', maxBuffer: 1 << 20 });
      const wallMs = performance.now() - started;
      if (result.status !== 0) throw new Error(`run ${i + 1} failed: ${result.stderr}`);
      const { bytes, rows, peakRss, cpuMs } = JSON.parse(result.stdout) as { bytes: number; rows: number; peakRss: number; innerMs: number; cpuMs: number };
      const rate = bytes / 1e6 / (wallMs / 1000);
      rates.push(rate);
      const rowRate = rows > 0 ? `; ${Math.round(rows / (wallMs / 1000)).toLocaleString('en-US')} rows/s, ${Math.round(rows / (cpuMs / 1000)).toLocaleString('en-US')} rows per CPU s, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB` : '';
      console.log(`  run ${i + 1}: ${(bytes / 1e6).toFixed(1)} MB in ${(wallMs / 1000).toFixed(2)} s = ${rate.toFixed(1)} MB/s; ${(cpuMs / 1000).toFixed(2)} CPU s${rowRate} (load average before: ${load})`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  console.log(`  median: ${median(rates).toFixed(1)} MB/s whole-process (spawn to exit, including writing the files)`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      scale: { type: 'string', default: '1' },
      runs: { type: 'string', default: '3' },
      workers: { type: 'string' },
      rows: { type: 'string' },
      'narrow-rows': { type: 'string', default: '10000000' },
      out: { type: 'string' },
      parquet: { type: 'boolean', default: false },
    },
  });
  const { parquet, ...strings } = values;
  if (values.child !== undefined) return child(values.child, strings);
  const cpu = cpus();
  console.log(`machine: ${cpu[0]?.model ?? 'unknown cpu'}, ${cpu.length} cores, node ${process.version}, ${process.platform} ${process.arch}`);
  console.log(`bench: node ${path.relative(process.cwd(), self)} ${process.argv.slice(2).join(' ')}`.trimEnd());
  console.log(`temp dir: ${tmpdir()}`);
  const runs = Number(values.runs);
  const workers = values.workers === undefined ? [] : ['--workers', values.workers];
  run(`dbt3 gen, SF ${values.scale}, all eight tables`, ['dbt3', '--scale', values.scale, ...workers], runs);
  run(`gen narrow, ${values['narrow-rows']} rows, random keys, text`, ['narrow', '--rows', values['narrow-rows']], runs);
  if (parquet === true) {
    // a tenth of the scale, or 0.01 (a smaller one gives some part the same supplier twice)
    for (const sf of [Math.max(0.01, Number(values.scale) / 10), Number(values.scale)]) run(`dbt3 gen --format parquet, SF ${sf}, lineitem (snappy, row groups of 122,880)`, ['dbt3-parquet', '--scale', String(sf)], runs);
  }
}

await main();
