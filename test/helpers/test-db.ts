import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

/** The server the test runner started; integration tests need it. */
export function testUrl(): string {
  const url = process.env.PGSURGE_TEST_URL;
  if (!url) throw new Error('PGSURGE_TEST_URL is not set: run the suite with `npm test`, which starts PostgreSQL');
  return url;
}

export async function testClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: testUrl() });
  await client.connect();
  return client;
}

/** A fresh schema per test file, so files can run side by side on one server. */
export async function freshSchema(client: pg.Client, name: string): Promise<string> {
  await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.query(`CREATE SCHEMA "${name}"`);
  return name;
}

/** The table as COPY renders it (text format by default), one record per entry, in no particular order. */
export async function tableRecords(client: pg.Client, qualified: string, options = "(FORMAT text, DELIMITER '|')"): Promise<string[]> {
  // char(n) pads with spaces where the input had none: compare it as text, which trims them.
  const cols = await client.query<{ expr: string }>(
    `SELECT CASE WHEN atttypid = 'bpchar'::regtype THEN format('%I::text', attname) ELSE format('%I', attname) END AS expr
       FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    [qualified],
  );
  const select = cols.rows.map((r) => r.expr).join(', ');
  const stream = client.query(copyTo(`COPY (SELECT ${select} FROM ${qualified}) TO STDOUT ${options}`));
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/** md5 over sorted records: the same for a table and a file holding the same rows in any order. */
export function digest(records: readonly string[]): string {
  const sorted = [...records].sort();
  return createHash('md5').update(sorted.join('\n')).digest('hex');
}

/** A `.tbl` file's records as COPY text with `|` delimiter: CR and the trailing `|` removed, written independently of the framers. */
export function tblRecords(content: string): string[] {
  return content
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l, i, all) => !(l === '' && i === all.length - 1))
    .map((l) => l.replace(/\|$/, ''));
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const PGSURGE = path.join(root, 'bin', 'pgsurge.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real command line, as a user would. */
export function runCli(args: readonly string[], options: { stdin?: Buffer | string; env?: NodeJS.ProcessEnv; cwd?: string; command?: string; nodeFlags?: readonly string[] } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // `command`: another pgsurge (an installed one) instead of this checkout's bin/pgsurge.js; `nodeFlags`: node's own, before it.
    const [file, pre] = options.command === undefined ? [process.execPath, [...(options.nodeFlags ?? []), PGSURGE]] : [options.command, []];
    const child = spawn(file, [...pre, ...args], { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'], ...(options.cwd ? { cwd: options.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');
  });
}

export { copyFrom };

/** The usual setup of an integration test file: a client, a fresh schema of its own, a temp folder. */
export async function openTestSchema(schema: string, tmpPrefix: string): Promise<{ client: pg.Client; dir: string }> {
  const client = await testClient();
  await freshSchema(client, schema);
  const dir = await mkdtemp(path.join(tmpdir(), tmpPrefix));
  return { client, dir };
}

/** Deletes the ledger's rows of these load ids (a test that reads the ledger by id, run again on the same server); nothing when there is no ledger yet. */
export async function forgetLoads(client: pg.Client, loadIds: readonly string[]): Promise<void> {
  const have = await client.query<{ ok: boolean }>("SELECT to_regclass('pgsurge.rejects') IS NOT NULL AND to_regclass('pgsurge.load_parts') IS NOT NULL AS ok");
  if (!have.rows[0]!.ok) return;
  for (const t of ['rejects', 'chunks', 'load_parts', 'load_files']) await client.query(`DELETE FROM pgsurge.${t} WHERE load_id = ANY($1)`, [loadIds]);
}

/** Undoes `openTestSchema`. */
export async function closeTestSchema(schema: string, client: pg.Client, dir: string): Promise<void> {
  await client.query(`DROP SCHEMA "${schema}" CASCADE`);
  await client.end();
  await rm(dir, { recursive: true, force: true });
}

/**
 * The reject file a load's output names (a load's default reject file has its load id in
 * its name): the stderr line `N rows rejected: see <file> and its .log`, else the summary's
 * `rejected rows: <file> (N)`, else `--json`'s `rejectFiles`.
 */
export function rejectFileOf(r: { stdout: string; stderr: string }): string {
  const see = /rows? rejected: see (.+?)(?:, .+)? and its \.log$/m.exec(r.stderr);
  if (see) return see[1]!;
  const summary = /^rejected rows: (.+?) \([\d,]+\), why:/m.exec(r.stdout);
  if (summary) return summary[1]!;
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  const files = last.startsWith('{') ? (JSON.parse(last) as { rejectFiles?: { path: string }[] }).rejectFiles : undefined;
  if (files?.[0]) return files[0].path;
  throw new Error(`no reject file named in the output:\n${r.stdout}\n${r.stderr}`);
}

/** The default reject files of `table` in `dir` (`<table>.<load id>[.partKofN].rejects`), by name. */
export async function rejectFilesIn(dir: string, table: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  return (await readdir(dir)).filter((f) => f.startsWith(`${table}.`) && f.endsWith('.rejects')).sort().map((f) => path.join(dir, f));
}
