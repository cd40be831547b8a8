import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { citusLineitem, citusUrl, closeCitusSchema, openCitusSchema } from '../helpers/citus-db.js';
import { damage, lineitemFields, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { digest, rejectFileOf, runCli, tableRecords } from '../helpers/test-db.js';

const SCHEMA = 'ct_load';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openCitusSchema(SCHEMA, 'pgsurge-ct-load-'));
});
after(async () => {
  await closeCitusSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', citusUrl(), '--schema', SCHEMA];

const citusTable = (name: string, kind: 'distributed' | 'reference'): Promise<void> => citusLineitem(client, SCHEMA, name, kind);

async function input(name: string, rows: number, bad: readonly number[] = []): Promise<{ file: string; expected: string; good: number; badLines: number[] }> {
  const fields = lineitemFields(rows);
  const badSet = new Set(bad);
  const file = path.join(dir, name);
  await fs.writeFile(file, Buffer.concat(fields.map((f, i) => (badSet.has(i) ? damage(f, 'bad date', tblLine) : tblLine(f)))));
  return { file, expected: digest(fields.filter((_, i) => !badSet.has(i)).map(tableRecord)), good: rows - badSet.size, badLines: bad.map((i) => i + 1) };
}

async function tableDigest(table: string): Promise<{ count: number; digest: string }> {
  const count = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`)).rows[0].n as number;
  return { count, digest: digest(await tableRecords(client, `${SCHEMA}.${table}`)) };
}

describe('loads into Citus tables through the coordinator', () => {
  for (const workers of [1, 3]) {
    it(`a distributed table at -w ${workers} holds the input exactly (digest), and the summary names the cluster`, async () => {
      const { file, expected, good } = await input(`dist${workers}.tbl`, 5000);
      await citusTable(`dist${workers}`, 'distributed');
      const r = await runCli(['load', file, '-t', `dist${workers}`, '-w', String(workers), '--chunk-size', '64KB', '--json', ...target()]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(`dist${workers}`), { count: good, digest: expected });
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { target: string; total: { loaded: number } };
      assert.equal(summary.total.loaded, good);
      assert.match(summary.target, /Citus [\d.-]+ cluster: 3 nodes, 8 shards/);
    });
  }

  it('--wire binary into a distributed table: the coordinator takes binary COPY and forwards it, and the shards hold the input exactly (digest)', async () => {
    const { file, expected, good } = await input('bin.tbl', 5000);
    await citusTable('bin', 'distributed');
    const r = await runCli(['load', file, '-t', 'bin', '-w', '2', '--chunk-size', '64KB', '--wire', 'binary', '--json', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest('bin'), { count: good, digest: expected });
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number }; wire?: { table: string; wire: string; binaryChunks: number; fallbackChunks: number }[] };
    assert.equal(summary.total.loaded, good);
    assert.equal(summary.total.read, summary.total.loaded + summary.total.rejected + summary.total.skipped);
    const wire = summary.wire?.find((w) => w.table === 'bin');
    assert.equal(wire?.wire, 'binary', JSON.stringify(summary.wire));
    assert.equal(wire.fallbackChunks, 0);
    assert.ok(wire.binaryChunks > 3, `several binary chunks: ${wire.binaryChunks}`);
  });

  it('a reference table holds the input exactly on every node', async () => {
    const { file, expected, good } = await input('ref.tbl', 3000);
    await citusTable('ref', 'reference');
    const r = await runCli(['load', file, '-t', 'ref', '-w', '2', '--chunk-size', '64KB', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest('ref'), { count: good, digest: expected });
    // Every placement holds all the rows, not just the one the coordinator reads.
    const counts = await client.query<{ result: string }>(`SELECT result FROM run_command_on_placements('${SCHEMA}.ref', 'SELECT count(*) FROM %s')`);
    assert.ok(counts.rows.length >= 2);
    for (const c of counts.rows) assert.equal(Number(c.result), good);
  });

  it('a bad row in a distributed COPY is rejected with its line; the rest loads, and read = loaded + rejected', async () => {
    const { file, expected, good, badLines } = await input('bad.tbl', 4000, [17, 2500]);
    await citusTable('bad', 'distributed');
    const r = await runCli(['load', file, '-t', 'bad', '-w', '2', '--chunk-size', '32KB', '--json', ...target()]);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(await tableDigest('bad'), { count: good, digest: expected });
    const log = await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8');
    const lines = log.trim().split('\n').slice(2).map((l) => Number(l.split('\t')[1]));
    assert.deepEqual(lines, badLines);
    assert.match(log, /22007|22008/);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number } };
    assert.equal(summary.total.read, summary.total.loaded + summary.total.rejected + summary.total.skipped);
    assert.equal(summary.total.rejected, 2);
  });

  it('sizes and WAL in the report are the cluster\'s: the shards\' size as Citus reports it, WAL of every node', async () => {
    const { file, good } = await input('sized.tbl', 6000);
    await citusTable('sized', 'distributed');
    const report = path.join(dir, 'sized.json');
    const r = await runCli(['load', file, '-t', 'sized', '-w', '2', '--chunk-size', '64KB', '--report', report, ...target()]);
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(await fs.readFile(report, 'utf8')) as { target: string; series: { samples: { rowsLoaded: number; heapBytes: number; indexBytes: number; walBytes: number }[] }[] };
    const last = data.series[0]!.samples.at(-1)!;
    assert.equal(last.rowsLoaded, good);
    const sizes = (await client.query<{ t: string; total: string }>(`SELECT citus_table_size('${SCHEMA}.sized')::text AS t, citus_total_relation_size('${SCHEMA}.sized')::text AS total`)).rows[0]!;
    assert.ok(last.heapBytes > 0);
    assert.equal(last.heapBytes, Number(sizes.t));
    assert.equal(last.heapBytes + last.indexBytes, Number(sizes.total));
    // At least the rows' bytes went through the workers' WAL (the coordinator alone writes only the ledger's).
    assert.ok(last.walBytes > (await fs.stat(file)).size, `WAL ${last.walBytes} B for ${(await fs.stat(file)).size} B of input`);
    assert.match(data.target, /Citus .* cluster: 3 nodes, 8 shards/);
  });

  it('--part 1/3 … 3/3 as three processes at once fill a distributed table with the input exactly once', async () => {
    const { file, expected, good } = await input('parts.tbl', 6000);
    await citusTable('parts', 'distributed');
    const runs = await Promise.all([1, 2, 3].map((k) => runCli(['load', file, '-t', 'parts', '--part', `${k}/3`, '--load-id', 'ct-parts', '-w', '2', '--chunk-size', '16KB', ...target()])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest('parts'), { count: good, digest: expected });
    const status = await runCli(['status', 'ct-parts', '--json', '--db', citusUrl()]);
    const parts = (JSON.parse(status.stdout) as { parts: { part: string; rowsLoaded: number; bytesDone: number; bytesTotal: number }[] }).parts;
    assert.deepEqual(parts.map((p) => p.part), ['1/3', '2/3', '3/3']);
    assert.equal(parts.reduce((a, p) => a + p.rowsLoaded, 0), good);
    for (const p of parts) assert.equal(p.bytesDone, p.bytesTotal);
  });

  it('--mode insert with the ledger is refused on a Citus table (exit 2): Citus would commit a one-worker INSERT before its ledger row', async () => {
    const { file } = await input('insert.tbl', 10);
    await citusTable('ins', 'distributed');
    const r = await runCli(['load', file, '-t', 'ins', '--mode', 'insert', ...target()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--mode insert into a Citus table/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.ins`)).rows[0].n, 0);
  });
});
