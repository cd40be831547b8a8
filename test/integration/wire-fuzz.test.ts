/**
 * Seeded fuzz of the binary wire's encoders: a few thousand random values per type, loaded
 * through text COPY and through binary COPY (refused values through text into the same
 * table), must give identical tables; where the column is unconstrained, every encoded
 * value's bytes must be what the type's send function gives for the stored value.
 * A failure names its seed (PGSURGE_FUZZ_SEED repeats it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { encoderFor } from '../../src/codecs/index.js';
import { prng } from '../helpers/lineitem-data.js';
import { closeTestSchema, openTestSchema } from '../helpers/test-db.js';
import { copyBinaryRows, copyText, encodeRows, sessionFacts, tableMd5 } from '../helpers/wire-copy.js';

const SCHEMA = 'it_wire_fuzz';
const N = 2000;
const SEED = Number(process.env.PGSURGE_FUZZ_SEED ?? 20261201);
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-wire-fuzz-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

type Random = () => number;
const int = (r: Random, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Random, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const digits = (r: Random, n: number): string => Array.from({ length: n }, () => String(int(r, 0, 9))).join('');
const pad = (n: number, w: number): string => String(n).padStart(w, '0');

function decorateInteger(r: Random, v: bigint | number): string {
  const s = String(v);
  const roll = r();
  if (roll < 0.1) return s.startsWith('-') ? `-00${s.slice(1)}` : `000${s}`;
  if (roll < 0.15 && !s.startsWith('-')) return `+${s}`;
  return s;
}

function randomFloat64(r: Random): number {
  const bytes = new Uint8Array(8);
  for (let i = 0; i < 8; i++) bytes[i] = int(r, 0, 255);
  return new DataView(bytes.buffer).getFloat64(0);
}

function printFloat(r: Random, v: number, maxPrecision: number): string {
  switch (int(r, 0, 3)) {
    case 0:
      return String(v);
    case 1:
      return v.toPrecision(int(r, 1, maxPrecision));
    case 2:
      return v.toExponential(int(r, 0, maxPrecision - 1)).replace('e', pick(r, ['e', 'E']));
    default:
      return `${pick(r, ['', '-'])}${digits(r, int(r, 0, 8))}.${digits(r, int(r, 1, 12))}`;
  }
}

function randomIsoMs(r: Random): Date {
  const lo = Date.UTC(2000, 0, 1) - 1999 * 365.2425 * 86400000;
  const hi = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
  return new Date(lo + Math.floor(r() * (hi - lo)));
}

function randomTimestamp(r: Random): string {
  const iso = randomIsoMs(r).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ, years 0001–9999
  const date = iso.slice(0, 10);
  const hm = iso.slice(11, 16);
  const sep = pick(r, [' ', 'T']);
  switch (int(r, 0, 4)) {
    case 0:
      return date;
    case 1:
      return `${date}${sep}${hm}`;
    case 2:
      return `${date}${sep}${iso.slice(11, 19)}`;
    default:
      return `${date}${sep}${iso.slice(11, 19)}.${digits(r, int(r, 1, 6))}`;
  }
}

const CODE_POINT_RANGES: readonly [number, number][] = [
  [0x20, 0x7e],
  [0x20, 0x7e],
  [0x20, 0x7e],
  [0x01, 0x1f],
  [0xa0, 0x2ff],
  [0x400, 0x4ff],
  [0x4e00, 0x9fff],
  [0xe000, 0xfffd],
  [0x1f300, 0x1faff],
  [0x10000, 0x10ffff],
];

function randomText(r: Random, maxChars: number): string {
  const n = int(r, 0, maxChars);
  let s = '';
  for (let i = 0; i < n; i++) {
    const [lo, hi] = pick(r, CODE_POINT_RANGES);
    s += String.fromCodePoint(int(r, lo, hi));
  }
  return s;
}

function randomJson(r: Random, depth: number): unknown {
  const roll = int(r, 0, depth > 2 ? 4 : 6);
  switch (roll) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return r() < 0.5 ? int(r, -1e9, 1e9) : randomFloat64(r) % 1e6 || 0;
    case 3:
    case 4:
      return randomText(r, 10);
    case 5:
      return Array.from({ length: int(r, 0, 4) }, () => randomJson(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: int(r, 0, 4) }, () => [randomText(r, 5), randomJson(r, depth + 1)]));
  }
}

function randomBytes(r: Random): Uint8Array {
  return Uint8Array.from({ length: int(r, 0, 40) }, () => int(r, 0, 255));
}

/**
 * A decimal a few double ulps beside the midpoint between `f` and the next float up (or at
 * it): where rounding decimal → double → float could go the other way from strtof's one
 * rounding if the encoder got its midpoint test wrong.
 */
