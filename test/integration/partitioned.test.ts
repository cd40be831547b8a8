import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { parseRejectLog } from '../helpers/reject-log.js';
import { closeTestSchema, copyFrom, digest, openTestSchema, rejectFileOf, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_partitioned';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-partitioned-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

interface Sizes {
  heapBytes: number;
  indexBytes: number;
}

/** What the server says the table and its partitions hold now: summed over every relation of the tree. */
async function serverSizes(qualified: string): Promise<Sizes & { totalBytes: number; leaves: number }> {
  const r = await client.query<{ heap: string; idx: string; total: string; leaves: string }>(
    `SELECT sum(pg_table_size(relid))::text AS heap, sum(pg_indexes_size(relid))::text AS idx,
            sum(pg_total_relation_size(relid))::text AS total, count(*) FILTER (WHERE isleaf)::text AS leaves
       FROM pg_partition_tree($1::regclass)`,
    [qualified],
  );
  const row = r.rows[0]!;
  return { heapBytes: Number(row.heap), indexBytes: Number(row.idx), totalBytes: Number(row.total), leaves: Number(row.leaves) };
}

describe('a partitioned target', () => {
  it('three levels (RANGE, LIST, HASH): the samples and the summary count every partition, rows already in them, and WAL; a row with no partition is rejected with the server message', async () => {
    const root = `${SCHEMA}.events`;
    // ids 0-1999: one leaf; 2000-3999 by region: 'east' a leaf, 'west' hashed on id into two leaves; nothing for id ≥ 4000
    await client.query(`
      CREATE TABLE ${root} (id bigint NOT NULL, region text NOT NULL, val integer, note text) PARTITION BY RANGE (id);
      CREATE TABLE ${SCHEMA}.events_low PARTITION OF ${root} FOR VALUES FROM (0) TO (2000) WITH (autovacuum_enabled = off);
      CREATE TABLE ${SCHEMA}.events_high PARTITION OF ${root} FOR VALUES FROM (2000) TO (4000) PARTITION BY LIST (region);
      CREATE TABLE ${SCHEMA}.events_east PARTITION OF ${SCHEMA}.events_high FOR VALUES IN ('east') WITH (autovacuum_enabled = off);
      CREATE TABLE ${SCHEMA}.events_west PARTITION OF ${SCHEMA}.events_high FOR VALUES IN ('west') PARTITION BY HASH (id);
      CREATE TABLE ${SCHEMA}.events_west0 PARTITION OF ${SCHEMA}.events_west FOR VALUES WITH (MODULUS 2, REMAINDER 0) WITH (autovacuum_enabled = off);
      CREATE TABLE ${SCHEMA}.events_west1 PARTITION OF ${SCHEMA}.events_west FOR VALUES WITH (MODULUS 2, REMAINDER 1) WITH (autovacuum_enabled = off);
      CREATE UNIQUE INDEX ON ${root} (id, region);
      CREATE INDEX ON ${root} (val);`);
    // rows already there, in three of the four leaves: the samples' rows in the table count them
    await client.query(`INSERT INTO ${root} SELECT g, CASE WHEN g % 2 = 0 THEN 'east' ELSE 'west' END, 0, 'before' FROM generate_series(3900, 3999) g`);
    const before = await tableRecords(client, root, '(FORMAT text)');

    const lines: string[] = [];
    const noPartition: number[] = [];
    for (let id = 0; id < 3900; id++) lines.push(`${id}\t${id % 3 === 0 ? 'east' : 'west'}\t${(id * 7919) % 1000}\tnote ${'x'.repeat(id % 40)}`);
    // ids past the last range, spread through the file: rejected, the rows around them loaded
    for (const k of [5, 1200, 3000, 3899]) {
      noPartition.push(k);
      lines.splice(k, 0, `${4000 + k}\teast\t1\tnowhere`);
    }
    const file = path.join(dir, 'events.txt');
    await fs.writeFile(file, `${lines.join('\n')}\n`);

    const r = await runCli(['load', file, '-t', 'events', '--schema', SCHEMA, '-f', 'text', '-w', '2', '--chunk-size', '16KB', '--sample-every', '1000', '--json', '--db', testUrl()]);
    assert.equal(r.code, 3, r.stderr); // rows rejected
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = events.at(-1) as { event: string; total: { read: number; loaded: number; rejected: number; skipped: number }; finalSizes: Sizes; durability: { walBytes: number } };
    const samples = events.filter((e) => e.event === 'sample') as unknown as (Sizes & { rowsLoaded: number; rowsInTable: number; walBytes: number })[];
    assert.equal(summary.event, 'summary');

    // accounting, and the table holds what the server's own COPY makes of the file's rows that have a partition, besides the rows before
    assert.deepEqual(summary.total, { ...summary.total, read: 3904, loaded: 3900, rejected: 4, skipped: 0 });
    const kept = lines.filter((l) => Number(l.split('\t')[0]) < 4000);
    await client.query(`CREATE TABLE ${SCHEMA}.events_ref (LIKE ${root})`);
    await pipeline(Readable.from([Buffer.from(`${kept.join('\n')}\n`)]), client.query(copyFrom(`COPY ${SCHEMA}.events_ref FROM STDIN`)));
    assert.equal(digest(await tableRecords(client, root, '(FORMAT text)')), digest([...(await tableRecords(client, `${SCHEMA}.events_ref`, '(FORMAT text)')), ...before]));

    // the server's message for each row with no partition, at its line
    const log = parseRejectLog(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'));
    assert.deepEqual(log.map((l) => l.line), noPartition.map((k) => k + 1));
    for (const l of log) {
      assert.equal(l.sqlstate, '23514');
      assert.match(l.message, /^no partition of relation "events" found for row \(Partition key of the failing row contains \(id\) = \(\d+\)\.\)$/);
    }

    // sizes: the summary's are the partitions', as pg_total_relation_size sums them
    const server = await serverSizes(root);
    assert.equal(server.leaves, 4);
    assert.ok(server.heapBytes > 4 * 8192 && server.indexBytes > 0, JSON.stringify(server));
    assert.deepEqual(summary.finalSizes, { heapBytes: server.heapBytes, indexBytes: server.indexBytes });
    assert.equal(summary.finalSizes.heapBytes + summary.finalSizes.indexBytes, server.totalBytes);

    // the samples: rows before counted from the partitions, sizes growing with the load, the last one the summary's
    assert.ok(samples.length >= 4, `a sample per 1,000 rows, got ${samples.length}`);
    assert.equal(samples[0]!.rowsLoaded, 0);
    assert.equal(samples[0]!.rowsInTable, 100);
    assert.ok(samples[0]!.heapBytes > 0, 'the rows before are in the first sample\'s size');
    const last = samples.at(-1)!;
    assert.equal(last.rowsInTable, 4000);
    assert.deepEqual({ heapBytes: last.heapBytes, indexBytes: last.indexBytes }, summary.finalSizes);
    for (let k = 1; k < samples.length; k++) assert.ok(samples[k]!.heapBytes >= samples[k - 1]!.heapBytes, `sample ${k} does not shrink`);
    assert.ok(last.heapBytes > samples[0]!.heapBytes);

    // WAL: the rows went into the leaves, and the server's WAL position counts them wherever they went
    const fileBytes = (await fs.stat(file)).size;
    assert.ok(last.walBytes >= fileBytes, `WAL ${last.walBytes} holds at least the rows' ${fileBytes} bytes`);
    assert.ok(summary.durability.walBytes >= fileBytes, `the summary's WAL ${summary.durability.walBytes} too`);
  });
});

describe('durability presets on a partitioned target', () => {
  const partitioned = async (name: string): Promise<string[]> => {
    await client.query(`
      CREATE TABLE ${SCHEMA}.${name} (id bigint NOT NULL, note text) PARTITION BY RANGE (id);
      CREATE TABLE ${SCHEMA}.${name}_a PARTITION OF ${SCHEMA}.${name} FOR VALUES FROM (0) TO (1000);
      CREATE TABLE ${SCHEMA}.${name}_b PARTITION OF ${SCHEMA}.${name} FOR VALUES FROM (1000) TO (3000) PARTITION BY HASH (id);
      CREATE TABLE ${SCHEMA}.${name}_b0 PARTITION OF ${SCHEMA}.${name}_b FOR VALUES WITH (MODULUS 2, REMAINDER 0);
      CREATE TABLE ${SCHEMA}.${name}_b1 PARTITION OF ${SCHEMA}.${name}_b FOR VALUES WITH (MODULUS 2, REMAINDER 1);`);
    return [`${SCHEMA}.${name}_a`, `${SCHEMA}.${name}_b0`, `${SCHEMA}.${name}_b1`];
  };
  const input = async (name: string): Promise<{ file: string; records: string[] }> => {
    const records = Array.from({ length: 3000 }, (_, id) => `${id}\tnote ${id}`);
    const file = path.join(dir, `${name}.txt`);
    await fs.writeFile(file, `${records.join('\n')}\n`);
    return { file, records };
  };
  const summaryOf = (stdout: string): { total: { loaded: number }; durability: { unloggedTables: string[]; frozenRows: number; notes: string[]; steps: { step: string }[] } } =>
    JSON.parse(stdout.trim().split('\n').at(-1)!) as never;

  it('--durability fast -w 1 loads without COPY FREEZE, which the server refuses for a partitioned table, and says so', async () => {
    await partitioned('fz');
    const { file, records } = await input('fz');
    const r = await runCli(['load', file, '-t', 'fz', '--schema', SCHEMA, '-f', 'text', '-w', '1', '--durability', 'fast', '--truncate', '--json', '--sample-every', 'off', '--db', testUrl()]);
    assert.equal(r.code, 0, r.stderr);
    const summary = summaryOf(r.stdout);
    assert.equal(summary.total.loaded, 3000);
    assert.equal(summary.durability.frozenRows, 0);
    assert.ok(summary.durability.notes.some((n) => /COPY FREEZE not used for .*fz.*: it is partitioned/.test(n)), JSON.stringify(summary.durability.notes));
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.fz`, '(FORMAT text)')), digest(records));
  });

  it('--unlogged makes the partitions unlogged for the load (the partitioned table has no storage of its own), and logged again after', async () => {
    const leaves = await partitioned('ul');
    const { file, records } = await input('ul');
    const r = await runCli(['load', file, '-t', 'ul', '--schema', SCHEMA, '-f', 'text', '-w', '2', '--unlogged', '--truncate', '--json', '--sample-every', 'off', '--db', testUrl()]);
    assert.equal(r.code, 0, r.stderr);
    const summary = summaryOf(r.stdout);
    assert.equal(summary.total.loaded, 3000);
    assert.deepEqual([...summary.durability.unloggedTables].sort(), [...leaves].sort());
    assert.deepEqual(summary.durability.steps.map((s) => s.step).sort(), summary.durability.unloggedTables.map((t) => `SET LOGGED ${t}`).sort());
    const persistence = await client.query<{ p: string }>(`SELECT DISTINCT c.relpersistence AS p FROM pg_partition_tree('${SCHEMA}.ul') t JOIN pg_class c ON c.oid = t.relid`);
    assert.deepEqual(persistence.rows.map((x) => x.p), ['p']);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.ul`, '(FORMAT text)')), digest(records));
  });
});
