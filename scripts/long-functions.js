// No function in src/ over MAX_LINES lines (from its first line to its last, closures inside it
// included): a longer one is split into steps that each say what they do. Run by check-layers.js;
// on its own it lists the functions of src/ longest first:
//
//   node scripts/long-functions.js [--all]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from '@swc/core';

export const MAX_LINES = 150;

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'PrivateMethod', 'Constructor', 'MethodProperty', 'GetterProperty', 'SetterProperty']);

/** Every function of one TypeScript source: its name, first line and length in lines. */
export function functionsOf(source) {
  // swc's spans count from a position shared by every parse: a leading `;` marks where this one starts.
  const text = `;${source}`;
  const bytes = Buffer.from(text);
  const lineAt = (pos) => bytes.subarray(0, pos).toString('utf8').split('\n').length;
  const ast = parseSync(text, { syntax: 'typescript', target: 'es2022' });
  const base = ast.body[0].span.start;
  const found = [];
  const visit = (node, name) => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n, name);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    let inner = name;
    if (node.type === 'VariableDeclarator' && node.id?.type === 'Identifier') inner = node.id.value;
    if (node.type === 'ClassDeclaration' && node.identifier) inner = node.identifier.value;
    if (FUNCTIONS.has(node.type) && node.span) {
      const key = node.key ?? node.identifier;
      const own = key?.value ?? key?.name ?? (node.type === 'Constructor' ? 'constructor' : undefined);
      const label = own === undefined ? `${name ?? '(anonymous)'}` : name && node.type !== 'FunctionDeclaration' ? `${name}.${own}` : own;
      const first = lineAt(node.span.start - base);
      const last = lineAt(node.span.end - base);
      found.push({ name: label, line: first, lines: last - first + 1 });
      inner = label;
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'span' && v && typeof v === 'object') visit(v, inner);
  };
  visit(ast.body, undefined);
  return found;
}

/** Every function of every .ts file under `dir`, longest first. */
export function functionsUnder(root, dir = 'src') {
  const out = [];
  const walk = (rel) => {
    for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) for (const f of functionsOf(readFileSync(path.join(root, p), 'utf8'))) out.push({ file: p, ...f });
    }
  };
  walk(dir);
  return out.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const all = functionsUnder(root);
  const shown = process.argv.includes('--all') ? all : all.filter((f) => f.lines > MAX_LINES);
  for (const f of shown) process.stdout.write(`${String(f.lines).padStart(5)}  ${f.file}:${f.line}  ${f.name}\n`);
}
