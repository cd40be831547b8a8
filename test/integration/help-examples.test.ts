import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { after, before, describe, it } from 'node:test';
import type { Command } from 'commander';
import { commandPath } from '../../src/cli/help-examples.js';
import { buildProgram } from '../../src/cli/main.js';
import { PGSURGE, runCli, testClient, testUrl } from '../helpers/test-db.js';
import { firstServerOnly, freePort } from '../helpers/temp-cluster.js';

/**
 * Every example at the end of every `pgsurge … --help`, run as written (through bash, so
 * pipes, `&&` and `$(…)` work), each on a fresh database of its own and in a folder holding the
 * small input files the examples name. The one change to an example: `--db <the fresh
 * database>` right after the command, where the command takes `--db` and the example
 * names none. Examples that cannot run here are skipped below with the reason; the data
 * sizes are made small only through SMALLER, never by editing an example away.
 */

const SKIP: Readonly<Record<string, string>> = {
  'pgsurge load data.csv -t events --db postgresql://me@db1/prod -w 4': 'another host',
  'pgsurge dbt3 load sf1 --db postgresql://me@db1/dbt3 --schema dbt3 --build-memory 4GB': 'another host',
  'pgsurge dbt3 refresh sf1 --set 2 -w 2 --report refresh.html': 'runs on the folder and the database of the example above it',
  'pgsurge dbt3 gen --scale 10 --parts 4 --part 2 --out data/sf10': 'scale 10 writes 2.5 GB; the other gen examples cover --out at a small scale',
  'pgsurge cluster start --wal-dir /mnt/fastdisk/pgsurge-wal': 'a disk this machine has not got',
  'pgsurge cluster start --pg-bin system --data-dir /var/lib/pgsurge/pg15': 'a system folder outside the test',
  'pgsurge wal move --to /mnt/wal/pgsurge --restart': 'moves the WAL of the managed cluster and restarts it',
  'pgsurge wal move --data-dir /var/lib/postgresql/15/main --to /mnt/wal/15 --restart --pg-bin system': "moves the machine's own PostgreSQL 15 WAL",
  'pgsurge wal where --db postgresql://me@db1/prod': 'another host',
  'pgsurge wal where --data-dir /var/lib/postgresql/15/main': "the machine's own PostgreSQL 15 data directory",
  'pgsurge decay --rows 5M --keys random --shared-buffers 16MB --report small-sb.html': '--shared-buffers restarts the managed cluster',
  'pgsurge probe': "probes the managed cluster's disks (pg_test_fsync: tens of seconds)",
  'pgsurge probe --path /mnt/wal-disk --size 1GB': 'a disk this machine has not got',
  'pgsurge status lineitem-3f2a9c01de --db postgresql://me@coordinator/dbt3': 'another host (a Citus coordinator)',
  'pgsurge demo --scale 0.1 --keep-running && psql "$(pgsurge cluster url)"': 'leaves the managed cluster running and opens psql',
  'pgsurge demo --db postgresql://me@db1/scratch': 'another host',
  'pgsurge completion zsh > "${fpath[1]}/_pgsurge"': "zsh's $fpath (the test runs bash)",
};

/**
 * The managed cluster's examples, run in this order in a folder of their own (its
 * cluster in PGSURGE_HOME there, the embedded binaries), the cluster stopped at the end;
 * `6543` becomes a free port.
 */
const IN_ORDER: readonly string[] = [
  'pgsurge cluster status || pgsurge cluster start',
  'pgsurge cluster start',
  'psql "$(pgsurge cluster url)" -c "SELECT version()"',
  'pgsurge cluster start && psql "$(pgsurge cluster url)"',
  'pgsurge cluster start --listen 6543',
  'psql "$(pgsurge cluster url --tcp)" -c "SELECT inet_server_port()"',
  'pgsurge cluster stop',
];


