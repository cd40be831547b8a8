import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { hashInt4, hashInt8, hashText } from '../../src/writer/citus/pg-hash.js';
import { prepareNodeSession } from '../../src/writer/citus/routed-chunk.js';
import { isShardMap, readShardMap, shardIndexOf, type ShardMap } from '../../src/writer/citus/shard-map.js';
import { citusLineitem, citusUrl, closeCitusSchema, openCitusSchema, workerNodes } from '../helpers/citus-db.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { damage, lineitemFields, prng, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { digest, rejectFileOf, runCli, tableRecords } from '../helpers/test-db.js';
import type { Chunk } from '../../src/core/chunk.js';
import { openTarget } from '../../src/cli/open-target.js';
import { load } from '../../src/load/load.js';
import { copyWriter, streamCopy } from '../../src/writer/copy-writer.js';

/**
 * Client-side routing (`--citus-route`, default auto): pgsurge hashes each row's
 * distribution value as Citus does and COPYs it straight into its shard on its node. The
 * hash is checked against Citus's own `get_shard_id_for_distribution_column`; loads are
 * checked by digest, by every row being in the shard Citus would put it in, and across
 * kill -9 (also between two nodes' commits of one chunk) and --resume.
 */
const SCHEMA = 'ct_route';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openCitusSchema(SCHEMA, 'pgsurge-ct-route-'));
});
after(async () => {
  await closeCitusSchema(SCHEMA, client, dir);
});

/** auto (the default) spelled out; an explicit --citus-route after target() wins. */
const target = (): string[] => ['--citus-route', 'auto', '--db', citusUrl(), '--schema', SCHEMA];

async function input(name: string, rows: number, bad: ReadonlyMap<number, (f: readonly string[]) => Buffer> = new Map()): Promise<{ file: string; expected: string; good: number }> {
  const fields = lineitemFields(rows);
  const file = path.join(dir, name);
  await fs.writeFile(file, Buffer.concat(fields.map((f, i) => bad.get(i)?.(f) ?? tblLine(f))));
  return { file, expected: digest(fields.filter((_, i) => !bad.has(i)).map(tableRecord)), good: rows - bad.size };
}

