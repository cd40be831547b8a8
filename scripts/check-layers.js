// The source tree's layers, checked: no import cycle in src/, no import up the floors or sideways between
// rooms on one floor (.dependency-cruiser.cjs says the floors; docs/internals.md draws them); no inline
// import('…') type; nothing outside src/cli/ reads the environment or prints; no function in src/ over 150 lines. Runs in
// `npm test` and `npm run test:unit` before the tests; a violation fails the run.
//
//   node scripts/check-layers.js
//
// Violations listed in .dependency-cruiser-known-violations.json (if there is one) are known and
// left for later; any other fails. `npx depcruise-baseline src --config .dependency-cruiser.cjs` writes it.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { functionsUnder, MAX_LINES } from './long-functions.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// An inline type import (`x: import('../a.js').T`) is a dependency the parser does not always see (swc misses
// one in a type alias): src/ names its types with `import type` at the top, where the check sees every one.
// Files still using them, known and left for later (empty once they are gone):
const KNOWN_INLINE_TYPES = new Set([]);
const INLINE_TYPE = /(?<!await\s*)\bimport\(\s*['"][^'"]+['"]\s*\)\s*\.\s*[A-Za-z_$][\w$]*|\btypeof\s+import\(/g;
const inline = [];
const walk = (dir) => {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(rel);
    else if (rel.endsWith('.ts') && !KNOWN_INLINE_TYPES.has(rel)) {
      const lines = readFileSync(path.join(root, rel), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (!/^\s*(\/\/|\*)/.test(line) && INLINE_TYPE.test(line)) inline.push(`${rel}:${i + 1}: ${line.trim()}`);
        INLINE_TYPE.lastIndex = 0;
      });
    }
  }
};
walk('src');

// Only src/cli/ reads the environment or prints: below it, what a module needs from either is handed in
// (a setting or a test's fault as an option, a stream to print to, the environment a child runs in).
// Entry points of child processes and threads answer their parent on their own stdout.
const ENTRY_POINTS = new Set(['src/cluster/write-check-child.ts']);
const ENV_OR_PRINT = /\bprocess\.(env|stdout|stderr)\b|\bconsole\.\w+\(/;
const outsideCli = [];
const walkEnv = (dir) => {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (rel !== 'src/cli') walkEnv(rel);
    } else if (rel.endsWith('.ts') && !ENTRY_POINTS.has(rel)) {
      readFileSync(path.join(root, rel), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (!/^\s*(\/\/|\*|\/\*)/.test(line) && ENV_OR_PRINT.test(line)) outsideCli.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
  }
};
walkEnv('src');
if (outsideCli.length > 0) {
  process.stderr.write(`Only src/cli/ reads the environment or prints; hand the value (or the stream) in from there:\n${outsideCli.map((l) => `  ${l}\n`).join('')}`);
  process.exit(1);
}

// No function in src/ over MAX_LINES lines (scripts/long-functions.js): split a longer one into steps.
// Functions still longer, known and left for later (empty once they are split):
const KNOWN_LONG_FUNCTIONS = new Set([]);
const functions = functionsUnder(root);
const long = functions.filter((f) => f.lines > MAX_LINES && !KNOWN_LONG_FUNCTIONS.has(`${f.file} ${f.name}`));
// A known one split since (or gone) leaves the list.
const stale = [...KNOWN_LONG_FUNCTIONS].filter((k) => !functions.some((f) => f.lines > MAX_LINES && `${f.file} ${f.name}` === k));
if (stale.length > 0) {
  process.stderr.write(`No longer over ${MAX_LINES} lines: take it off KNOWN_LONG_FUNCTIONS in scripts/check-layers.js:\n${stale.map((k) => `  ${k}\n`).join('')}`);
  process.exit(1);
}
if (long.length > 0) {
  process.stderr.write(`A function in src/ over ${MAX_LINES} lines (split it into steps that each say what they do):\n${long.map((f) => `  ${f.file}:${f.line}: ${f.name}, ${f.lines} lines\n`).join('')}`);
  process.exit(1);
}

if (inline.length > 0) {
  process.stderr.write(`An inline import('…') type in src/ (name the type with \`import type\` at the top of the file):\n${inline.map((l) => `  ${l}\n`).join('')}`);
  process.exit(1);
}
const known = '.dependency-cruiser-known-violations.json';
const args = ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err', ...(existsSync(path.join(root, known)) ? ['--ignore-known', known] : [])];
const run = spawnSync(process.execPath, [path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), ...args], { cwd: root, stdio: 'inherit' });
if (run.status !== 0) {
  process.stderr.write(
    '\nThe layers of src/ are broken (above): an import cycle, or an import against the floors of .dependency-cruiser.cjs\n' +
      '(lowest first: core, codecs, cluster/datasets, input, wire, writer, metrics, diagnose, load, report, dbt3/decay/compare, cli).\n' +
      'Move the import down (a type to the room that owns it, a dependency handed in by the caller), or the file to its floor.\n',
  );
  process.exit(run.status ?? 1);
}