/** Sizes made small for the test: [from, to] replaced in the example before it runs. */
const SMALLER: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  'pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl --create': [['--scale 1', '--scale 0.01']],
  'pgsurge dbt3 gen --scale 1 --out data/sf1 && pgsurge dbt3 load data/sf1': [['--scale 1', '--scale 0.01']],
  'pgsurge dbt3 gen --scale 1 --out sf1 && pgsurge dbt3 load sf1 --replace -w 2 --report load.html': [['--scale 1', '--scale 0.01']],
  'pgsurge dbt3 gen --scale 1 --out data/sf1': [['--scale 1', '--scale 0.01']],
  'pgsurge dbt3 gen --scale 1 --refresh 2 --out data/sf1': [['--scale 1', '--scale 0.01']],
  'pgsurge dbt3 gen --scale 1 --refresh 2 --out sf1 && pgsurge dbt3 load sf1 && pgsurge dbt3 refresh sf1 --set 1': [['--scale 1', '--scale 0.01']],
  'pgsurge dbt3 gen --scale 1 --format parquet --out data/sf1-parquet && pgsurge dbt3 load data/sf1-parquet': [['--scale 1', '--scale 0.01']],
  'pgsurge gen narrow --rows 10_000_000 --keys random --out narrow.txt': [['10_000_000', '20_000']],
  'pgsurge gen narrow --rows 1e6 --format tbl --out - | pgsurge load - -t narrow -f tbl --create': [['1e6', '2e4']],
  'pgsurge compare lineitem.tbl --create --variants copy:w1,copy:w2,insert:unnest:b5000,insert:values:b1000 --repeat 5': [['--repeat 5', '--repeat 1']],
  'pgsurge compare lineitem.tbl --create --variants copy,insert:row,insert:row:c0 --rows 20000 --json': [['--rows 20000', '--rows 1000']],
  'pgsurge compare lineitem.tbl --create --variants copy:text,copy:binary,copy:text:w2,copy:binary:w2 --repeat 3': [['--repeat 3', '--repeat 1']],
  'pgsurge compare lineitem.tbl --create --variants copy:w1,copy:w2 --repeat 3 --report compare.html': [['--repeat 3', '--repeat 1']],
  'pgsurge decay --rows 5M --keys random': [['5M', '20k']],
  'pgsurge decay --rows 2M --index after --json > decay.ndjson': [['2M', '20k']],
  'pgsurge demo': [['pgsurge demo', 'pgsurge demo --scale 0.01']],
};

/** What an example's fresh database holds first: pgsurge's arguments, run before it. */
const BEFORE: Readonly<Record<string, readonly string[]>> = {
  'pgsurge status li-sf100 --json': ['load', 'lineitem.tbl', '--create', '--load-id', 'li-sf100'],
};

/** Examples whose load rejects rows on purpose: exit code 3. */
const EXIT_CODE: Readonly<Record<string, number>> = {};

function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), writeErr: () => {} });
  cmd.outputHelp();
  return out;
}

const all = (c: Command): Command[] => c.commands.flatMap((s) => [s, ...all(s)]);

/** `--db "$DB"` after each `pgsurge <command>` that takes --db, unless the example gives one. */
function withDb(example: string, program: Command): string {
  return example.replace(/pgsurge ((?:[a-z0-9]+ )*[a-z0-9]+)/g, (whole, words: string) => {
    let at: Command = program;
    const used: string[] = [];
    for (const w of words.split(' ')) {
      const sub = at.commands.find((c) => c.name() === w);
      if (!sub) break;
      at = sub;
      used.push(w);
    }
    if (at === program || !at.options.some((o) => o.long === '--db') || / --db /.test(example)) return whole;
    return `pgsurge ${used.join(' ')} --db "$DB"${words.slice(used.join(' ').length)}`;
  });
}

const program = buildProgram();
const blocks = all(program).map((cmd) => {
  const block = /\nExamples:\n((?:  .*\n?)+)/.exec(helpOf(cmd));
  const examples = (block?.[1] ?? '').split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l !== '');
  return { path: commandPath(cmd), examples };
});

let dir: string;
const databases: string[] = [];

