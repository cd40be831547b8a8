import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { commandPath } from '../../src/cli/help-examples.js';
import { buildProgram } from '../../src/cli/main.js';

/**
 * The docs cannot drift from the command line: every option a command's --help lists is
 * on that command's page, and every command the README (and the docs' examples) runs is
 * real, with options it takes. A new command adds one line to PAGES; a new option needs a
 * line on its command's page.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PAGES: Readonly<Record<string, string>> = {
  load: 'docs/load.md',
  schema: 'docs/create-and-dry-run.md',
  status: 'docs/citus.md',
  compare: 'docs/insert-and-compare.md',
  decay: 'docs/decay.md',
  dbt3: 'docs/dbt3.md',
  'dbt3 load': 'docs/dbt3.md',
  'dbt3 gen': 'docs/gen.md',
  gen: 'docs/gen.md',
  'gen narrow': 'docs/gen.md',
  cluster: 'docs/cluster.md',
  'cluster start': 'docs/cluster.md',
  'cluster stop': 'docs/cluster.md',
  'cluster status': 'docs/cluster.md',
  'cluster url': 'docs/cluster.md',
  wal: 'docs/wal-and-durability.md',
  'wal move': 'docs/wal-and-durability.md',
  'wal where': 'docs/wal-and-durability.md',
  report: 'docs/reports.md',
  demo: 'docs/demo.md',
  completion: 'docs/completion.md',
  probe: 'docs/diagnostics.md',
};

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

const read = (file: string): string => readFileSync(path.join(root, file), 'utf8');
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The `pgsurge …` commands in a page's code blocks, one per pipeline stage or `&&` step. */
function commandsIn(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```(?:sh|bash)?\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((l) => l.replace(/\s#.*$/, ''))
    .flatMap((l) => l.split(/\|\||&&|\||;|\$\(/))
    .map((s) => s.trim().replace(/^\(?npx /, ''))
    .filter((s) => /^pgsurge\s/.test(s));
}

const MAX_PAGE_LINES = 250;
/** "session" followed by a number, as a build history would date things. */
const SESSION = new RegExp(['sess', 'ion [0-9]'].join(''), 'i');

/** The text files under a folder (or the file itself), skipping build output and dependencies. */
function textFiles(at: string): string[] {
  if (!statSync(at).isDirectory()) return [at];
  return readdirSync(at, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) return [];
    const full = path.join(at, e.name);
    if (e.isDirectory()) return textFiles(full);
    return /\.(md|ts|js|json|c|sh|txt)$/.test(e.name) ? [full] : [];
  });
}

describe('the docs and the command line agree', () => {
  const program = buildProgram();
  const commands = allCommands(program);

  for (const cmd of commands) {
    const name = commandPath(cmd);
    it(`every option of pgsurge ${name} --help is on its page`, () => {
      const page = PAGES[name];
      assert.ok(page !== undefined, `pgsurge ${name} has no docs page: add it to PAGES in test/unit/docs.test.ts (and write the page)`);
      const text = read(page);
      const missing = cmd.options.map((o) => o.long).filter((flag): flag is string => flag !== undefined && !new RegExp(`${escape(flag)}(?![a-z0-9-])`).test(text));
      assert.deepEqual(missing, [], `options of pgsurge ${name} missing from ${page}`);
    });
  }

  const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const page of pages) {
    it(`the pgsurge commands in ${page} exist and take the options they are given`, () => {
      for (const line of commandsIn(read(page))) {
        const words = line.split(/\s+/).slice(1).map((w) => w.replace(/[)"'`]+$/, ''));
        let at: Command = program;
        let i = 0;
        for (; i < words.length; i++) {
          const sub = at.commands.find((c) => c.name() === words[i]);
          if (sub === undefined) break;
          at = sub;
        }
        assert.ok(at !== program || words[0]?.startsWith('-'), `${page}: "${line}": "${words[0]}" is not a pgsurge command`);
        if (at.commands.length > 0 && at !== program) assert.fail(`${page}: "${line}": pgsurge ${commandPath(at)} needs a subcommand`);
        const flags = new Set([...at.options.flatMap((o) => [o.long, o.short]), ...program.options.flatMap((o) => [o.long, o.short]), '--help', '-h']);
        for (const w of words.slice(i)) {
          const flag = w.split('=')[0]!;
          if (/^--?[a-z]/.test(flag)) assert.ok(flags.has(flag), `${page}: "${line}": pgsurge ${commandPath(at)} takes no ${flag}`);
        }
      }
    });
  }

  it('the README stays short', () => {
    assert.ok(read('README.md').split('\n').length <= 260, 'README.md: at most ~250 lines; move the reference to docs/');
  });

  it('every docs page is a reference of at most 250 lines (measurement history goes to bench/results/)', () => {
    const long = pages.filter((p) => p !== 'README.md').map((p) => ({ page: p, lines: read(p).split('\n').length - 1 })).filter((p) => p.lines > MAX_PAGE_LINES);
    assert.deepEqual(long, [], `docs pages over ${MAX_PAGE_LINES} lines: keep the page a reference and move dated runs to bench/results/<bench>.md`);
  });

  it('nothing in README, docs, src, bench or test dates itself by a work session', () => {
    const hits = ['README.md', 'docs', 'src', 'bench', 'test'].flatMap((p) => textFiles(path.join(root, p))).flatMap((file) =>
      read(path.relative(root, file))
        .split('\n')
        .flatMap((line, i) => (SESSION.test(line) ? [`${path.relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(hits, [], 'say what the code or figure is, and date a measurement by its day, not by the session that made it');
  });
});
