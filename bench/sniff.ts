/**
 * How long sniffing a file of an unknown table takes: `describe` of a delimited file (its
 * dialect, and each column's type from the default sample of its start, middle and end,
 * or `--sample N|all`), as `--create` and `pgsurge schema` run it. Each run is a fresh
 * `node` process (cold module load and JIT, warm page cache after the first); prints every
 * run's time inside the process (wall and CPU: on a busy machine the CPU time is the
 * figure) and from spawn to exit, the medians, the columns found,
 * the command and the machine. Make the file first (not kept in the repository):
 *
 *   node bin/pgsurge.js dbt3 gen --scale 1 --tables lineitem --out /tmp/sf1
 *   node dist/bench/sniff.js [--file /tmp/sf1/lineitem.tbl] [--format tbl|csv|text] [--sample N|all] [--runs 5]
 */
import './lib/usage.js';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, describeMachine, median } from './lib/machine.js';

const self = fileURLToPath(import.meta.url);

async function child(file: string, format: string, sample: string): Promise<void> {
  const started = performance.now();
  const { describeInput } = await import('../src/input/format-registry.js');
  const loaded = performance.now();
  const cpu0 = process.cpuUsage();
  const d = await describeInput(
    { table: 't', schema: undefined, format: format as 'tbl', file, input: {} },
    sample === '' ? {} : { sample: sample === 'all' ? 'all' : Number(sample) },
  );
  const done = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const columns = d.columns.map((c) => `${c.name} ${c.type}`).join(', ');
  process.stdout.write(JSON.stringify({ sniffMs: done - loaded, cpuMs: (cpu.user + cpu.system) / 1000, innerMs: done - started, sampled: d.sampled, whole: d.whole, columns }) + '\n');
}

function main(): void {
  const file = arg('file', '/tmp/sf1/lineitem.tbl');
  const format = arg('format', path.extname(file).slice(1) || 'csv');
  const sample = arg('sample', '');
  const runs = Number(arg('runs', '5'));
  const size = statSync(file).size;
  const command = `node ${path.relative(process.cwd(), self)} --file ${file} --format ${format}${sample === '' ? '' : ` --sample ${sample}`} --runs ${runs}`;
  console.log(`sniffing ${file} (${(size / 1e6).toFixed(1)} MB, ${format}), sample ${sample === '' ? 'default' : sample}\n  command: ${command}`);
  const sniff: number[] = [];
  const cpus: number[] = [];
  const whole: number[] = [];
  let last: { sampled: number; whole: boolean; columns: string } | undefined;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const r = spawnSync(process.execPath, [self, '--child', '--file', file, '--format', format, '--sample', sample], { encoding: 'utf8' });
    const wall = performance.now() - started;
    if (r.status !== 0) throw new Error(r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { sniffMs: number; cpuMs: number; sampled: number; whole: boolean; columns: string };
    sniff.push(out.sniffMs);
    cpus.push(out.cpuMs);
    whole.push(wall);
    last = out;
    console.log(`  run ${i + 1}: describe ${out.sniffMs.toFixed(0)} ms (CPU ${out.cpuMs.toFixed(0)} ms), process ${wall.toFixed(0)} ms`);
  }
  console.log(`median: describe ${median(sniff).toFixed(0)} ms (CPU ${median(cpus).toFixed(0)} ms), process (node start to exit) ${median(whole).toFixed(0)} ms`);
  console.log(`records sampled: ${last?.sampled} (whole file: ${last?.whole})\ncolumns: ${last?.columns}`);
  console.log(`# machine: ${describeMachine()}, load average ${loadavg()[0]!.toFixed(1)}`);
}

if (process.argv.includes('--child')) await child(arg('file', ''), arg('format', 'csv'), arg('sample', ''));
else main();