function nearFloatMidpoint(r: Random, f: number): string {
  const f32 = new Float32Array([f]);
  const u32 = new Uint32Array(f32.buffer);
  u32[0] = u32[0]! + 1;
  const mid = (f + f32[0]!) / 2;
  if (!Number.isFinite(mid)) return String(f);
  const beside = pick(r, [-4, -1, 0, 1, 4]) * 2 ** -52 * Math.abs(mid);
  return (mid + beside).toPrecision(17);
}

interface FuzzCase {
  readonly name: string;
  readonly columns: readonly string[];
  readonly session?: readonly string[];
  readonly value: (r: Random) => string;
}

const fuzzCases: FuzzCase[] = [
  { name: 'smallint', columns: ['int2'], value: (r) => decorateInteger(r, int(r, -32768, 32767)) },
  { name: 'integer', columns: ['int4'], value: (r) => decorateInteger(r, int(r, -2147483648, 2147483647)) },
  {
    name: 'bigint',
    columns: ['int8'],
    value: (r) => decorateInteger(r, r() < 0.5 ? BigInt.asIntN(64, (BigInt(int(r, 0, 2 ** 32 - 1)) << 32n) | BigInt(int(r, 0, 2 ** 32 - 1))) : int(r, -1e15, 1e15)),
  },
  {
    name: 'numeric',
    columns: ['numeric', 'numeric(40,8)', 'numeric(38,0)'],
    value: (r) => {
      if (r() < 0.02) return 'NaN';
      const intPart = r() < 0.1 ? '' : digits(r, int(r, 1, 30));
      const frac = r() < 0.3 ? '' : digits(r, int(r, r() < 0.2 ? 0 : 1, 20));
      const point = frac !== '' || r() < 0.05 ? '.' : '';
      const sign = pick(r, ['', '', '-', '+']);
      return `${sign}${intPart === '' && point === '' ? '0' : intPart}${point}${intPart === '' && frac === '' ? '0' : frac}`;
    },
  },
  {
    name: 'double precision',
    columns: ['float8'],
    value: (r) => {
      let v = randomFloat64(r);
      if (!Number.isFinite(v) || (v !== 0 && Math.abs(v) < 2.2250738585072014e-308)) v = r() * 1e6 - 5e5;
      if (r() < 0.3) v = (r() - 0.5) * 10 ** int(r, -30, 30);
      return printFloat(r, v, 17);
    },
  },
  {
    name: 'real',
    columns: ['float4'],
    value: (r) => {
      let v = Math.fround((r() - 0.5) * 10 ** int(r, -37, 38));
      if (!Number.isFinite(v) || (v !== 0 && Math.abs(v) < 1.2e-38)) v = Math.fround(r());
      if (r() < 0.2) return nearFloatMidpoint(r, v);
      return printFloat(r, v, 12);
    },
  },
  {
    name: 'boolean',
    columns: ['bool'],
    value: (r) => {
      const w = pick(r, ['t', 'tr', 'tru', 'true', 'f', 'fa', 'fal', 'fals', 'false', 'y', 'ye', 'yes', 'n', 'no', 'on', 'of', 'off', '1', '0']);
      return [...w].map((c) => (r() < 0.5 ? c.toUpperCase() : c)).join('');
    },
  },
  { name: 'date', columns: ['date'], session: ["SET DateStyle = 'SQL, DMY'"], value: (r) => randomIsoMs(r).toISOString().slice(0, 10) },
  { name: 'timestamp', columns: ['timestamp', 'timestamp(2)'], value: randomTimestamp },
  {
    name: 'timestamptz',
    columns: ['timestamptz', 'timestamptz(4)'],
    session: ["SET TimeZone = 'America/New_York'"],
    value: (r) => {
      const t0 = randomTimestamp(r);
      const t = t0.length === 10 ? `${t0} 12:34:56` : t0;
      if (r() < 0.03) return t; // no offset: refused in New York, goes as text
      const h = int(r, 0, 14);
      const sign = pick(r, ['+', '-']);
      return `${t}${sign}${pad(h, 2)}${pick(r, ['', `:${pad(int(r, 0, 59), 2)}`, pad(pick(r, [0, 30, 45]), 2)])}`;
    },
  },
  { name: 'text', columns: ['text', 'varchar(40)', 'bpchar(40)'], value: (r) => randomText(r, r() < 0.02 ? 40 : 20) },
  {
    name: 'bytea',
    columns: ['bytea'],
    value: (r) => {
      const b = randomBytes(r);
      if (r() < 0.5) {
        const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
        return '\\x' + (r() < 0.5 ? hex.toUpperCase() : hex);
      }
      return [...b].map((x) => (x === 92 ? '\\\\' : x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : '\\' + x.toString(8).padStart(3, '0'))).join('');
    },
  },
  {
    name: 'uuid',
    columns: ['uuid'],
    value: (r) => {
      const h = Array.from({ length: 16 }, () => int(r, 0, 255).toString(16).padStart(2, '0')).join('');
      const s = r() < 0.3 ? h : `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
      return r() < 0.3 ? s.toUpperCase() : s;
    },
  },
  { name: 'json, jsonb', columns: ['json', 'jsonb'], value: (r) => JSON.stringify(randomJson(r, 0), null, pick(r, [0, 0, 1, 2])) },
];

describe(`binary wire encoders, fuzzed (seed ${SEED}, ${N} values per type)`, () => {
  let tableNo = 0;
  for (const [k, c] of fuzzCases.entries()) {
    it(`${c.name}: ${c.columns.join(', ')}`, async () => {
      const r = prng(SEED + k);
      const rows: [number, string][] = Array.from({ length: N }, (_, i) => [i, c.value(r)]);
      for (const s of c.session ?? []) await client.query(s);
      try {
        const facts = await sessionFacts(client);
        for (const [ci, column] of c.columns.entries()) {
          const type = (await client.query<{ t: string; send: string }>(`SELECT typname AS t, typsend::text AS send FROM pg_type WHERE oid = $1::regtype`, [column])).rows[0]!;
          const encoder = encoderFor({ typname: type.t, typmod: -1, oid: 0 }, facts);
          assert.ok(encoder);
          const n = tableNo++;
          const [tText, tBin] = [`${SCHEMA}.f${n}_text`, `${SCHEMA}.f${n}_bin`];
          for (const t of [tText, tBin]) await client.query(`CREATE TABLE ${t} (id int PRIMARY KEY, v ${column})`);
          const textError = await copyText(client, tText, rows);
          assert.equal(textError, undefined, `seed ${SEED + k}: the generator made a value the server refuses`);
          const bin = encodeRows(rows, encoder);
          assert.equal(await copyBinaryRows(client, tBin, bin.encoded), undefined, `seed ${SEED + k}: binary COPY`);
          assert.equal(await copyText(client, tBin, bin.refused), undefined, `seed ${SEED + k}: the refused values through text`);
          const [a, b] = [await tableMd5(client, tText), await tableMd5(client, tBin)];
          assert.equal(a.count, N);
          if (a.md5 !== b.md5) {
            const rowsOf = async (t: string): Promise<string[]> => (await client.query<{ r: string }>(`SELECT t::text AS r FROM ${t} t ORDER BY id`)).rows.map((x) => x.r);
            const [x, y] = [await rowsOf(tText), await rowsOf(tBin)];
            const i = x.findIndex((v, j) => v !== y[j]);
            assert.fail(`seed ${SEED + k}, ${column}: row ${i} from '${rows[i]![1]}': text ${x[i]} vs binary ${y[i]}`);
          }
          if (ci === 0 && type.t !== 'jsonb') {
            const sent = await client.query<{ id: number; h: string }>(`SELECT id, encode(${type.send}(v), 'hex') AS h FROM ${tText} ORDER BY id`);
            const mine = new Map(bin.encoded);
            for (const { id, h } of sent.rows) {
              const field = mine.get(id);
              if (field) assert.equal(field.subarray(4).toString('hex'), h, `seed ${SEED + k}, ${column} '${rows[id]![1]}': encoder bytes vs ${type.send}`);
            }
          }
          assert.ok(bin.refused.length < N / 10, `${column}: ${bin.refused.length} of ${N} refused (first: ${bin.refused.slice(0, 5).map(([, v]) => v).join(' | ')})`);
          process.stdout.write(`# fuzz ${column}: ${N} values, ${bin.refused.length} refused by the encoder${bin.refused.length ? ` (e.g. '${bin.refused[0]![1]}')` : ''}\n`);
        }
      } finally {
        await client.query('RESET ALL');
      }
    });
  }
});
