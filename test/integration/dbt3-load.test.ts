import { gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { DBT3_TABLES } from '../../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { dbt3Builds } from '../../src/dbt3/build-keys.js';
import { catalogBuilds, type CatalogBuild } from '../../src/dbt3/build-catalog.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { closeTestSchema, digest, freshSchema, openTestSchema, rejectFilesIn, runCli, tableRecords, tblRecords, testClient, testUrl } from '../helpers/test-db.js';
import { firstServerOnly } from '../helpers/temp-cluster.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';

const SCHEMA = 'it_dbt3';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-dbt3-'));
  await generateDbt3({ scale: 0.01, outDir: dir });
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

async function expectTablesEqualFiles(schema = SCHEMA): Promise<void> {
  for (const table of DBT3_TABLES) {
    const expected = tblRecords(await fs.readFile(path.join(dir, `${table}.tbl`), 'utf8'));
    const n = await client.query(`SELECT count(*)::int AS n FROM ${schema}.${table}`);
    assert.equal(n.rows[0].n, expected.length, `${table} row count`);
    assert.equal(digest(await tableRecords(client, `${schema}.${table}`)), digest(expected), `${table} digest`);
  }
}

/** The kit's schema as the catalog would show it: every key and index, valid, on its columns. */
function kitCatalog(): string[] {
  return dbt3Builds()
    .map((b): CatalogBuild =>
      b.kind === 'index'
        ? { kind: b.kind, table: b.table, columns: b.columns, name: b.name, valid: true }
        : b.kind === 'foreign key'
          ? { kind: b.kind, table: b.table, columns: b.columns, references: b.references, referencedColumns: b.referencedColumns, valid: true }
          : { kind: b.kind, table: b.table, columns: b.columns, valid: true },
    )
    .map((c) => JSON.stringify(c))
    .sort();
}

async function catalogOf(schema: string): Promise<string[]> {
  return (await catalogBuilds(client, DBT3_TABLES, schema)).map((c) => JSON.stringify(c)).sort();
}

/** A copy of the generated folder with one table's file changed. */
async function folderWith(table: string, change: (content: string) => string): Promise<string> {
  const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-dbt3-bad-'));
  for (const t of DBT3_TABLES) {
    const content = await fs.readFile(path.join(dir, `${t}.tbl`), 'utf8');
    await fs.writeFile(path.join(copy, `${t}.tbl`), t === table ? change(content) : content);
  }
  return copy;
}

describe('pgsurge dbt3 load', () => {
  it('loads the eight tables and builds exactly the kit\'s keys and indexes (catalog: present, valid, on their columns), ANALYZEs, with a timeline and the build sessions\' settings', async () => {
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '-w', '2', '--chunk-size', '256KB', '--json']);
    assert.equal(r.code, 0, r.stderr);
    await expectTablesEqualFiles();
    assert.deepEqual(await catalogOf(SCHEMA), kitCatalog());
    assert.equal(kitCatalog().length, 8 + 15 + 8);
    const stats = await client.query(`SELECT count(DISTINCT tablename)::int AS n FROM pg_stats WHERE schemaname = $1`, [SCHEMA]);
    assert.equal(stats.rows[0].n, 8, 'every table was ANALYZEd');

    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    assert.equal(summary.total.read, summary.total.loaded + summary.total.rejected + summary.total.skipped);
    for (const phase of ['create tables', 'load', 'primary keys', 'indexes', 'foreign keys', 'analyze']) assert.ok(summary.phases.some((p: { phase: string }) => p.phase === phase), phase);
    // The timeline: every load and build once, each after what it waits for.
    type Bar = { id: string; kind: string; table: string; start: number; end: number; statement: string };
    const bars: Bar[] = summary.timeline;
    assert.equal(bars.length, 8 + 31 + 8);
    const at = (id: string): Bar => bars.find((b) => b.id === id)!;
    for (const b of bars) {
      assert.ok(b.start <= b.end && b.statement.length > 0, b.id);
      if (b.kind !== 'load') assert.ok(at(`load ${b.table}`).end <= b.start, `${b.id} started before its table was loaded`);
    }
    assert.ok(at('primary key orders').end <= at('foreign key lineitem (l_orderkey) → orders').start);
    // A foreign key's check is planned with both tables' statistics: their ANALYZE ended before it started.
    for (const fk of bars.filter((b) => b.kind === 'foreign key')) {
      const referenced = /→ (\w+)$/.exec(fk.id)![1]!;
      for (const t of [fk.table, referenced]) assert.ok(at(`analyze ${t}`).end <= fk.start, `${fk.id} started before ANALYZE ${t} ended`);
    }
    assert.match(at('index i_l_shipdate').statement, /^CREATE INDEX "i_l_shipdate" ON "it_dbt3"."lineitem" \("l_shipdate"\)$/);
    // The verdict is read from the table loads' own backends (their names come from each load's id, not from the dbt3 load's).
    const seen = Object.values(summary.diagnosis.waits.waits as Record<string, number>).reduce((a, b) => a + b, 0);
    assert.ok(seen > 0, `the wait looks saw the loads' backends: ${JSON.stringify(summary.diagnosis.waits)}`);

    // What the build sessions ran with, as a session's pg_settings said, is what the sizing chose; within the machine and the server.
    const kb = (v: string): number => {
      const m = /^(\d+)(kB|MB|GB)$/.exec(v)!;
      return Number(m[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[m[2] as 'kB' | 'MB' | 'GB'];
    };
    const sized = (name: string): { value: number; set: boolean } => summary.buildSizing.settings.find((x: { name: string }) => x.name === name);
    assert.equal(kb(summary.buildSession.maintenance_work_mem), sized('maintenance_work_mem').value);
    assert.equal(kb(summary.buildSession.work_mem), sized('work_mem').value);
    assert.equal(Number(summary.buildSession.max_parallel_maintenance_workers), sized('max_parallel_maintenance_workers').value);
    const memAvailableKb = Number(/^MemAvailable:\s+(\d+) kB/m.exec(await fs.readFile('/proc/meminfo', 'utf8'))![1]);
    if (sized('maintenance_work_mem').set) assert.ok(sized('maintenance_work_mem').value * summary.buildSizing.buildsAtOnce <= memAvailableKb, 'the builds together fit in the memory available');
    const limits = await client.query<{ name: string; setting: string }>("SELECT name, setting FROM pg_settings WHERE name IN ('max_parallel_workers', 'max_worker_processes')");
    const limit = Math.min(...limits.rows.map((x) => Number(x.setting)));
    assert.ok(sized('max_parallel_maintenance_workers').value * summary.buildSizing.buildsAtOnce <= limit);
  });

  it('a --schema the database lacks stops before anything is created (exit 2), naming it', { skip: firstServerOnly('the check is pgsurge\'s') }, async () => {
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', 'it_dbt3_missing', '-q']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /database \S+ has no schema "it_dbt3_missing"/);
    assert.match(r.stderr, /CREATE SCHEMA "it_dbt3_missing"/);
    assert.equal((await client.query("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'it_dbt3_missing'")).rows[0].n, 0);
  });

  it('refuses tables that already hold rows without --replace, then replaces them', { skip: firstServerOnly('the refusal and --replace are pgsurge\'s checks') }, async () => {
    const refused = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /already holds rows/);
    assert.match(refused.stderr, /--resume to finish a stopped dbt3 load, or --replace/);
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--no-keys', '-w', '3', '-q']);
    assert.equal(r.code, 0, r.stderr);
    await expectTablesEqualFiles();
  });

  it('loads split files lineitem.tbl.1 … .3, gzipped or not; the same part both ways is refused', { skip: firstServerOnly('finding the parts is pgsurge\'s') }, async () => {
    const splitDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-dbt3-split-'));
    try {
      for (const part of [1, 2, 3]) await generateDbt3({ scale: 0.01, outDir: splitDir, tables: ['lineitem'], parts: 3, part });
      const names = (await fs.readdir(splitDir)).sort();
      assert.deepEqual(names, ['lineitem.tbl.1', 'lineitem.tbl.2', 'lineitem.tbl.3']);
      const part2 = await fs.readFile(path.join(splitDir, 'lineitem.tbl.2'));
      await fs.writeFile(path.join(splitDir, 'lineitem.tbl.2.gz'), gzipSync(part2));
      const both = await runCli(['dbt3', 'load', splitDir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--no-keys', '-q']);
      assert.equal(both.code, 2, both.stderr);
      assert.match(both.stderr, /holds both lineitem\.tbl\.2 and lineitem\.tbl\.2\.gz: loading both would load lineitem\.tbl\.2's rows twice/);
      await fs.rm(path.join(splitDir, 'lineitem.tbl.2'));
      const r = await runCli(['dbt3', 'load', splitDir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--no-keys', '-q']);
      assert.equal(r.code, 0, r.stderr);
      const expected = tblRecords(await fs.readFile(path.join(dir, 'lineitem.tbl'), 'utf8'));
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.lineitem`)), digest(expected));
    } finally {
      await fs.rm(splitDir, { recursive: true, force: true });
    }
  });

  it('an empty folder says what it expected', { skip: firstServerOnly('nothing reaches the server') }, async () => {
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-empty-'));
    const r = await runCli(['dbt3', 'load', empty, '--db', testUrl(), '-q']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no DBT-3 \.tbl files/);
    await fs.rm(empty, { recursive: true });
  });

  it('pipes the generator into load on stdin', { skip: firstServerOnly('the pipe is pgsurge\'s; the loads and builds it feeds run on every version above') }, async () => {
    const gen = await runCli(['dbt3', 'gen', '--scale', '0.01', '--tables', 'orders', '--out', '-']);
    assert.equal(gen.code, 0, gen.stderr);
    const r = await runCli(['load', '-', '-t', 'orders', '-f', 'tbl', '--truncate', '--db', testUrl(), '--schema', SCHEMA, '-q'], { stdin: gen.stdout });
    assert.equal(r.code, 0, r.stderr);
    const expected = tblRecords(await fs.readFile(path.join(dir, 'orders.tbl'), 'utf8'));
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.orders`)), digest(expected));
  });
  it('a duplicate key planted in orders stops the load naming the table, the key and the row; the accounting is shown; after the fix --resume builds what is missing (an invalid index dropped and built again)', async () => {
    const bad = await folderWith('orders', (c) => c + c.slice(0, c.indexOf('\n') + 1));
    try {
      const r = await runCli(['dbt3', 'load', bad, '--db', testUrl(), '--schema', SCHEMA, '--replace', '-w', '2', '--chunk-size', '256KB']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /pgsurge: primary key orders on orders failed: the data holds a duplicate key: could not create unique index "orders_pkey"/);
      assert.match(r.stderr, /detail: Key \(o_orderkey\)=\(1\) is duplicated\./);
      assert.match(r.stderr, /resume with: pgsurge dbt3 load .* --resume/);
      assert.doesNotMatch(r.stderr, /--replace/);
      // The accounting of what was loaded before the stop: read = loaded + rejected + skipped, per file.
      const ordersRows = tblRecords(await fs.readFile(path.join(dir, 'orders.tbl'), 'utf8')).length + 1;
      assert.match(r.stdout, new RegExp(`orders\\.tbl\\s+orders\\s+${ordersRows.toLocaleString('en-US')}\\s+${ordersRows.toLocaleString('en-US')}\\s+0\\s+0`));
      assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.orders`)).rows[0].n, ordersRows, 'the rows stay loaded');
      assert.ok((await catalogOf(SCHEMA)).length < 31, 'the load stopped before building everything');

      // A crashed concurrent build leaves an invalid index behind: resume must drop it and build it again.
      await client.query(`DROP INDEX IF EXISTS ${SCHEMA}.i_n_regionkey`);
      await assert.rejects(client.query(`CREATE UNIQUE INDEX CONCURRENTLY i_n_regionkey ON ${SCHEMA}.nation (n_regionkey)`), /could not create unique index/);
      assert.equal((await client.query(`SELECT indisvalid FROM pg_index WHERE indexrelid = '${SCHEMA}.i_n_regionkey'::regclass`)).rows[0].indisvalid, false);

      await client.query(`DELETE FROM ${SCHEMA}.orders WHERE ctid = (SELECT max(ctid) FROM ${SCHEMA}.orders WHERE o_orderkey = 1)`);
      // The kit's builds in place (a key's unique index without its constraint yet is not one of them).
      const builtBefore = (await catalogBuilds(client, DBT3_TABLES, SCHEMA)).filter((c) => c.valid && !(c.kind === 'index' && c.name!.endsWith('_pkey'))).length;
      const resumed = await runCli(['dbt3', 'load', bad, '--db', testUrl(), '--schema', SCHEMA, '--resume', '-w', '2', '--chunk-size', '256KB', '-q']);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /invalid indexes dropped and built again: "it_dbt3"\."i_n_regionkey"/);
      if (builtBefore > 0) assert.match(resumed.stdout, new RegExp(`already built \\(left alone\\): ${builtBefore}\\n`));
      await expectTablesEqualFiles();
      assert.deepEqual(await catalogOf(SCHEMA), kitCatalog());
    } finally {
      await fs.rm(bad, { recursive: true, force: true });
    }
  });

  it('--two-step-keys: each primary key its unique index, then the constraint on it, the kit\'s catalog; stopped between the two steps, --resume adds only the constraint; the key\'s columns are NOT NULL as the kit\'s', async () => {
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--two-step-keys', '-w', '2', '--chunk-size', '256KB', '--json']);
    assert.equal(r.code, 0, r.stderr);
    type Bar = { id: string; start: number; end: number; statement: string };
    const all: Bar[] = JSON.parse(r.stdout.trim().split('\n').at(-1)!).timeline;
    assert.equal(all.length, 8 + 31 + 8 + 8);
    const at = (id: string): Bar => all.find((b) => b.id === id)!;
    assert.ok(at('primary key orders').end <= at('primary key orders constraint').start);
    assert.ok(at('primary key orders constraint').end <= at('foreign key lineitem (l_orderkey) → orders').start);
    assert.match(at('primary key lineitem').statement, /^CREATE UNIQUE INDEX "lineitem_pkey" ON "it_dbt3"."lineitem" \("l_orderkey", "l_linenumber"\)$/);
    assert.match(at('primary key lineitem constraint').statement, /^ALTER TABLE "it_dbt3"."lineitem" ADD PRIMARY KEY USING INDEX "lineitem_pkey"$/);
    await expectTablesEqualFiles();
    assert.deepEqual(await catalogOf(SCHEMA), kitCatalog());
    const notNull = await client.query(`SELECT attname FROM pg_attribute WHERE attrelid = '${SCHEMA}.lineitem'::regclass AND attnum > 0 AND attnotnull ORDER BY attnum`);
    assert.deepEqual(notNull.rows.map((x) => x.attname), ['l_orderkey', 'l_linenumber']);
    // What a stop between the steps leaves: the index, no constraint (dropping the constraint drops its index: build it again by hand).
    await client.query(`ALTER TABLE ${SCHEMA}.lineitem DROP CONSTRAINT lineitem_pkey`);
    await client.query(`CREATE UNIQUE INDEX lineitem_pkey ON ${SCHEMA}.lineitem (l_orderkey, l_linenumber)`);
    const oid = (await client.query(`SELECT '${SCHEMA}.lineitem_pkey'::regclass::oid AS o`)).rows[0].o;
    // Resumed without the flag: the key whose index is there still gets only its constraint.
    const resumed = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '--resume', '-w', '2', '--chunk-size', '256KB', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const bars: { id: string }[] = JSON.parse(resumed.stdout.trim().split('\n').at(-1)!).timeline;
    assert.deepEqual(bars.filter((b) => !b.id.startsWith('load ') && !b.id.startsWith('analyze ')).map((b) => b.id), ['primary key lineitem constraint']);
    assert.equal((await client.query(`SELECT conindid FROM pg_constraint WHERE conrelid = '${SCHEMA}.lineitem'::regclass AND contype = 'p'`)).rows[0].conindid, oid, 'the constraint is on the index that was there');
    await expectTablesEqualFiles();
    assert.deepEqual(await catalogOf(SCHEMA), kitCatalog());
  });

  it('--two-step-keys: a NULL in a primary key column is refused by the load (the key\'s columns are NOT NULL from the start): a rejected row, accounted, and every key built', { skip: firstServerOnly('the reject and its accounting are pgsurge\'s; the two-step keys run on every version above') }, async () => {
    const bad = await folderWith('nation', (c) => c + '|ATLANTIS|0|planted|\n');
    try {
      const r = await runCli(['dbt3', 'load', bad, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--two-step-keys', '-w', '2', '--chunk-size', '256KB', '--json', '--reject-dir', bad]);
      assert.equal(r.code, 3, r.stderr);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
      const nation = summary.files.find((f: { table: string }) => f.table === 'nation');
      assert.deepEqual([nation.read, nation.loaded, nation.rejected, nation.skipped], [26, 25, 1, 0]);
      assert.equal(summary.total.read, summary.total.loaded + summary.total.rejected + summary.total.skipped);
      const nationRejects = await rejectFilesIn(bad, 'nation');
      assert.equal(nationRejects.length, 1, nationRejects.join(', '));
      assert.match(await fs.readFile(nationRejects[0]!, 'utf8'), /ATLANTIS/);
      await expectTablesEqualFiles();
      assert.deepEqual(await catalogOf(SCHEMA), kitCatalog());
    } finally {
      await fs.rm(bad, { recursive: true, force: true });
    }
  });

  it('a foreign key that fails names the table, the key and the missing value', async () => {
    const bad = await folderWith('lineitem', (c) => c + c.slice(0, c.indexOf('\n') + 1).replace(/^\d+\|/, '99999999|'));
    try {
      // --overlap: each table its own load, its builds as soon as it is loaded.
      const r = await runCli(['dbt3', 'load', bad, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--overlap', '-w', '2', '--chunk-size', '256KB', '-q']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /pgsurge: foreign key lineitem \(l_orderkey\) → orders on lineitem failed: a row references a key that is not there/);
      assert.match(r.stderr, /detail: Key \(l_orderkey\)=\(99999999\) is not present in table "orders"\./);
    } finally {
      await fs.rm(bad, { recursive: true, force: true });
    }
  });

  it('killed mid-load (SIGKILL), then --resume: every table equals its file, once, and the kit\'s keys and indexes are all there', async () => {
    const schema = await freshSchema(client, 'it_dbt3_kill');
    try {
      const run = startCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '-w', '2', '--chunk-size', '32KB', '-q', '--sample-every', 'off']);
      // Kill as soon as lineitem (loaded first) holds rows.
      const deadline = Date.now() + 30_000;
      let rows = 0;
      while (rows === 0 && Date.now() < deadline && run.child.exitCode === null) {
        rows = await client.query(`SELECT count(*)::int AS n FROM ${schema}.lineitem`).then((x) => x.rows[0].n as number, () => 0);
        if (rows === 0) await sleep(10);
      }
      run.child.kill('SIGKILL');
      await run.exited;
      assert.ok(rows > 0, 'lineitem was loading when the load was killed');
      const lineitemRows = tblRecords(await fs.readFile(path.join(dir, 'lineitem.tbl'), 'utf8')).length;
      const before = (await client.query(`SELECT count(*)::int AS n FROM ${schema}.lineitem`)).rows[0].n as number;
      assert.ok(before < lineitemRows, `killed part way (${before} of ${lineitemRows} lineitem rows)`);
      assert.ok((await catalogOf(schema)).length < 31);

      const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '--resume', '-w', '2', '--chunk-size', '32KB', '-q']);
      assert.equal(r.code, 0, r.stderr);
      await expectTablesEqualFiles(schema);
      assert.deepEqual(await catalogOf(schema), kitCatalog());
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });
  it('--build-as-loaded: lineitem\'s builds start on a worker the load gives back while the other tables load; killed then, --resume: every table equals its file, once, and the kit\'s keys and indexes are all there', { skip: firstServerOnly('when builds start is pgsurge\'s scheduling; the kill and --resume run on every version above') }, async () => {
    const schema = await freshSchema(client, 'it_dbt3_bal');
    try {
      const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '--build-as-loaded', '-w', '2', '--chunk-size', '32KB', '--json', '--sample-every', 'off']);
      assert.equal(r.code, 0, r.stderr);
      await expectTablesEqualFiles(schema);
      assert.deepEqual(await catalogOf(schema), kitCatalog());
      type Bar = { id: string; kind: string; table: string; start: number; end: number; slots: number; resized?: { at: number; slots: number }[] };
      const bars: Bar[] = JSON.parse(r.stdout.trim().split('\n').at(-1)!).timeline;
      const at = (id: string): Bar => bars.find((b) => b.id === id)!;
      for (const b of bars) if (b.kind !== 'load') assert.ok(at(`load ${b.table}`).end <= b.start, `${b.id} started before its table was loaded`);
      const givenBack = bars.flatMap((b) => b.resized ?? []);
      assert.ok(givenBack.length > 0 && givenBack.every((g) => g.slots === 1), `the load gave a worker back: ${JSON.stringify(givenBack)}`);
      const loadsEnd = Math.max(...bars.filter((b) => b.kind === 'load').map((b) => b.end));
      assert.ok(bars.some((b) => b.table === 'lineitem' && b.kind !== 'load' && b.start < loadsEnd), 'a build on lineitem ran while other tables loaded');

      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.query(`CREATE SCHEMA ${schema}`);
      const run = startCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '--build-as-loaded', '-w', '2', '--chunk-size', '32KB', '-q', '--sample-every', 'off']);
      // Kill as soon as a build session runs a statement while the load still has a worker connected.
      const deadline = Date.now() + 30_000;
      let both = false;
      while (!both && Date.now() < deadline && run.child.exitCode === null) {
        const a = await client.query<{ builds: number; workers: number }>(
          "SELECT count(*) FILTER (WHERE application_name LIKE 'pgsurge dbt3 ' || $1 || ' b%' AND state = 'active')::int AS builds, count(*) FILTER (WHERE application_name LIKE 'pgsurge %w%' AND application_name NOT LIKE 'pgsurge dbt3 %')::int AS workers FROM pg_stat_activity",
          [schema],
        );
        both = a.rows[0]!.builds > 0 && a.rows[0]!.workers > 0;
        if (!both) await sleep(5);
      }
      run.child.kill('SIGKILL');
      await run.exited;
      assert.ok(both, 'killed while a build ran beside the load');
      assert.ok((await catalogOf(schema)).length < 31);
      const resumed = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '--build-as-loaded', '--resume', '-w', '2', '--chunk-size', '32KB', '-q']);
      assert.equal(resumed.code, 0, resumed.stderr);
      await expectTablesEqualFiles(schema);
      assert.deepEqual(await catalogOf(schema), kitCatalog());
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });

  // SIGTERM (a service manager, `kill`) and SIGHUP (a closed terminal) stop it as Ctrl-C does.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal === 'SIGINT' ? 'Ctrl-C' : signal} while a build runs: it is cancelled, exit 130 with the resume command; --resume builds the rest`, async () => {
      const schema = await freshSchema(client, `it_dbt3_${signal.toLowerCase()}`);
      // The tables made beforehand (a dbt3 load uses empty tables as they are), and one held so that its primary key waits: a build surely running when the signal comes.
      for (const t of DBT3_TABLES) await client.query(createTableSql(t, schema)!);
      const holder = await testClient();
      try {
        await holder.query('BEGIN');
        await holder.query(`LOCK TABLE ${schema}.region IN ACCESS SHARE MODE`);
        const run = startCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '-w', '2', '--sample-every', 'off']);
        const deadline = Date.now() + 60_000;
        let waiting = 0;
        while (waiting === 0 && Date.now() < deadline && run.child.exitCode === null) {
          waiting = (await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'pgsurge dbt3 ${schema} b%' AND wait_event_type = 'Lock'`)).rows[0].n;
          if (waiting === 0) await sleep(10);
        }
        assert.ok(waiting > 0, 'the primary key of region was waiting for its lock');
        run.child.kill(signal);
        const { code } = await run.exited;
        assert.equal(code, 130, run.stderr());
        assert.match(run.stderr(), new RegExp(`interrupted \\(${signal}\\); rolling back the chunks in flight and cancelling the builds`));
        assert.match(run.stderr(), /resume with: pgsurge dbt3 load .* --resume/);
        await holder.query('ROLLBACK');
        const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '--resume', '-w', '2', '-q']);
        assert.equal(r.code, 0, r.stderr);
        await expectTablesEqualFiles(schema);
        assert.deepEqual(await catalogOf(schema), kitCatalog());
      } finally {
        await holder.end();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      }
    });
  }
});
