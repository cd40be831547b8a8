import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { generateDbt3 } from '../../../src/datasets/dbt3/generate.js';
import { removeDir, tempDir } from '../datasets/dbt3-fixture.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const commands = path.resolve(here, '../../../src/cli/gen-commands.js');

/** A stand-in for main.ts: the program with only the gen commands, errors printed as main would. */
const ENTRY = `
import { Command } from 'commander';
import { registerGenCommands } from ${JSON.stringify(commands)};
const program = new Command('pgsurge').exitOverride();
registerGenCommands(program, program.command('dbt3'));
try { await program.parseAsync(process.argv.slice(1), { from: 'user' }); }
catch (e) { process.stderr.write('pgsurge: ' + e.message + '\\n'); process.exitCode = 1; }
`;

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Run the CLI; `take` closes our end of stdout after that many bytes, like `| head -c`. */
function run(args: string[], take = Infinity): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', ENTRY, '--', ...args], { cwd: repo });
    const out: Buffer[] = [];
    let got = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (got >= take) return;
      out.push(chunk);
      got += chunk.length;
      if (got >= take) child.stdout.destroy();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
  });
}

describe('gen commands, end to end', () => {
  it('streams one table to stdout, byte for byte the file', async () => {
    const dir = await tempDir('cli');
    try {
      const [file] = (await generateDbt3({ scale: 0.01, tables: ['orders'], outDir: dir })).files;
      const result = await run(['dbt3', 'gen', '--scale', '0.01', '--tables', 'orders', '--out', '-']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '', 'nothing but data on stdout, nothing on a non-TTY stderr');
      assert.ok(result.stdout.equals(await readFile(file!.path)));
    } finally {
      await removeDir(dir);
    }
  });

  it('ends quietly when the reader goes away (EPIPE)', async () => {
    const result = await run(['dbt3', 'gen', '--scale', '1', '--tables', 'lineitem', '--out', '-'], 100_000);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    const narrow = await run(['gen', 'narrow', '--rows', '100000000', '--keys', 'random', '--out', '-'], 100_000);
    assert.equal(narrow.code, 0, narrow.stderr);
    assert.equal(narrow.stderr, '');
  });

  it('names the flag and the value in errors', async () => {
    const result = await run(['dbt3', 'gen', '--scale', 'abc', '--out', 'x']);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'pgsurge: Expected `--scale` to be a number greater than 0, got `abc`\n');
  });

  it('writes files into a directory and reports them on stderr', async () => {
    const dir = await tempDir('cli-files');
    try {
      const result = await run(['dbt3', 'gen', '--scale', '0.01', '--tables', 'nation,region', '--parts', '2', '--part', '2', '--out', dir]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /region\.tbl\.2: 3 rows/);
      assert.match(result.stderr, /nation\.tbl\.2: 13 rows/);
    } finally {
      await removeDir(dir);
    }
  });
});
