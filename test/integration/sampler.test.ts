import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { writeNarrowRows } from '../../src/decay/narrow-rows.js';
import { openTarget } from '../../src/cli/open-target.js';
import { load } from '../../src/load/load.js';
import { Sampler, type SampleListener } from '../../src/metrics/sampler.js';
import { WAIT_LOOK_SQL, WaitSampler } from '../../src/metrics/wait-sampler.js';
import { intervalsOf, type Interval, type Sample } from '../../src/metrics/series.js';
import { allReporters } from '../../src/report/progress-line.js';
import { closeTestSchema, digest, freshSchema, tableRecords, testClient, testUrl, openTestSchema } from '../helpers/test-db.js';

const SCHEMA = 'it_sampler';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-sampler-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

describe('the sampler, with a listener handed in, against a real server', () => {
  it('samples every N rows: counts, rows in the table, sizes, WAL, checkpoints, buffer reads', async () => {
    const file = path.join(dir, 'narrow.txt');
    await writeNarrowRows({ rows: 40_000, keys: 'random', seed: 3, out: file });
    // no autovacuum: its free space and visibility maps, made after the last sample, would grow pg_table_size
    await client.query(`CREATE TABLE ${SCHEMA}.t (id bigint PRIMARY KEY, val integer, note text) WITH (autovacuum_enabled = off)`);
    // rows already there: "rows in the table" counts them
    await client.query(`INSERT INTO ${SCHEMA}.t SELECT -g, 0, 'before' FROM generate_series(1, 1234) g`);

    const seen: { sample: Sample; interval: Interval | undefined; index: number }[] = [];
    const listener: SampleListener = { sample: (e) => seen.push(e), sampleFailed: (e) => assert.fail(String(e)) };
    const target = await openTarget({ db: testUrl() });
    const sampler = await Sampler.open(target, { every: { rows: 5000 } }, [listener]);
    let checkpointed = false;
    const summary = await load(
      [{ file, format: 'text', table: 't', schema: SCHEMA }],
      { workers: 2, chunkBytes: 64 * 1024, create: false, truncate: false },
      target,
      allReporters(sampler, {
        chunkLoaded: () => {
          if (!checkpointed) {
            checkpointed = true;
            void client.query('CHECKPOINT');
          }
        },
      }),
    );
    // Backends flush their buffer counters about once a second and when they exit (after
    // the load's connections close): wait until the server shows them, then sample again.
    for (let tries = 0; tries < 50; tries++) {
      const st = await client.query(`SELECT coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0) AS n FROM pg_statio_user_tables WHERE relid = '${SCHEMA}.t'::regclass`);
      if (Number(st.rows[0]?.n ?? 0) > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await sampler.sampleNow();
    const samples = await sampler.stop();

    assert.equal(summary.total.rows, 40_000);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.t`, '(FORMAT text)')), digest([...(await fs.readFile(file, 'utf8')).trimEnd().split('\n'), ...Array.from({ length: 1234 }, (_, i) => `${-(i + 1)}\t0\tbefore`)]));

    // the listener saw every sample the sampler kept, in order, with the interval since the previous one
    assert.deepEqual(seen.map((e) => e.sample), samples);
    assert.deepEqual(seen.map((e) => e.index), samples.map((_, i) => i));
    assert.equal(seen[0]!.interval, undefined);
    assert.deepEqual(seen.slice(1).map((e) => e.interval), intervalsOf(samples));

    assert.ok(samples.length >= 6, `a sample per 5,000 rows and one at the end, got ${samples.length}`);
    const first = samples[0]!;
    const last = samples.at(-1)!;
    assert.equal(first.rowsLoaded, 0);
    assert.equal(first.rowsInTable, 1234);
    assert.equal(first.walBytes, 0);
    assert.equal(last.rowsLoaded, 40_000);
    assert.equal(last.rowsInTable, 41_234);
    assert.equal(last.bytesLoaded, (await fs.stat(file)).size);
    for (let k = 1; k < samples.length; k++) {
      const [a, b] = [samples[k - 1]!, samples[k]!];
      assert.ok(b.seconds >= a.seconds && b.rowsLoaded >= a.rowsLoaded && b.walBytes >= a.walBytes && b.heapBytes >= a.heapBytes, `sample ${k} moves forward`);
      assert.equal(b.rowsInTable - b.rowsLoaded, 1234);
    }
    // the table's size with its TOAST and maps: with the indexes', the whole of pg_total_relation_size
    const sizes = await client.query(`SELECT pg_table_size('${SCHEMA}.t')::int AS heap, pg_indexes_size('${SCHEMA}.t')::int AS idx, pg_total_relation_size('${SCHEMA}.t')::int AS total`);
    assert.equal(last.heapBytes, sizes.rows[0].heap);
    assert.equal(last.indexBytes, sizes.rows[0].idx);
    assert.equal(last.heapBytes + last.indexBytes, sizes.rows[0].total);
    assert.ok(last.walBytes > 40_000 * 45, `WAL holds at least the rows: ${last.walBytes}`);
    assert.ok(last.checkpointsRequested >= 1, 'the CHECKPOINT during the load is counted');
    assert.ok(last.indexBlocksHit + last.indexBlocksRead > 0, 'index buffer accesses counted');
    assert.ok(last.clientCpuSeconds > 0);
    assert.match(sampler.facts.settings.shared_buffers ?? '', /^\d+(kB|MB|GB)$/);
    const sb = await client.query(`SELECT pg_size_bytes(current_setting('shared_buffers'))::text AS b`);
    assert.equal(sampler.facts.sharedBuffersBytes, Number(sb.rows[0].b));
    assert.ok(sampler.facts.versionNum >= 150000);
  });

  it('samples on a timer and once at the end', async () => {
    const file = path.join(dir, 'small.txt');
    await writeNarrowRows({ rows: 3000, keys: 'sequential', seed: 1, out: file });
    await client.query(`CREATE TABLE ${SCHEMA}.timed (id bigint PRIMARY KEY, val integer, note text)`);
    const target = await openTarget({ db: testUrl() });
    const sampler = await Sampler.open(target, { every: { ms: 20 } });
    await load([{ file, format: 'text', table: 'timed', schema: SCHEMA }], { workers: 1, chunkBytes: 4096, create: false, truncate: false }, target, sampler);
    await new Promise((r) => setTimeout(r, 100));
    const samples = await sampler.stop();
    assert.ok(samples.length >= 2);
    assert.equal(samples[0]!.rowsLoaded, 0);
    assert.equal(samples.at(-1)!.rowsLoaded, 3000);
    assert.equal(samples.at(-1)!.rowsInTable, 3000);
    assert.equal(Number((await client.query(`SELECT count(*) AS n FROM ${SCHEMA}.timed`)).rows[0].n), 3000);
  });
});

describe('the wait looks, taken by the server in batches', () => {
  const prefix = 'pgsurge it-looks w';
  const batch = async (c: pg.Client, looks: number, everyMs: number): Promise<{ looks: number; pids: number[]; states: Map<string, number> }> => {
    const [n, pids, states, , , counts] = (await c.query<unknown[]>({ text: WAIT_LOOK_SQL, values: [[prefix], looks, everyMs / 1000], rowMode: 'array' })).rows[0]! as [number, number[] | null, (string | null)[] | null, unknown, unknown, number[] | null];
    const byState = new Map<string, number>();
    (states ?? []).forEach((s, i) => byState.set(s ?? 'null', (byState.get(s ?? 'null') ?? 0) + counts![i]!));
    return { looks: n, pids: pids ?? [], states: byState };
  };

  it('each look of one query sees the backends afresh (the snapshot is cleared), and a look without them ends the batch', async () => {
    const watched = await testClient();
    try {
      await watched.query(`SET application_name = '${prefix}1'`);
      const pid = (await watched.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p;
      // 20 looks 30 ms apart (~0.6 s) while the backend sleeps 0.25 s, then sits idle: both states in one query's looks
      const sleeping = watched.query('SELECT pg_sleep(0.25)');
      const seen = await batch(client, 20, 30);
      await sleeping;
      assert.equal(seen.looks, 20);
      assert.deepEqual(seen.pids, [pid]);
      assert.ok((seen.states.get('active') ?? 0) >= 3, JSON.stringify([...seen.states]));
      assert.ok((seen.states.get('idle') ?? 0) >= 3, JSON.stringify([...seen.states]));
      assert.equal((seen.states.get('active') ?? 0) + (seen.states.get('idle') ?? 0), 20);
      // the backend goes away 0.2 s into a batch of 50 looks (1.5 s): the batch ends at the first look without it
      const ending = new Promise((r) => setTimeout(r, 200)).then(() => watched.end());
      const ended = await batch(client, 50, 30);
      await ending;
      assert.ok(ended.looks > 1 && ended.looks < 50, `${ended.looks} looks`);
    } finally {
      await watched.end().catch(() => undefined);
    }
  });

  it('a WaitSampler counts the batches, the wait events and the backend CPU; its stop counts the batch in flight', async () => {
    const watched = await testClient();
    const looksClient = await testClient();
    try {
      await watched.query(`SET application_name = '${prefix}2'`);
      const sampler = new WaitSampler((fn) => fn(looksClient), [prefix], { everyMs: 20, local: true, versionNum: 150000 });
      await sampler.start();
      await watched.query('SELECT pg_sleep(0.7)');
      // on CPU for a while: the backend's CPU moves
      await watched.query('SELECT count(*) FROM generate_series(1, 3000000)');
      sampler.readCpuSoon();
      await watched.end();
      const summary = await sampler.stop();
      assert.ok(summary.looks >= 20, `${summary.looks} looks`);
      assert.ok(summary.waits.other >= 10, JSON.stringify(summary.waits)); // Timeout:PgSleep
      assert.ok(summary.events.some((e) => e.event === 'Timeout:PgSleep'), JSON.stringify(summary.events));
      assert.ok((summary.serverCpuSeconds ?? 0) > 0, `CPU ${summary.serverCpuSeconds}`);
    } finally {
      await watched.end().catch(() => undefined);
      await looksClient.end();
    }
  });
});