async function freshDatabase(name: string): Promise<string> {
  const client = await testClient();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name}`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  databases.push(name);
  return testUrl().replace(/^(postgres(?:ql)?:\/\/[^/]*\/)[^?]*/, `$1${name}`);
}

async function inDatabase(url: string, sql: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The tables the load examples name without --create. */
const SETUP_SQL = `
  CREATE TABLE events (id bigint PRIMARY KEY, kind text, at timestamptz);
  CREATE TABLE items (id integer, name text);
  CREATE TABLE people (id integer, name text, city text);`;

describe('every --help example runs on a fresh database', { timeout: 240_000 }, () => {
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pgsurge-help-examples-'));
    // the managed cluster's server runs as postgres when the tests run as root: it must reach the folder
    await chmod(dir, 0o755);
    await writeFile(path.join(dir, 'events.csv'), '1,click,2026-01-01 10:00:00+00\n2,view,2026-01-01 10:00:01+00\n2,view,2026-01-01 10:00:01+00\n');
    await writeFile(
      path.join(dir, 'events.ndjson.gz'),
      gzipSync('{"id":3,"kind":"buy","at":"2026-01-02T10:00:00Z","extra":1}\n{"id":4,"kind":"view","at":"2026-01-02T11:00:00Z","more":"x"}\n'),
    );
    await writeFile(path.join(dir, 'export.json'), JSON.stringify({ data: { items: [{ id: 1, name: 'tea' }, { id: 2, name: 'cake' }] } }));
    await writeFile(path.join(dir, 'sales.csv'), Buffer.from('Order ID;Customer;Amount;Ordered on;Paid\n1001;Ana;12.50;03/01/2026;true\n1002;J\xfcrgen;7.00;04/01/2026;false\n1003;NA;NA;13/01/2026;true\n', 'latin1'));
    await writeFile(
      path.join(dir, 'trips.parquet'),
      Buffer.from(
        parquetWriteBuffer({
          columnData: [
            { name: 'trip_id', data: [1n, 2n, 3n], type: 'INT64', nullable: false },
            { name: 'distance_km', data: [2.5, 10.25, null], type: 'DOUBLE' },
          ],
        }),
      ),
    );
    await writeFile(path.join(dir, 'people.csv'), Buffer.from('city,id,name\nK\xf6ln,1,J\xfcrgen\nNA,2,Ana\n', 'latin1'));
    const setup = await runCli(['dbt3', 'gen', '--scale', '0.01', '--tables', 'lineitem', '--out', '.'], { cwd: dir });
    assert.equal(setup.code, 0, setup.stderr);
    const db = await freshDatabase('pgsurge_help_reports');
    for (const [file, mode] of [['copy.json', 'copy'], ['insert.json', 'insert'], ['run.json', 'copy']] as const) {
      const r = await runCli(['load', 'lineitem.tbl', '--create', '--truncate', '--mode', mode, '--report', file, '--db', db], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
    }
  });

  after(async () => {
    const client = await testClient();
    try {
      for (const name of databases) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
    await rm(dir, { recursive: true, force: true });
  });

  for (const { path: command, examples } of blocks) {
    const runnable = examples.filter((e) => SKIP[e] === undefined && !IN_ORDER.includes(e));
    const skip = runnable.length === 0 && examples.length > 0 ? examples.map((e) => SKIP[e] ?? 'run in order on a managed cluster of their own (below)').join('; ') : false;
    it(`pgsurge ${command} --help: ${runnable.length} of ${examples.length} examples`, { skip }, async () => {
      assert.ok(examples.length > 0, `pgsurge ${command} --help has no examples`);
      for (const [k, example] of runnable.entries()) {
        const db = await freshDatabase(`pgsurge_help_${command.replace(/ /g, '_')}_${k}`);
        await inDatabase(db, SETUP_SQL);
        const before = BEFORE[example];
        if (before !== undefined) {
          const r = await runCli([...before, '--db', db], { cwd: dir });
          assert.equal(r.code, 0, r.stderr);
        }
        let run = example;
        for (const [from, to] of SMALLER[example] ?? []) {
          assert.ok(run.includes(from), `${example}: no ${from}`);
          run = run.replace(from, to);
        }
        const script = `set -o pipefail\npgsurge() { "${process.execPath}" "${PGSURGE}" "$@"; }\n${withDb(run, program)}`;
        const r = await runCli(['-c', script], { command: 'bash', cwd: dir, env: { DB: db } });
        assert.equal(r.code, EXIT_CODE[example] ?? 0, `${run}\n${r.stderr.slice(-2000)}`);
      }
    });
  }

  it("the managed cluster's examples, in order, on a cluster of their own", { skip: firstServerOnly('they run the embedded binaries whatever the server under test') }, async () => {
    const home = path.join(dir, 'cluster-home');
    await mkdir(home, { recursive: true });
    const port = String(await freePort());
    try {
      for (const example of IN_ORDER) {
        const run = example.replace('--listen 6543', `--listen ${port}`);
        const script = `set -o pipefail\npgsurge() { "${process.execPath}" "${PGSURGE}" "$@"; }\n${run}`;
        const r = await runCli(['-c', script], { command: 'bash', cwd: dir, env: { PGSURGE_HOME: home } });
        assert.equal(r.code, 0, `${run}\n${r.stdout.slice(-1000)}\n${r.stderr.slice(-2000)}`);
        if (example.includes('--tcp')) assert.match(r.stdout, new RegExp(`^\\s*${port}$`, 'm'), 'psql reached the cluster over TCP on its port');
      }
    } finally {
      await runCli(['cluster', 'stop'], { cwd: dir, env: { PGSURGE_HOME: home } });
    }
  });

  it('the skip and size lists name only examples that are there', () => {
    const every = new Set(blocks.flatMap((b) => b.examples));
    for (const e of [...Object.keys(SKIP), ...Object.keys(SMALLER), ...Object.keys(EXIT_CODE), ...IN_ORDER]) assert.ok(every.has(e), `not an example any more: ${e}`);
  });
});
