/**
 * How close a one-worker load comes to what one backend can absorb at all. The server's
 * processes are pinned to CPU 0 and every client (psql, the minimal Node sender, pgsurge,
 * this script) to CPU 1, so the client has a core of its own; when `taskset` cannot pin,
 * the bench says so and runs unpinned (`--pin off` asks for that). For each table:
 *
 *   - the limits: the server's own `COPY t FROM '<file>'` from a binary file and from a
 *     text file, both written by `COPY t TO` first (no protocol, no client);
 *   - psql `\copy` of the text input (dbgen's `.tbl` without its trailing `|`);
 *   - the minimal Node sender (bench/copy-sender.ts: pg + pg-copy-streams piping the same
 *     file as it is): what Node and the protocol cost, beside psql;
 *   - pgsurge load -w 1 on each wire: auto (what it picks is printed), text, binary.
 *
 * Variants run in a fresh random order each round, each into the emptied table (TRUNCATE,
 * CHECKPOINT). Per variant: seconds per round, median rows/s, the medians of the
 * per-round ratios to psql and to the limit (the binary file); the COPY backend's time on a
 * CPU, asleep (waiting for its client or for I/O) and waiting for a CPU (other work on its
 * core), from /proc/<pid>/schedstat, which a busy machine leaves readable; the server's CPU seconds
 * (its processes', from /proc; the looks' own backend left out) and how busy that made
 * its core, the client's CPU seconds, and the share of looks at the load's backend that
 * found it waiting for its client (ClientRead, or idle between statements), from
 * pgsurge's wait sampler (src/metrics/wait-sampler.ts) looking every 10 ms.
 * Tables: lineitem (dbgen, `auto` sends binary), orders (dbgen, `auto` sends text) and
 * narrow (`pgsurge gen narrow`, the decay table's rows, scale × 10M rows, no index).
 *
 * With `--socket-fill-ms <n>`, also how full the server's end of the socket was (`ss -xn`
 * every n ms, a process each time: it costs the client's core a little, so it is off by
 * default; the readings' own CPU is taken out of the client's): the share of readings that
 * found nothing queued for the backend.
 *
 *   node dist/bench/limit.js [--scale 1] [--repeat 3] [--tables lineitem,orders,narrow] [--pin on|off] [--socket-fill-ms 0] [--pg-bin system|embedded|<dir>]
 */
import './lib/usage.js';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { generateDbt3 } from '../src/datasets/dbt3/generate.js';
import { generateNarrow } from '../src/datasets/narrow/generate.js';
import { createTableSql } from '../src/datasets/table-ddl.js';
import { WaitSampler } from '../src/metrics/wait-sampler.js';
import { totalWaits } from '../src/metrics/wait-classes.js';
import { processCpuSeconds } from '../src/metrics/proc-stat.js';
import { arg, describeMachine, median, psqlPath } from './lib/machine.js';
import { run } from './lib/run.js';
import { measureCpu, pinServer, postmasterPid } from './lib/server-cpu.js';
import { watchBackends, type BackendTime } from './lib/backend-sched.js';
import { watchSocketFill, type SocketFill } from './lib/socket-fill.js';
import { stripTrailingPipe } from './lib/tbl-strip.js';
import { benchCommandLine, openBenchCluster } from './lib/bench-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pgsurge = path.join(root, 'bin', 'pgsurge.js');
const sender = path.join(root, 'dist', 'bench', 'copy-sender.js');
const scale = Number(arg('scale', '1'));
const repeat = Number(arg('repeat', '3'));
const tables = arg('tables', 'lineitem,orders,narrow').split(',').map((t) => t.trim()).filter(Boolean);
const pgBin = arg('pg-bin', systemBinDirs().length > 0 ? 'system' : 'embedded');
const psql = psqlPath();
const LOOK_EVERY_MS = 10;
/** `--socket-fill-ms <n>`: read how full the load's socket is every n ms (`ss`, a process per reading: off by default). */
const socketFillMs = Number(arg('socket-fill-ms', '0'));
const LIMIT = 'server COPY, binary file';
const PSQL = 'psql \\copy';

for (const t of tables) if (!['lineitem', 'orders', 'narrow'].includes(t)) throw new Error(`--tables: lineitem, orders or narrow, got ${t}`);