async function tableDigest(table: string): Promise<{ count: number; digest: string }> {
  const count = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`)).rows[0].n as number;
  return { count, digest: digest(await tableRecords(client, `${SCHEMA}.${table}`)) };
}

/** Rows of `table` that sit in a shard other than the one Citus would put them in: read on each node, shard by shard. */
async function misplacedRows(table: string, column: string): Promise<number> {
  const shards = await client.query<{ shardid: string; nodename: string; nodeport: number; name: string }>(
    `SELECT s.shardid::text, n.nodename, n.nodeport, '${SCHEMA}.' || quote_ident('${table}_' || s.shardid) AS name
       FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
      WHERE s.logicalrelid = '${SCHEMA}.${table}'::regclass`,
  );
  let misplaced = 0;
  let rows = 0;
  for (const s of shards.rows) {
    const node = new pg.Client({ host: s.nodename, port: s.nodeport, user: 'postgres', database: 'postgres' });
    await node.connect();
    try {
      const r = await node.query<{ bad: number; n: number }>(
        `SELECT count(*) FILTER (WHERE get_shard_id_for_distribution_column('${SCHEMA}.${table}', ${column}) <> $1::bigint)::int AS bad, count(*)::int AS n FROM ${s.name}`,
        [s.shardid],
      );
      misplaced += r.rows[0]!.bad;
      rows += r.rows[0]!.n;
    } finally {
      await node.end();
    }
  }
  assert.ok(rows > 0 || shards.rows.length > 0);
  return misplaced;
}

interface Summary {
  total: { read: number; loaded: number; rejected: number; skipped: number };
  citusRoutes?: { table: string; route: string; why: string }[];
}

/**
 * Moves the table's first shard to the other worker (block_writes). The move connects to the coordinator by
 * citus.local_hostname (localhost): the test cluster listens on its socket only, so it is set to the coordinator's node name.
 */
async function moveFirstShard(table: string): Promise<void> {
  const shard = (
    await client.query<{ shardid: string; from_name: string; from_port: number; to_name: string; to_port: number }>(
      `SELECT s.shardid::text, n.nodename AS from_name, n.nodeport AS from_port, o.nodename AS to_name, o.nodeport AS to_port
         FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
         JOIN pg_dist_node o ON o.groupid <> n.groupid AND o.groupid <> 0
        WHERE s.logicalrelid = '${SCHEMA}.${table}'::regclass ORDER BY s.shardid LIMIT 1`,
    )
  ).rows[0]!;
  await client.query("SELECT set_config('citus.local_hostname', nodename, false) FROM pg_dist_node WHERE groupid = 0");
  // A move leaves its source placement behind for a deferred cleanup, and a later move whose shards meet a cleanup
  // record still pending fails ("orphaned shard … could not be cleaned up"): clean up first, as an operator would.
  await client.query('CALL citus_cleanup_orphaned_resources()');
  await client.query("SELECT citus_move_shard_placement($1::bigint, $2, $3, $4, $5, shard_transfer_mode => 'block_writes')", [shard.shardid, shard.from_name, shard.from_port, shard.to_name, shard.to_port]);
}

const summaryOf = (stdout: string): Summary => JSON.parse(stdout.trim().split('\n').at(-1)!) as Summary;

describe('the Citus hash, as pgsurge reproduces it', () => {
  const values = (random: () => number): bigint[] => {
    const out = new Set<bigint>([0n, 1n, -1n, 2147483647n, -2147483648n, 2147483648n, -2147483649n, 9223372036854775807n, -9223372036854775808n, 4294967296n, -4294967296n]);
    while (out.size < 3000) {
      const magnitude = [1e3, 1e6, 2 ** 31, 2 ** 53][Math.floor(random() * 4)]!;
      out.add(BigInt(Math.floor((random() * 2 - 1) * magnitude)));
    }
    return [...out];
  };

  const shardsByCitus = async (table: string, vals: readonly string[]): Promise<string[]> =>
    (await client.query<{ s: string }>(`SELECT get_shard_id_for_distribution_column('${SCHEMA}.${table}', v)::text AS s FROM unnest($1::text[]) WITH ORDINALITY AS u(v, i) ORDER BY i`, [vals])).rows.map((r) => r.s);

  const mapOf = async (table: string): Promise<ShardMap> => {
    const oid = (await client.query<{ oid: number }>(`SELECT '${SCHEMA}.${table}'::regclass::oid::int AS oid`)).rows[0]!.oid;
    const map = await readShardMap(client, oid);
    assert.ok(isShardMap(map), JSON.stringify(map));
    return map;
  };

  for (const [type, shardCount] of [['int8', 32], ['int4', 17], ['int2', 5], ['text', 32], ['varchar', 7]] as const) {
    it(`${type} in ${shardCount} shards: the shard of each of thousands of values (negatives, edges) is get_shard_id_for_distribution_column's`, async () => {
      const table = `h_${type}`;
      await client.query(`CREATE TABLE ${SCHEMA}.${table} (k ${type})`);
      await client.query(`SELECT create_distributed_table('${SCHEMA}.${table}', 'k', shard_count => ${shardCount})`);
      const map = await mapOf(table);
      assert.equal(map.type, type);
      const random = prng(shardCount);
      let vals: string[];
      if (type === 'text' || type === 'varchar') {
        const alphabet = ['a', 'Z', '0', ' ', 'é', 'ß', '中', '🙂', '\\', '|', "'"];
        vals = ['', ' ', 'a', 'abcdefghijkl', 'abcdefghijklm'];
        while (vals.length < 3000) vals.push(Array.from({ length: Math.floor(random() * 30) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
      } else {
        const [lo, hi] = type === 'int2' ? [-32768n, 32767n] : type === 'int4' ? [-2147483648n, 2147483647n] : [-9223372036854775808n, 9223372036854775807n];
        vals = values(random).map((v) => (v < lo ? lo : v > hi ? hi : v).toString());
      }
      const citus = await shardsByCitus(table, vals);
      const ours = vals.map((v) => {
        const h = type === 'text' || type === 'varchar' ? hashText(Buffer.from(v, 'utf8')) : type === 'int8' ? hashInt8(BigInt(v)) : hashInt4(Number(v));
        return map.shards[shardIndexOf(map, h)]!.id;
      });
      const differ = vals.filter((_, i) => citus[i] !== ours[i]);
      assert.deepEqual(differ, [], `${differ.length} of ${vals.length} values placed differently`);
      assert.ok(new Set(ours).size === shardCount, 'the values reach every shard');
    });
  }

  it('a table Citus holds in a way pgsurge does not route says why (reference, another column type, several placements)', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.r_ref (k int)`);
    await client.query(`SELECT create_reference_table('${SCHEMA}.r_ref')`);
    await client.query(`CREATE TABLE ${SCHEMA}.r_num (k numeric)`);
    await client.query(`SELECT create_distributed_table('${SCHEMA}.r_num', 'k', shard_count => 4)`);
    const reason = async (t: string): Promise<string> => {
      const oid = (await client.query<{ oid: number }>(`SELECT '${SCHEMA}.${t}'::regclass::oid::int AS oid`)).rows[0]!.oid;
      const m = await readShardMap(client, oid);
      assert.ok(!isShardMap(m));
      return m.reason;
    };
    assert.match(await reason('r_ref'), /not hash-distributed/);
    assert.match(await reason('r_num'), /type .* whose hash pgsurge does not reproduce/);
    // varchar(3) stores 'abc  ' as 'abc' and Citus hashes that: not hashed from the input's bytes.
    await client.query(`CREATE TABLE ${SCHEMA}.r_vc (k varchar(3))`);
    await client.query(`SELECT create_distributed_table('${SCHEMA}.r_vc', 'k', shard_count => 4)`);
    assert.match(await reason('r_vc'), /its distribution column k is varchar\(3\)/);
    await fs.writeFile(path.join(dir, 'vc.txt'), 'abc  \nab\nxyz   \n');
    const r = await runCli(['load', path.join(dir, 'vc.txt'), '-t', 'r_vc', '--format', 'text', '--json', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(summaryOf(r.stdout).citusRoutes?.map((x) => x.route), ['coordinator']);
    assert.deepEqual((await client.query(`SELECT k FROM ${SCHEMA}.r_vc ORDER BY k`)).rows.map((x) => x.k), ['ab', 'abc', 'xyz']);
    assert.equal(await misplacedRows('r_vc', 'k'), 0);
  });
});

describe('loads routed to the shards by pgsurge', () => {
  for (const workers of [1, 3]) {
    it(`-w ${workers}: the table equals the input (digest), every row is in the shard Citus would pick, and the summary says the route`, async () => {
      const { file, expected, good } = await input(`route${workers}.tbl`, 6000);
      await citusLineitem(client, SCHEMA, `route${workers}`, 'distributed');
      const r = await runCli(['load', file, '-t', `route${workers}`, '-w', String(workers), '--chunk-size', '32KB', '--json', ...target()]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await tableDigest(`route${workers}`), { count: good, digest: expected });
      assert.equal(await misplacedRows(`route${workers}`, 'l_orderkey'), 0);
      const summary = summaryOf(r.stdout);
      assert.equal(summary.total.loaded, good);
      assert.deepEqual(summary.citusRoutes?.map((x) => [x.table, x.route]), [[`${SCHEMA}.route${workers}`, 'client']]);
      assert.match(summary.citusRoutes![0]!.why, /hash-distributed by l_orderkey \(int8\), 8 shards on 2 nodes/);
      // One part row per (chunk, node) on the nodes, one ledger row per chunk on the coordinator.
      const chunks = (await client.query<{ n: number; rows: number }>("SELECT count(*)::int AS n, sum(rows_loaded)::int AS rows FROM pgsurge.chunks WHERE table_name = $1", [`${SCHEMA}.route${workers}`])).rows[0]!;
      assert.equal(chunks.rows, good);
      // node_parts.table_oid is the coordinator's oid of the table (a worker's own copy of the metadata has another).
      const oid = (await client.query<{ oid: number }>(`SELECT '${SCHEMA}.route${workers}'::regclass::oid::int AS oid`)).rows[0]!.oid;
      const parts = await client.query<{ result: string }>(`SELECT result FROM run_command_on_workers($$SELECT coalesce(sum(rows_loaded), 0) FROM pgsurge.node_parts WHERE table_oid = ${oid}$$)`);
      assert.equal(parts.rows.reduce((a, p) => a + Number(p.result), 0), good);
    });
  }

  it('a generated column before the distribution column: COPY without a column list leaves it out, and every row is in its shard', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.r_gen (g int GENERATED ALWAYS AS (k * 2) STORED, k int, v text)`);
    await client.query(`SELECT create_distributed_table('${SCHEMA}.r_gen', 'k', shard_count => 8)`);
    const file = path.join(dir, 'gen.txt');
    await fs.writeFile(file, Array.from({ length: 200 }, (_, i) => `${i}\t${i * 7919}\n`).join(''));
    const r = await runCli(['load', file, '-t', 'r_gen', '--format', 'text', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await misplacedRows('r_gen', 'k'), 0);
    const rows = await client.query<{ n: number; right: number }>(`SELECT count(*)::int AS n, count(*) FILTER (WHERE g = k * 2 AND v = (k * 7919)::text)::int AS right FROM ${SCHEMA}.r_gen`);
    assert.deepEqual(rows.rows[0], { n: 200, right: 200 });
    // Citus finds a row by its distribution value in the one shard it hashes to.
    assert.equal((await client.query(`SELECT v FROM ${SCHEMA}.r_gen WHERE k = 5`)).rows[0]?.v, String(5 * 7919));
  });

  it('--citus-route coordinator loads through the coordinator, and says so', async () => {
    const { file, expected, good } = await input('coord.tbl', 2000);
    await citusLineitem(client, SCHEMA, 'coord', 'distributed');
    const r = await runCli(['load', file, '-t', 'coord', '-w', '2', '--chunk-size', '32KB', '--json', ...target(), '--citus-route', 'coordinator']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest('coord'), { count: good, digest: expected });
    assert.deepEqual(summaryOf(r.stdout).citusRoutes?.map((x) => [x.route, x.why]), [['coordinator', '--citus-route coordinator']]);
  });

  it('--citus-route client refuses a table it cannot route (a reference table), before anything changed (exit 2)', async () => {
    const { file } = await input('refc.tbl', 100);
    await citusLineitem(client, SCHEMA, 'refc', 'reference');
    const r = await runCli(['load', file, '-t', 'refc', ...target(), '--citus-route', 'client']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--citus-route client: ct_route\.refc cannot be routed by pgsurge: it is not hash-distributed/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.refc`)).rows[0].n, 0);
    // auto sends it through the coordinator.
    const auto = await runCli(['load', file, '-t', 'refc', '--json', ...target()]);
    assert.equal(auto.code, 0, auto.stderr);
    assert.deepEqual(summaryOf(auto.stdout).citusRoutes?.map((x) => [x.route, x.why]), [['coordinator', 'it is not hash-distributed']]);
  });

  it('--no-ledger is not routed: auto loads through the coordinator and says why; --citus-route client refuses it (exit 2, nothing loaded)', async () => {
    const { file, expected, good } = await input('noledger.tbl', 2000);
    await citusLineitem(client, SCHEMA, 'noledger', 'distributed');
    const refused = await runCli(['load', file, '-t', 'noledger', '--no-ledger', ...target(), '--citus-route', 'client']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--citus-route client: ct_route\.noledger cannot be routed by pgsurge: --no-ledger loads through the coordinator/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.noledger`)).rows[0].n, 0);
    const r = await runCli(['load', file, '-t', 'noledger', '-w', '2', '--chunk-size', '32KB', '--no-ledger', '--json', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest('noledger'), { count: good, digest: expected });
    const routes = summaryOf(r.stdout).citusRoutes;
    assert.deepEqual(routes?.map((x) => x.route), ['coordinator']);
    assert.match(routes![0]!.why, /^--no-ledger loads through the coordinator/);
  });

  it('a node pgsurge cannot reach: auto loads an input not routed yet through the coordinator and says why; --citus-route client stops (exit 2, nothing loaded)', async () => {
    const { file, expected, good } = await input('unreach.tbl', 2000);
    await citusLineitem(client, SCHEMA, 'unreach', 'distributed');
    const env = { PGSURGE_FAULT_CITUS_UNREACHABLE: '1' };
    const refused = await runCli(['load', file, '-t', 'unreach', '--load-id', 'ct-unreach-c', ...target(), '--citus-route', 'client'], { env });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /--citus-route client: pgsurge cannot use its node .*: connecting failed/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.unreach`)).rows[0].n, 0);
    const r = await runCli(['load', file, '-t', 'unreach', '-w', '2', '--chunk-size', '32KB', '--load-id', 'ct-unreach', '--json', ...target()], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest('unreach'), { count: good, digest: expected });
    const routes = summaryOf(r.stdout).citusRoutes;
    assert.deepEqual(routes?.map((x) => x.route), ['coordinator']);
    assert.match(routes![0]!.why, /^pgsurge cannot use its node/);
    assert.equal((await client.query("SELECT count(*)::int AS n FROM pgsurge.routed_files WHERE load_id = 'ct-unreach'")).rows[0].n, 0);
  });

  it('bad rows (a bad date a worker refuses, a NULL, an unreadable and an out-of-range distribution value) are rejected with their lines; read = loaded + rejected', async () => {
    const key = (v: string) => (f: readonly string[]) => tblLine([v, ...f.slice(1)]);
    const bad = new Map<number, (f: readonly string[]) => Buffer>([
      [5, (f) => damage(f, 'bad date', tblLine)],
      [900, key('\\N')],
      [1800, key('12x')],
      [2500, key('99999999999999999999')],
      [3999, (f) => damage(f, 'bad date', tblLine)],
    ]);
    const { file, expected, good } = await input('bad.tbl', 4000, bad);
    await citusLineitem(client, SCHEMA, 'bad', 'distributed');
    const r = await runCli(['load', file, '-t', 'bad', '-w', '2', '--chunk-size', '32KB', '--json', ...target()]);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(await tableDigest('bad'), { count: good, digest: expected });
    const log = await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8');
    const rows = log.trim().split('\n').slice(2).map((l) => l.split('\t'));
    assert.deepEqual(rows.map((l) => Number(l[1])), [6, 901, 1801, 2501, 4000]);
    assert.match(log, /cannot be NULL/);
    assert.match(log, /invalid input syntax for type bigint: "12x"/);
    assert.match(log, /out of range for type bigint/);
    // The reject file holds the rows verbatim, in input order.
    const rejected = (await fs.readFile(rejectFileOf(r), 'utf8')).trim().split('\n');
    const lines = (await fs.readFile(file, 'utf8')).split('\n');
    assert.deepEqual(rejected, [5, 900, 1800, 2500, 3999].map((i) => lines[i]));
    const summary = summaryOf(r.stdout);
    assert.equal(summary.total.read, 4000);
    assert.equal(summary.total.read, summary.total.loaded + summary.total.rejected + summary.total.skipped);
    assert.equal(summary.total.rejected, 5);
  });
});

describe("the count guard on a Citus table: the server's count proves every chunk", () => {
  const ids = Array.from({ length: 3000 }, (_, i) => i + 1);
  /** The record the marker is put before. */
  const BAD = 1500;
  /** `\.` before record BAD in COPY text data (a part's, or a shard's slice of it): the COPY ends there, without an error. */
  const withMarker = (data: Buffer): Buffer => {
    const head = `key${BAD}\t`;
    const nl = data.indexOf(`\n${head}`);
    const at = data.subarray(0, head.length).toString() === head ? 0 : nl < 0 ? -1 : nl + 1;
    return at < 0 ? data : Buffer.concat([data.subarray(0, at), Buffer.from('\\.\n'), data.subarray(at)]);
  };

  for (const route of ['client', 'coordinator'] as const) {
    it(`--citus-route ${route}: a \\. put in the COPY data after framing (${route === 'client' ? "a shard's" : "the coordinator's"} COPY ends there, without an error): that record is rejected alone with what the server did; every other row loads, read = loaded + rejected, the ledger counts the table's rows`, async () => {
      const table = `guard_${route}`;
      await client.query(`CREATE TABLE ${SCHEMA}.${table} (k text, v text)`);
      await client.query(`SELECT create_distributed_table('${SCHEMA}.${table}', 'k', shard_count => 4)`);
      const file = path.join(dir, `${table}.txt`);
      await fs.writeFile(file, ids.map((id) => `key${id}\tvalue ${id}\n`).join(''));
      // A file's `\.` line never reaches the server (the framer rejects it): the marker is put in the data sent, on the
      // client route into a shard's COPY (the rows pgsurge routes), on the coordinator route into the chunk's COPY.
      const trouble = route === 'client'
        ? { shardCopy: (c: pg.Client, sql: string, data: Buffer) => streamCopy(c, sql, withMarker(data)) }
        : { writer: { ...copyWriter, writeRows: (c: pg.Client, chunk: Chunk) => copyWriter.writeRows(c, { ...chunk, data: withMarker(chunk.data) }), ...(copyWriter.beginAndWriteRows ? { beginAndWriteRows: (c: pg.Client, chunk: Chunk) => copyWriter.beginAndWriteRows!(c, { ...chunk, data: withMarker(chunk.data) }) } : {}) } };
      const target = await openTarget({ db: citusUrl() });
      const summary = await load([{ file, format: 'text', table, schema: SCHEMA }], { workers: 2, chunkBytes: 16 * 1024, create: false, truncate: false, loadId: `ct-${table}`, citusRoute: route, rejectDir: dir, ...trouble }, target).finally(() => target.release());
      assert.deepEqual(summary.citusRoutes?.map((x) => x.route), [route]);
      const { read, loaded, rejected, skipped } = summary.total;
      assert.deepEqual({ read, loaded, rejected, skipped }, { read: 3000, loaded: 2999, rejected: 1, skipped: 0 });
      assert.deepEqual(await tableDigest(table), { count: 2999, digest: digest(ids.filter((id) => id !== BAD).map((id) => `key${id}|value ${id}`)) });
      const rejectFile = summary.rejectFiles?.[0]?.path;
      assert.ok(rejectFile !== undefined, 'the summary names the reject file');
      assert.equal(await fs.readFile(rejectFile, 'utf8'), `key${BAD}\tvalue ${BAD}\n`);
      assert.match(await fs.readFile(`${rejectFile}.log`, 'utf8'), new RegExp(`\\t${BAD}\\t.*the server stored 0 rows for this record, without an error`));
      const ledger = (await client.query<{ loaded: number; rejected: number }>('SELECT sum(rows_loaded)::int AS loaded, sum(rows_rejected)::int AS rejected FROM pgsurge.chunks WHERE load_id = $1', [`ct-${table}`])).rows[0]!;
      assert.deepEqual(ledger, { loaded: 2999, rejected: 1 });
    });
  }

  it('--citus-route client: a \\. line in the file never reaches a shard: the framer rejects it, every other row is routed', async () => {
    const table = 'marker_client';
    await client.query(`CREATE TABLE ${SCHEMA}.${table} (k text, v text)`);
    await client.query(`SELECT create_distributed_table('${SCHEMA}.${table}', 'k', shard_count => 4)`);
    const lines = ids.map((id) => `key${id}\tvalue ${id}\n`);
    lines.splice(1500, 0, '\\.\n');
    const file = path.join(dir, `${table}.txt`);
    await fs.writeFile(file, lines.join(''));
    const r = await runCli(['load', file, '-t', table, '-f', 'text', '-w', '2', '--chunk-size', '16KB', '--load-id', `ct-${table}`, '--json', ...target(), '--citus-route', 'client']);
    assert.equal(r.code, 3, r.stderr);
    const summary = summaryOf(r.stdout);
    assert.deepEqual(summary.citusRoutes?.map((x) => x.route), ['client']);
    assert.deepEqual(summary.total, { ...summary.total, read: 3001, loaded: 3000, rejected: 1, skipped: 0 });
    assert.deepEqual(await tableDigest(table), { count: 3000, digest: digest(ids.map((id) => `key${id}|value ${id}`)) });
    assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), '\\.\n');
    assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), /\t1501\t.*end-of-data marker in the middle of the file/);
  });
});

