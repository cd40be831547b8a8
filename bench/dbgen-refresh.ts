/**
 * Checks `pgsurge dbt3 gen --refresh` against TPC-H's own dbgen, byte for byte: builds dbgen
 * from a source folder (a checkout of github.com/electrum/tpch-dbgen or the TPC's kit, with
 * its `makefile` set to CC=cc, DATABASE=ORACLE, MACHINE=LINUX, WORKLOAD=TPCH; the folder is
 * copied, not changed), or takes a built `dbgen` binary (its `dists.dss` beside it), runs
 * `dbgen -s <scale> -U <sets>` in a temp folder, writes pgsurge's sets, and compares
 * `orders.tbl.uK`, `lineitem.tbl.uK` and `delete.K` for every K: rows, bytes, sha256,
 * and the first differing line when they differ. Exits 1 on any difference. Needs a C
 * compiler and make, no server and no network (fetch the source yourself).
 *
 *   node dist/bench/dbgen-refresh.js --dbgen <source folder | dbgen binary> [--scale 0.01,0.1,1] [--sets 2]
 */
import './lib/usage.js';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeRefreshSets } from '../src/datasets/dbt3/refresh/update-sets.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

const source = arg('--dbgen');
if (source === undefined) {
  console.error('usage: node dist/bench/dbgen-refresh.js --dbgen <source folder | dbgen binary> [--scale 0.01,0.1,1] [--sets 2]');
  process.exit(2);
}
const scales = (arg('--scale') ?? '0.01,0.1,1').split(',').map(Number);
const sets = Number(arg('--sets') ?? '2');

/** Build dbgen in a copy of the source folder; returns the binary's path. */
async function buildDbgen(dir: string, work: string): Promise<string> {
  if (statSync(dir).isFile()) return path.resolve(dir);
  const copy = path.join(work, 'src');
  await fs.cp(dir, copy, { recursive: true });
  const makefile = path.join(copy, 'makefile');
  const settings: Record<string, string> = { CC: 'cc', DATABASE: 'ORACLE', MACHINE: 'LINUX', WORKLOAD: 'TPCH' };
  let text: string;
  try {
    text = await fs.readFile(makefile, 'utf8');
  } catch {
    text = await fs.readFile(path.join(copy, 'makefile.suite'), 'utf8');
  }
  for (const [key, value] of Object.entries(settings)) text = text.replace(new RegExp(`^${key}\\s*=.*$`, 'm'), `${key} = ${value}`);
  await fs.writeFile(makefile, text);
  execFileSync('make', ['-C', copy, 'dbgen'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return path.join(copy, 'dbgen');
}

const sha = (buf: Buffer): string => createHash('sha256').update(buf).digest('hex').slice(0, 16);

function firstDifference(a: Buffer, b: Buffer): string {
  const al = a.toString('latin1').split('\n');
  const bl = b.toString('latin1').split('\n');
  for (let i = 0; i < Math.max(al.length, bl.length); i++) {
    if (al[i] !== bl[i]) return `line ${i + 1}:\n      dbgen:   ${al[i] ?? '(none)'}\n      pgsurge: ${bl[i] ?? '(none)'}`;
  }
  return '';
}

async function main(): Promise<void> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-dbgen-'));
  let differences = 0;
  try {
    const binary = await buildDbgen(source!, work);
    console.log(`# dbgen: ${binary}; machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores; node ${process.version}`);
    for (const scale of scales) {
      const out = path.join(work, `sf${scale}`);
      await fs.mkdir(out, { recursive: true });
      await fs.copyFile(path.join(path.dirname(binary), 'dists.dss'), path.join(out, 'dists.dss'));
      let started = Date.now();
      execFileSync(binary, ['-q', '-f', '-s', String(scale), '-U', String(sets)], { cwd: out, stdio: 'inherit' });
      const dbgenMs = Date.now() - started;
      started = Date.now();
      const ours = makeRefreshSets(scale, sets);
      const oursMs = Date.now() - started;
      console.log(`scale ${scale}, -U ${sets}: dbgen ${(dbgenMs / 1000).toFixed(1)} s, pgsurge ${(oursMs / 1000).toFixed(1)} s`);
      for (const s of ours) {
        for (const [name, buf] of [[`orders.tbl.u${s.set}`, s.orders], [`lineitem.tbl.u${s.set}`, s.lineitem], [`delete.${s.set}`, s.deletes]] as const) {
          const theirs = await fs.readFile(path.join(out, name));
          const same = theirs.equals(buf);
          const lines = buf.toString('latin1').split('\n').length - 1;
          console.log(`  ${name.padEnd(18)} ${String(lines).padStart(7)} rows ${String(buf.length).padStart(10)} bytes  dbgen ${sha(theirs)}  pgsurge ${sha(buf)}  ${same ? 'identical' : 'DIFFERENT'}`);
          if (!same) {
            differences++;
            console.log(`    first difference at ${firstDifference(theirs, buf)}`);
          }
        }
      }
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  console.log(differences === 0 ? 'all files identical' : `${differences} files differ`);
  if (differences > 0) process.exit(1);
}

await main();