/** Whether `taskset` can pin here (a container may refuse it). */
function canPin(): boolean {
  if (arg('pin', 'on') === 'off' || os.availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-c', '1', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const pin = canPin();
/** A client command, on CPU 1 when pinning. */
const client = (cmd: string, args: readonly string[]): Promise<unknown> => (pin ? run('taskset', ['-c', '1', cmd, ...args]) : run(cmd, args));

interface Run {
  readonly seconds: number;
  readonly serverCpu: number;
  readonly clientCpu: number;
  /** Share of the looks at the load's backend that found it waiting for its client. */
  readonly clientWait: number;
  readonly looks: number;
  /** The load's busiest backend (its COPY's): on CPU, waiting for a CPU, asleep. */
  readonly backend: BackendTime | undefined;
  readonly fill?: SocketFill | undefined;
  readonly wire?: string;
}

interface Variant {
  /** application_name prefix of the load's backend, for the looks. */
  readonly prefix: (round: number) => string;
  readonly run: (round: number) => Promise<string | undefined>;
}

/** The input of one table, its reference files and its variants. */
async function prepare(table: string, work: string, url: string, admin: pg.Client, dataDir: string): Promise<{ rows: number; variants: Record<string, Variant>; describe: string; files: string[] }> {
  let input: string;
  let psqlFile: string;
  let rows: number;
  let options = '';
  if (table === 'narrow') {
    input = path.join(work, 'narrow.txt');
    rows = Math.round(scale * 10_000_000);
    await generateNarrow({ rows, keys: 'sequential', format: 'text', out: input });
    psqlFile = input;
  } else {
    const f = (await generateDbt3({ scale, outDir: work, tables: [table as 'lineitem'] })).files.find((x) => x.table === table)!;
    input = f.path;
    rows = f.rows;
    psqlFile = path.join(work, `${table}.psql`);
    await stripTrailingPipe(input, psqlFile);
    options = " with (delimiter '|')";
  }
  await admin.query(`DROP TABLE IF EXISTS ${table}`);
  await admin.query(createTableSql(table)!);
  // The server's files, written by the server (into its data directory, where it may write) from a first load by psql.
  await run(psql, [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ${table} from '${psqlFile}'${options}`]);
  const bin = path.join(dataDir, `limit-${table}.bin`);
  const txt = path.join(dataDir, `limit-${table}.txt`);
  await admin.query(`COPY ${table} TO '${bin}' (FORMAT binary)`);
  await admin.query(`COPY ${table} TO '${txt}'`);
  const size = async (f: string): Promise<string> => `${((await fs.stat(f)).size / 1e6).toFixed(0)} MB`;
  const describe = `${table}: ${rows.toLocaleString('en-US')} rows; input ${path.basename(input)} ${await size(input)}, psql's copy ${await size(psqlFile)}, server's binary file ${await size(bin)}, text file ${await size(txt)}`;

  const serverCopy = (file: string, how: string): Variant => ({
    prefix: () => 'limit-server-copy',
    run: async () => {
      const c = new pg.Client({ connectionString: url, application_name: 'limit-server-copy' });
      c.on('error', () => undefined); // a failed COPY rejects its query; the connection's own error adds nothing
      await c.connect();
      try {
        await c.query(`COPY ${table} FROM '${file}'${how}`);
      } finally {
        await c.end();
      }
      return undefined;
    },
  });
  const loadId = (wire: string, round: number): string => `limit-${table}-${wire}-${round}`;
  const load = (wire: string): Variant => ({
    prefix: (round) => `pgsurge ${loadId(wire, round)} w`,
    run: async (round) => {
      // A load id of its own per run, into the table the bench emptied: no --truncate (psql is not timed truncating either); --json: the last line says which wire ran.
      const r = (await client(process.execPath, [pgsurge, 'load', input, '--db', url, '-w', '1', '--wire', wire, '--json', '--load-id', loadId(wire, round)])) as { stdout: string };
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { wire?: { wire: string }[] };
      return summary.wire?.map((w) => w.wire).join('+');
    },
  });
  const variants: Record<string, Variant> = {
    [LIMIT]: serverCopy(bin, ' (FORMAT binary)'),
    'server COPY, text file': serverCopy(txt, ''),
    [PSQL]: {
      prefix: () => 'psql',
      run: async () => {
        await client(psql, [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ${table} from '${psqlFile}'${options}`]);
        return undefined;
      },
    },
    'node sender (pg-copy-streams)': {
      prefix: () => 'limit-node-sender',
      run: async () => {
        await client(process.execPath, [sender, url, psqlFile, `COPY ${table} FROM STDIN${options.replace(' with', '')}`]);
        return undefined;
      },
    },
    'pgsurge -w1 auto': load('auto'),
    'pgsurge -w1 --wire text': load('text'),
    'pgsurge -w1 --wire binary': load('binary'),
  };
  await admin.query(`TRUNCATE ${table}`);
  return { rows, variants, describe, files: [input, psqlFile, bin, txt] };
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function describeBackend(b: BackendTime | undefined): string {
  if (b === undefined) return 'backend not seen';
  return `backend ${b.seconds.toFixed(2)} s: on CPU ${b.run.toFixed(2)}, waiting for a CPU ${b.queue.toFixed(2)}, asleep ${b.asleep.toFixed(2)} (${b.sleeps} sleeps)`;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

const { work, cluster } = await openBenchCluster('pgsurge-bench-limit-', pgBin);
try {
  console.log(benchCommandLine('limit'));
  console.log(`# machine: ${describeMachine()}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await cluster.start({ autovacuum: 'off' });
  const url = cluster.url();
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  admin.on('error', (e) => console.error(`bench: the admin connection failed: ${e.message}`));
  const watcher = new pg.Client({ ...cluster.connection(), application_name: 'limit-looks' });
  watcher.on('error', (e) => console.error(`bench: the looks' connection failed: ${e.message}`));
  await watcher.connect();
  const watcherPid = (await watcher.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const versionNum = Number((await admin.query<{ v: string }>('SHOW server_version_num')).rows[0]!.v);
  const postmaster = postmasterPid(cluster.dataDir);
  console.log(`# server: ${cluster.binaries.version} (${cluster.binaries.source}), managed cluster, autovacuum off, Unix socket`);
  console.log(
    pin
      ? '# pinned: the server\'s processes to CPU 0, the clients (and this script) to CPU 1'
      : `# NOT pinned (${arg('pin', 'on') === 'off' ? '--pin off' : 'taskset could not pin here'}): server and clients share the cores`,
  );
  if (pin) {
    pinServer(postmaster, '0');
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  }
  const summaries: string[] = [];
  for (const table of tables) {
    const { rows, variants, describe, files } = await prepare(table, work, url, admin, cluster.dataDir);
    console.log(`\n## ${describe}`);
    const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
    for (let round = 1; round <= repeat; round++) {
      for (const name of shuffled(Object.keys(variants))) {
        const v = variants[name]!;
        await admin.query(`TRUNCATE ${table}`);
        await admin.query('CHECKPOINT');
        const sampler = new WaitSampler((fn) => fn(watcher), [v.prefix(round)], { everyMs: LOOK_EVERY_MS, local: true, versionNum });
        const looker0 = processCpuSeconds(watcherPid) ?? 0;
        const watch = watchBackends(postmaster);
        // The server's own COPY sends nothing through the socket.
        const fillWatch = socketFillMs > 0 && !name.startsWith('server COPY') ? watchSocketFill(path.join(cluster.socketDir, `.s.PGSQL.${cluster.port}`), socketFillMs) : undefined;
        const started = performance.now();
        const measured = await measureCpu(postmaster, async () => {
          await sampler.start();
          try {
            return await v.run(round);
          } finally {
            await sampler.stop();
          }
        });
        const seconds = (performance.now() - started) / 1000;
        const backend = watch.stop();
        const fill = await fillWatch?.stop();
        const waits = await sampler.stop();
        const serverCpu = measured.serverCpu - ((processCpuSeconds(watcherPid) ?? 0) - looker0);
        const count = Number((await admin.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
        if (count !== rows) throw new Error(`${name} loaded ${count} rows into ${table}, expected ${rows}`);
        const looks = totalWaits(waits.waits);
        const r: Run = { seconds, serverCpu, clientCpu: measured.clientCpu - (fill?.cpuSeconds ?? 0), clientWait: looks > 0 ? waits.waits.client / looks : NaN, looks, backend, fill, ...(measured.result !== undefined ? { wire: measured.result } : {}) };
        runs[name]!.push(r);
        console.log(
          `round ${round} ${name.padEnd(28)} ${seconds.toFixed(2).padStart(7)} s ${fmt(rows / seconds).padStart(10)} rows/s  server CPU ${serverCpu.toFixed(2)} s (busy ${((100 * serverCpu) / seconds).toFixed(0)}%)  client CPU ${r.clientCpu.toFixed(2)} s  waiting on the client ${(100 * r.clientWait).toFixed(1)}% of ${looks} looks  ${describeBackend(backend)}${fill && fill.readings > 0 ? `  socket empty in ${(100 * fill.empty).toFixed(1)}% of ${fill.readings} readings, median ${(fill.medianBytes / 1024).toFixed(0)} KB queued` : ''}${r.wire ? `  wire ${r.wire}` : ''}`,
        );
      }
    }
    const ratio = (a: string, b: string): number => median(runs[a]!.map((r, i) => runs[b]![i]!.seconds / r.seconds));
    const lines = [
      `### ${describe}`,
      '',
      `| variant | seconds | rows/s | vs psql | vs the limit | backend on CPU s | backend asleep | backend waiting for a CPU | looks waiting on the client | server CPU s (busy) | client CPU s |${socketFillMs > 0 ? ' socket empty |' : ''}`,
      `|---|---|---|---|---|---|---|---|---|---|---|${socketFillMs > 0 ? '---|' : ''}`,
    ];
    for (const [name, rs] of Object.entries(runs)) {
      const wire = rs.find((r) => r.wire !== undefined)?.wire;
      const label = name === 'pgsurge -w1 auto' && wire ? `pgsurge -w1 auto (→ ${wire})` : name;
      const busy = median(rs.map((r) => r.serverCpu / r.seconds));
      const share = (f: (b: BackendTime) => number): string => `${(100 * median(rs.map((r) => (r.backend ? f(r.backend) / r.backend.seconds : NaN)))).toFixed(1)}%`;
      lines.push(
        `| ${label} | ${rs.map((r) => r.seconds.toFixed(2)).join(', ')} | ${fmt(median(rs.map((r) => rows / r.seconds)))} | ${ratio(name, PSQL).toFixed(2)} | ${ratio(name, LIMIT).toFixed(2)} | ${median(rs.map((r) => r.backend?.run ?? NaN)).toFixed(2)} | ${share((b) => b.asleep)} | ${share((b) => b.queue)} | ${(100 * median(rs.map((r) => r.clientWait))).toFixed(1)}% | ${median(rs.map((r) => r.serverCpu)).toFixed(2)} (${(100 * busy).toFixed(0)}%) | ${median(rs.map((r) => r.clientCpu)).toFixed(2)} |${socketFillMs > 0 ? ` ${rs.some((r) => (r.fill?.readings ?? 0) > 0) ? `${(100 * median(rs.map((r) => r.fill?.empty ?? NaN))).toFixed(1)}%` : '–'} |` : ''}`,
      );
    }
    summaries.push(lines.join('\n'));
    console.log(`\n${lines.join('\n')}`);
    await admin.query(`DROP TABLE ${table}`);
    // At SF 1 lineitem leaves ~4 GB of files (the input, psql's copy, the server's two): gone before the next table's.
    await Promise.all(files.map((f) => fs.rm(f, { force: true })));
  }
  console.log(
    `\n# medians of ${repeat} rounds; ratios are medians of the per-round ratios of rows/s. The backend: the load's busiest (its COPY's), from /proc/<pid>/schedstat: ` +
      'on CPU, asleep (waiting for its client or for I/O) and waiting for a CPU (the machine\'s other work), as shares of its life. Looks: pg_stat_activity every ' +
      `${LOOK_EVERY_MS} ms, the share that found the load's backends waiting for their client (ClientRead, or idle between statements). Server CPU: all its processes ` +
      "(backends, WAL writer, checkpointer) but the looks' own backend; busy: that over the wall time.\n",
  );
  console.log(summaries.join('\n\n'));
  await watcher.end();
  await admin.end();
} finally {
  await cluster.stop().catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true });
}