describe('node sessions', () => {
  it("a node whose database says synchronous_commit = off (or local): the node session commits with on; a stronger setting is kept", async () => {
    const [w] = await workerNodes(client);
    const node = new pg.Client({ host: w!.host, port: w!.port, user: 'postgres', database: 'postgres' });
    await node.connect();
    const sessionOn = async (): Promise<{ before: string; after: string }> => {
      const s = new pg.Client({ host: w!.host, port: w!.port, user: 'postgres', database: 'postgres' });
      await s.connect();
      try {
        const before = (await s.query<{ v: string }>("SELECT current_setting('synchronous_commit') AS v")).rows[0]!.v;
        assert.equal(typeof (await prepareNodeSession(s)), 'number');
        return { before, after: (await s.query<{ v: string }>("SELECT current_setting('synchronous_commit') AS v")).rows[0]!.v };
      } finally {
        await s.end();
      }
    };
    try {
      // (A worker refuses ALTER ROLE: roles are the coordinator's to change.)
      await node.query('ALTER DATABASE postgres SET synchronous_commit = off');
      assert.deepEqual(await sessionOn(), { before: 'off', after: 'on' });
      await node.query('ALTER DATABASE postgres SET synchronous_commit = local');
      assert.deepEqual(await sessionOn(), { before: 'local', after: 'on' });
      await node.query('ALTER DATABASE postgres SET synchronous_commit = remote_apply');
      assert.deepEqual(await sessionOn(), { before: 'remote_apply', after: 'remote_apply' });
    } finally {
      await node.query('ALTER DATABASE postgres RESET synchronous_commit').catch(() => undefined);
      await node.end();
    }
  });
});

