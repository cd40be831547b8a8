import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// A plan of two CELL columns written by the compiled writer, in a process that may or may not make code from strings.
const script = (module: string, wire: string): string => `
import { ColumnTuples, compileFlatTuples, tupleRoom, writeFlatTuples } from ${JSON.stringify(module)};
import { WireBuffer } from ${JSON.stringify(wire)};
const int4 = (r, out) => { out.reserve(8); const b = out.bytes, p = out.pos; b.set([0, 0, 0, 4, 0, 0, r >> 8, r & 255], p); out.pos = p + 8; return r !== 7; };
const cols = [ColumnTuples.ofCell(int4), ColumnTuples.ofCell(int4)];
const room = tupleRoom(cols);
const a = new WireBuffer(16), b = new WireBuffer(16);
const x = compileFlatTuples(cols, room)(0, 5, a, 1 << 20);
const y = writeFlatTuples(cols, room, 0, 5, b, 1 << 20);
const refused = compileFlatTuples(cols, room)(5, 9, new WireBuffer(16), 1 << 20);
let strings = true; try { new Function('return 1'); } catch { strings = false; }
console.log(JSON.stringify({ x, y, same: Buffer.from(a.bytes.subarray(0, a.pos)).equals(Buffer.from(b.bytes.subarray(0, b.pos))), bytes: a.pos, refused, strings }));
`;

describe('compileFlatTuples', () => {
  const module = fileURLToPath(new URL('../../../src/input/parquet/flat-tuples.js', import.meta.url));
  const wire = fileURLToPath(new URL('../../../src/codecs/field-encoder.js', import.meta.url));
  for (const flags of [[], ['--disallow-code-generation-from-strings']]) {
    it(`writes what writeFlatTuples writes, and refuses where it refuses${flags.length ? ', with code from strings disallowed (writeFlatTuples itself then)' : ''}`, () => {
      const out = JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script(module, wire)], { encoding: 'utf8' })) as Record<string, unknown>;
      assert.deepEqual(out, { x: 5, y: 5, same: true, bytes: 5 * (2 + 16), refused: { row: 7, column: 0 }, strings: flags.length === 0 });
    });
  }
});
