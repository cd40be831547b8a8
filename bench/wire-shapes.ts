/**
 * The numbers behind `--wire auto` (src/wire/auto-rule.ts): for tables of different
 * shapes, the server's and the client's CPU per row with `--wire text` and with
 * `--wire binary` (-w1, interleaved rounds, medians). Binary saves the server the typed
 * columns' parsing and costs the client their encoding; on a machine where both share
 * the cores, what counts is the sum.
 *
 *   node dist/bench/wire-shapes.js [--rows 200000] [--repeat 3] [--pg-bin system|embedded|<dir>]
 */
import './lib/usage.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { createTableSql } from '../src/datasets/table-ddl.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { generateNarrow } from '../src/datasets/narrow/generate.js';
import { prng } from '../test/helpers/lineitem-data.js';
import { autoPicksBinary } from '../src/wire/auto-rule.js';
import { arg, describeMachine, median } from './lib/machine.js';
import { run } from './lib/run.js';
import { measureCpu, postmasterPid } from './lib/server-cpu.js';
import { typnameOf } from './lib/dbt3-types.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const rowsWanted = Number(arg('rows', '200000'));
const repeat = Number(arg('repeat', '3'));
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');

interface Shape {
  readonly name: string;
  readonly columns: readonly (readonly [string, string])[];
  readonly file: string;
  readonly format: string;
  readonly rows: number;
}

/** A tab-separated file of `rows` random rows for `columns` (int, numeric, date, or text of ~20 letters). */
async function synthetic(file: string, columns: readonly (readonly [string, string])[], rows: number): Promise<void> {
  const rnd = prng(7);
  const letters = (n: number): string => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join('');
  const value = (type: string): string => {
    if (type === 'integer') return String(Math.floor(rnd() * 2e9));
    if (type.startsWith('numeric')) return (rnd() * 1e5).toFixed(2);
    if (type === 'date') return `19${90 + Math.floor(rnd() * 10)}-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 9)}`;
    return letters(16 + Math.floor(rnd() * 10));
  };
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(columns.map(([, t]) => value(t)).join('\t'));
  await fs.writeFile(file, `${lines.join('\n')}\n`);
}

const { work, cluster } = await openBenchCluster('pgsurge-bench-shapes-', pgBin);
try {
  console.log(benchCommandLine('wire-shapes'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, autovacuum off`);
  const scale = Math.max(0.01, rowsWanted / 6_000_000);
  const lineitem = (await generateDbt3({ scale, outDir: work, tables: ['lineitem'] })).files[0]!;
  const narrow = path.join(work, 'narrow.txt');
  await generateNarrow({ rows: rowsWanted, keys: 'random', format: 'text', out: narrow });
  const text5: [string, string][] = [['id', 'integer'], ...[1, 2, 3, 4, 5].map((i): [string, string] => [`t${i}`, 'text'])];
  const half: [string, string][] = [['id', 'integer'], ['a', 'integer'], ['b', 'numeric(12,2)'], ['t1', 'text'], ['t2', 'text'], ['t3', 'text']];
  const typed: [string, string][] = [['id', 'integer'], ['a', 'integer'], ['b', 'numeric(12,2)'], ['c', 'numeric(12,2)'], ['d', 'date'], ['e', 'date']];
  const shapes: Shape[] = [
    { name: 'lineitem', columns: (await import('../src/datasets/dbt3-schema.js')).DBT3_COLUMNS.lineitem, file: lineitem.path, format: 'tbl', rows: lineitem.rows },
    { name: 'narrow', columns: [['id', 'bigint'], ['val', 'integer'], ['note', 'text']], file: narrow, format: 'text', rows: rowsWanted },
  ];
  for (const [name, columns] of [['text_heavy', text5], ['half_typed', half], ['all_typed', typed]] as const) {
    const file = path.join(work, `${name}.txt`);
    await synthetic(file, columns, rowsWanted);
    shapes.push({ name, columns, file, format: 'text', rows: rowsWanted });
  }

  await cluster.start({ autovacuum: 'off' });
  const url = cluster.url();
  const postmaster = postmasterPid(cluster.dataDir);
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  for (const s of shapes) {
    await admin.query(createTableSql(s.name) ?? `CREATE TABLE ${s.name} (${s.columns.map(([n, t]) => `${n} ${t}`).join(', ')})`);
  }

  const results: Record<string, Record<'text' | 'binary', { server: number[]; client: number[] }>> = {};
  for (let round = 1; round <= repeat; round++) {
    for (const s of shapes) {
      for (const wire of ['text', 'binary'] as const) {
        await admin.query(`TRUNCATE ${s.name}`);
        await admin.query('CHECKPOINT');
        const { serverCpu, clientCpu } = await measureCpu(postmaster, () => run(process.execPath, [pgsurge, 'load', s.file, '-t', s.name, '-f', s.format, '--truncate', '--db', url, '-w', '1', '--wire', wire, '-q']));
        const r = ((results[s.name] ??= { text: { server: [], client: [] }, binary: { server: [], client: [] } })[wire]);
        r.server.push((serverCpu * 1e6) / s.rows);
        r.client.push((clientCpu * 1e6) / s.rows);
        console.log(`round ${round} ${s.name.padEnd(11)} ${wire.padEnd(6)} server ${((serverCpu * 1e6) / s.rows).toFixed(2)} µs/row, client ${((clientCpu * 1e6) / s.rows).toFixed(2)} µs/row`);
      }
    }
  }
  console.log('\nshape        typed   server µs/row text → binary   client µs/row text → binary   sum text → binary   auto picks (server elsewhere)');
  for (const s of shapes) {
    const r = results[s.name]!;
    const m = (v: number[]): number => median(v);
    const verdict = autoPicksBinary(s.columns.map(([, t]) => ({ typname: typnameOf(t), typmod: -1, oid: 0 })), { serverIsLocal: false });
    const typedShare = verdict.why.match(/\((\d+%)\)/)?.[1] ?? '?';
    const st = m(r.text.server), sb = m(r.binary.server), ct = m(r.text.client), cb = m(r.binary.client);
    console.log(
      `${s.name.padEnd(12)} ${typedShare.padStart(5)}   ${st.toFixed(2).padStart(8)} → ${sb.toFixed(2).padEnd(8)} (${(sb / st).toFixed(2)}×)   ${ct.toFixed(2).padStart(8)} → ${cb.toFixed(2).padEnd(8)}          ${(st + ct).toFixed(2).padStart(6)} → ${(sb + cb).toFixed(2).padEnd(6)}   ${verdict.binary ? 'binary' : 'text'}`,
    );
  }
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