describe('routed loads exactly once across crashes', () => {
  it('kill -9 of pgsurge at random moments, then --resume: the table equals the input, once (digest and counts)', async () => {
    const { file, expected } = await input('killed.tbl', 8000);
    const random = prng(20261202);
    for (let round = 0; round < 3; round++) {
      await citusLineitem(client, SCHEMA, 'killed', 'distributed');
      const loadId = `ct-rkill-${round}`;
      const run = startCli(['load', file, '-t', 'killed', '-w', '3', '--chunk-size', '8KB', '--load-id', loadId, ...target()]);
      await run.waitFor(/pgsurge: load ct-rkill-\d+/);
      await sleep(100 + Math.floor(random() * 700));
      run.child.kill('SIGKILL');
      await run.exited;
      const resumed = await runCli(['load', file, '-t', 'killed', '-w', '2', '--chunk-size', round === 2 ? '13KB' : '8KB', '--load-id', loadId, '--json', ...(round === 0 ? [] : ['--resume']), ...target()]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(await tableDigest('killed'), { count: 8000, digest: expected }, `round ${round}`);
      const ledger = (await client.query<{ rows: number }>('SELECT sum(rows_loaded)::int AS rows FROM pgsurge.chunks WHERE load_id = $1', [loadId])).rows[0]!;
      assert.equal(ledger.rows, 8000, `round ${round}: the coordinator's ledger counts every row once`);
    }
  });

  it('a chunk committed on one node and not the other (killed between the two commits), resumed: each node loads only its missing part', async () => {
    const { file, expected } = await input('partly.tbl', 3000);
    await citusLineitem(client, SCHEMA, 'partly', 'distributed');
    const args = ['load', file, '-t', 'partly', '-w', '1', '--chunk-size', '16KB', '--load-id', 'ct-partly', '--json', ...target()];
    // One worker, parts one after another: chunk 1's two parts, then chunk 2's first, then killed.
    const killed = await runCli(args, { env: { PGSURGE_FAULT_CITUS_KILL_AFTER_PART: '3' } });
    assert.equal(killed.code, null, `killed by SIGKILL: ${killed.stderr}`);
    const coordinatorChunks = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = 'ct-partly'")).rows[0]!.n;
    assert.equal(coordinatorChunks, 1, 'only the first chunk is whole');
    const parts = await client.query<{ result: string }>(`SELECT result FROM run_command_on_workers($$SELECT count(*) FROM pgsurge.node_parts WHERE load_id = 'ct-partly'$$)`);
    assert.deepEqual(parts.rows.map((p) => Number(p.result)).sort(), [1, 2], 'chunk 2 is on one node only');
    const partial = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.partly`)).rows[0]!.n;
    assert.ok(partial > 0 && partial < 3000);
    const resumed = await runCli([...args, '--resume']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await tableDigest('partly'), { count: 3000, digest: expected });
    // The first chunk counts as an earlier run's; the partly committed one is read again in full (its committed part counted as loaded).
    const summary = summaryOf(resumed.stdout) as Summary & { files: { earlier: { loaded: number } }[] };
    assert.equal(summary.total.read + summary.files[0]!.earlier.loaded, 3000);
    assert.equal(summary.total.loaded, summary.total.read);
    assert.equal((await client.query<{ rows: number }>("SELECT sum(rows_loaded)::int AS rows FROM pgsurge.chunks WHERE load_id = 'ct-partly'")).rows[0]!.rows, 3000);
  });

  it('a resume that reads the input another way (--columns reordered) is refused (exit 2); resumed as begun, the table equals the input', async () => {
    const { file, expected } = await input('respec.tbl', 3000);
    await citusLineitem(client, SCHEMA, 'respec', 'distributed');
    const args = ['load', file, '-t', 'respec', '-w', '1', '--chunk-size', '16KB', '--load-id', 'ct-respec', ...target()];
    const killed = await runCli(args, { env: { PGSURGE_FAULT_CITUS_KILL_AFTER_PART: '3' } });
    assert.equal(killed.code, null, killed.stderr);
    const cols = (await client.query<{ a: string }>(`SELECT attname AS a FROM pg_attribute WHERE attrelid = '${SCHEMA}.respec'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`)).rows.map((r) => r.a);
    const before = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.respec`)).rows[0].n as number;
    const swapped = [cols[1], cols[0], ...cols.slice(2)].join(',');
    const refused = await runCli([...args, '--resume', '--columns', swapped]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /was loaded into ct_route\.respec by load ct-respec read with other options \(--columns: not given → l_partkey,l_orderkey/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.respec`)).rows[0].n, before);
    // The same column list spelled out is the same spec.
    const resumed = await runCli([...args, '--resume', '--columns', cols.join(',')]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await tableDigest('respec'), { count: 3000, digest: expected });
  });

  it('a shard move started during a routed load waits for the load to end: the rows are all there, in their shards', async () => {
    const { file, expected } = await input('held.tbl', 6000);
    await citusLineitem(client, SCHEMA, 'held', 'distributed');
    const shards = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_dist_shard WHERE logicalrelid = '${SCHEMA}.held'::regclass`)).rows[0]!.n;
    const run = startCli(['load', file, '-t', 'held', '-w', '1', '--chunk-size', '4KB', '--load-id', 'ct-held', '--json', ...target()]);
    // The guard's session holds every shard's metadata lock (Citus's advisory lock class 8, ADV_LOCKTAG_CLASS_CITUS_SHARD_METADATA) in ShareLock.
    let held = 0;
    for (let i = 0; i < 1000 && held < shards; i++) {
      held = (
        await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid)
            WHERE l.locktype = 'advisory' AND l.objsubid = 8 AND l.mode = 'ShareLock' AND l.granted AND a.application_name = 'pgsurge ct-held w0g'`,
        )
      ).rows[0]!.n;
      if (held < shards) await sleep(10);
    }
    assert.equal(held, shards, `every shard of the routed table is held while the load runs; the load said: ${run.stderr().slice(0, 1500)}`);
    await client.query("SET lock_timeout = '300ms'");
    await assert.rejects(moveFirstShard('held'), /lock timeout/);
    await client.query('RESET lock_timeout');
    const done = await run.exited;
    assert.equal(done.code, 0, run.stderr());
    const routes = summaryOf(run.stdout()).citusRoutes ?? [];
    assert.match(routes[0]?.why ?? '', /shard moves wait for the load to end/);
    assert.deepEqual(await tableDigest('held'), { count: 6000, digest: expected });
    assert.equal(await misplacedRows('held', 'l_orderkey'), 0);
    // Released at the end: the move now goes through, and the rows stay whole.
    await moveFirstShard('held');
    assert.deepEqual(await tableDigest('held'), { count: 6000, digest: expected });
  });

  it('a shard moved between the runs of a load: the resume refuses (exit 2) and says what to do', async () => {
    const { file } = await input('moved.tbl', 3000);
    await citusLineitem(client, SCHEMA, 'moved', 'distributed');
    const args = ['load', file, '-t', 'moved', '-w', '1', '--chunk-size', '16KB', '--load-id', 'ct-moved', ...target()];
    const killed = await runCli(args, { env: { PGSURGE_FAULT_CITUS_KILL_AFTER_PART: '3' } });
    assert.equal(killed.code, null, killed.stderr);
    await moveFirstShard('moved');
    const resumed = await runCli([...args, '--resume']);
    assert.equal(resumed.code, 2, resumed.stderr);
    assert.match(resumed.stderr, /the shards of ct_route\.moved moved since this load began/);
    assert.match(resumed.stderr, /--truncate/);
  });
});
