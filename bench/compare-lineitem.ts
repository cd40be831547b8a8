/**
 * COPY against batched INSERT on a DBT-3 lineitem, side by side on one server:
 * runs `pgsurge compare` and prints the command, the machine and the table, with the
 * INSERT variants' speed as medians of per-round ratios to COPY.
 *
 *   node dist/bench/compare-lineitem.js <lineitem.tbl> [compare options…]
 *
 * Defaults: the machine's own PostgreSQL (`--pg-bin system`) in a throwaway managed
 * cluster, `--variants copy,insert:unnest,insert:values --repeat 3 -w 2`; any option
 * given after the path is passed to `pgsurge compare` and overrides these (e.g.
 * `--db postgresql://…`, `--rows 200000 --variants copy,insert:row,insert:row:c0`).
 */
import './lib/usage.js';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatCompareTable } from '../src/compare/result-table.js';
import type { CompareResult } from '../src/compare/run-compare.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, '../../bin/pgsurge.js');

const [lineitem, ...extra] = process.argv.slice(2);
if (lineitem === undefined || lineitem.startsWith('-')) {
  process.stderr.write('usage: node dist/bench/compare-lineitem.js <lineitem.tbl> [pgsurge compare options…]\n');
  process.exit(2);
}

const has = (flag: string): boolean => extra.some((a) => a === flag || a.startsWith(`${flag}=`));
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-bench-compare-'));
await fs.chmod(tmp, 0o755); // a managed cluster run as root is run by the postgres user
const out = path.join(tmp, 'compare.json');
const defaults: string[] = [];
if (!has('--db') && !has('--pg-bin')) defaults.push('--pg-bin', 'system');
if (!has('--db') && !has('--data-dir')) defaults.push('--data-dir', path.join(tmp, 'cluster'));
if (!has('--variants')) defaults.push('--variants', 'copy,insert:unnest,insert:values');
if (!has('--repeat')) defaults.push('--repeat', '3');
if (!has('-w') && !has('--workers')) defaults.push('-w', '2');
if (!has('-t') && !has('--table')) defaults.push('-t', 'lineitem');
const args = ['compare', lineitem, '--create', ...defaults, ...extra, '--out', out];

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
process.stdout.write(`command: pgsurge ${args.filter((a) => a !== out && a !== '--out').join(' ')}\n`);
process.stdout.write(`machine: ${cpu}, ${os.availableParallelism()} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; Node ${process.version}\n`);

const code = await new Promise<number | null>((resolve, reject) => {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('error', reject);
  child.on('close', resolve);
});
try {
  if (code !== 0) {
    process.stderr.write(`pgsurge compare exited with ${code}\n`);
    process.exitCode = 1;
  } else {
    const result = JSON.parse(await fs.readFile(out, 'utf8')) as CompareResult;
    process.stdout.write(`server: ${result.serverVersion}\n\n${formatCompareTable(result)}\n\n`);
    const copy = result.results.find((r) => r.variant.mode === 'copy');
    if (copy !== undefined && result.results[0] === copy) {
      process.stdout.write('INSERT against COPY, median of per-round ratios of rows/s (targets: unnest ≥ 0.4, values ≥ 0.2):\n');
      for (const r of result.results.filter((x) => x.variant.mode === 'insert')) {
        const target = r.variant.style === 'unnest' ? 0.4 : r.variant.style === 'values' ? 0.2 : undefined;
        const verdict = target === undefined ? '' : r.pairedRatioToFirst >= target ? `  (≥ ${target}: met)` : `  (≥ ${target}: NOT met)`;
        process.stdout.write(`  ${r.variant.label.padEnd(24)} ${r.pairedRatioToFirst.toFixed(2)}×${verdict}\n`);
      }
    }
  }
} finally {
  await fs.rm(tmp, { recursive: true, force: true });
}
