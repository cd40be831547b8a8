/**
 * Differential tests of the binary wire's encoders against the real server: every edge
 * value is loaded once through text COPY and once through a binary COPY built with the
 * encoder (a value it refuses goes through text COPY into the same table, as the pipeline
 * would send its chunk), into identical tables with a variety of typmods. The tables must
 * be equal, the refused values must be exactly the ones listed, a value the server refuses
 * must give the same SQLSTATE, message and detail both ways, and for unconstrained columns
 * the encoder's bytes must be what the server's own send function gives for the value.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { encoderFor } from '../../src/codecs/index.js';
import { isUtcZone } from '../../src/codecs/timestamp.js';
import type { SessionFacts } from '../../src/codecs/field-encoder.js';
import { closeTestSchema, openTestSchema } from '../helpers/test-db.js';
import { copyBinaryRows, copyText, encodeRows, loadRefusingEach, sessionFacts, tableMd5, type ServerError } from '../helpers/wire-copy.js';

const SCHEMA = 'it_wire_encoders';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-wire-enc-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** Whether the encoder must refuse a value, given the session and the column type. */
type Refusal = boolean | ((facts: SessionFacts, column: string) => boolean);

interface Value {
  readonly v: string | null;
  readonly refused: Refusal;
}

/** A value the encoder must encode. */
const A = (v: string | null): Value => ({ v, refused: false });
/** A value the encoder must refuse (so it goes through text), optionally only in some sessions or columns. */
const R = (v: string, when: Refusal = true): Value => ({ v, refused: when });

interface TypeCase {
  readonly name: string;
  /** Column types; the first one unconstrained (its bytes are compared with the server's send function). */
  readonly columns: readonly string[];
  /** SET statements for a session variant; each variant runs the whole case. */
  readonly sessions?: readonly (readonly string[])[];
  readonly values: readonly Value[];
}

const before14 = (f: SessionFacts): boolean => f.serverVersionNum < 140000;
const notUtc = (f: SessionFacts): boolean => !isUtcZone(f.timeZone);

const cases: TypeCase[] = [
  {
    name: 'smallint',
    columns: ['int2'],
    values: [A('0'), A('-0'), A('+7'), A('007'), A('32767'), A('-32768'), R('32768'), R('-32769'), R(' 1'), R('1 '), R(''), R('abc'), R('1.5'), R('0x10'), R('1_000'), A(null)],
  },
  {
    name: 'integer',
    columns: ['int4'],
    values: [A('0'), A('-1'), A('2147483647'), A('-2147483648'), R('2147483648'), R('-2147483649'), A('00000000000000000001'), R(''), R('1e3'), A(null)],
  },
  {
    name: 'bigint',
    columns: ['int8'],
    values: [A('9223372036854775807'), A('-9223372036854775808'), R('9223372036854775808'), R('-9223372036854775809'), A('4294967296'), A('-4294967297'), A('1234567890123456'), A('-999999999999999999'), A('0'), R('1e3'), R(' 5'), A(null)],
  },
  {
    name: 'numeric',
    columns: ['numeric', 'numeric(5,2)', 'numeric(1000,500)', 'numeric(3)', 'numeric(20,10)'],
    values: [
      A('0'), A('-0'), A('-0.00'), A('0.000'), A('12345.678'), A('1.005'), A('-1.005'), A('1.004999'), A('999.995'), A('999.994'), A('.5'), A('5.'), A('+5'), A('007.50'),
      A('0.0001'), A('0.00001'), A('10000'), A('100000000'), A('-0.5'), A('123456789.123456789'), A('-99999999999999999999.99999999999'),
      A('1' + '0'.repeat(999)), A('9'.repeat(1000)), A('0.' + '0'.repeat(999) + '1'), A('-' + '1234567890'.repeat(50) + '.' + '9876543210'.repeat(50)),
      A('NaN'), A('nan'), R('Infinity', before14), R('-Infinity', before14), R('+infinity', before14),
      R('inf'), R('1e5'), R('1.5E-3'), R(' 1'), R('1 '), R(''), R('abc'), R('1_000'), R('1'.repeat(2001)), R('-'), R('.'), A(null),
    ],
  },
  {
    name: 'real',
    columns: ['float4'],
    values: [
      A('0'), A('-0'), A('1'), A('0.1'), A('3.4028235e38'), A('-3.4028235E+38'), R('3.5e38'), A('1.17549435e-38'), R('1e-40'), R('1e-50'), A('NaN'), A('Infinity'), A('-Infinity'),
      R('inf'), R('1.5E+10'), A('1.25E+10'), A('.5'), A('5.'), A('+1'), A('123456789'), A('1.00000006'), R('1.0000000596046448'), R('16777217'), R('16777219'), A('16777220'), A('0.30000001192092896'), R(' 1'), R(''), A(null),
    ],
  },
  {
    name: 'double precision',
    columns: ['float8'],
    values: [
      A('0'), A('-0'), A('1'), A('0.1'), A('1.7976931348623157e308'), R('1.8e308'), A('2.2250738585072014e-308'), R('4.9e-324'), R('1e-400'), A('NaN'), A('-Infinity'), A('Infinity'),
      A('3.141592653589793238462643383279'), A('123456789012345678901234567890'), A('1e22'), A('1e23'), A('9007199254740993'), A('-1.5e-7'), A('0.1e-5'), R('0x1p3'), R('1e'), A(null),
    ],
  },
  {
    name: 'boolean',
    columns: ['bool'],
    values: [A('t'), A('f'), A('true'), A('FALSE'), A('yes'), A('no'), A('on'), A('off'), A('of'), A('1'), A('0'), A('tr'), A('y'), A('n'), R(' t'), R('o'), R('maybe'), R(''), A(null)],
  },
  {
    name: 'date',
    columns: ['date'],
    sessions: [[], ["SET DateStyle = 'SQL, DMY'"], ["SET DateStyle = 'German, YMD'"]],
    values: [
      A('2024-02-29'), A('2000-01-01'), A('1999-12-31'), A('0001-01-01'), A('9999-12-31'), A('1970-01-01'), A('2000-02-29'), A('1995-03-13'), A('2012-12-12'),
      R('2023-02-29'), R('1900-02-29'), R('2024-02-30'), R('2024-13-01'), R('0000-01-01'), R('infinity'), R('-infinity'), R('epoch'), R('J2451545'),
      R('2024-01-01 BC'), R('0044-03-15 BC'), R('10000-01-01'), R('01/02/2024'), R('2024-1-2'), R(' 2024-01-01'), R('20240101'), R('2024-01-01 10:00'), R(''), A(null),
    ],
  },
  {
    name: 'timestamp',
    columns: ['timestamp', 'timestamp(0)', 'timestamp(3)'],
    sessions: [[], ["SET DateStyle = 'Postgres, DMY'", "SET TimeZone = 'America/New_York'"]],
    values: [
      A('2000-01-01 00:00:00'), A('2024-02-29 23:59:59.999999'), A('0001-01-01 00:00:00'), A('9999-12-31 23:59:59.999999'), A('9999-12-31 23:59:59.4'), A('2024-03-10 02:30:00'),
      A('2024-01-01T12:00'), A('2024-01-01'), A('1999-12-31 23:59:59.5'), A('1960-06-15 08:30:15.123'), A('1960-06-15 08:30:15.0005'), A('1901-12-13 20:45:52'),
      R('2000-01-01 00:00:00.0000005'), R('2024-01-01 24:00:00'), R('2024-01-01 23:59:60'), R('epoch'), R('infinity'), R('-infinity'), R('2024-01-01 12:00:00+02'),
      R('2024-01-01 12:00:00 BC'), R('2024-02-30 00:00:00'), R('2024-01-01 12:00:00 '), R(''), A(null),
    ],
  },
  {
    name: 'timestamptz',
    columns: ['timestamptz', 'timestamptz(0)'],
    sessions: [["SET TimeZone = 'UTC'"], ["SET TimeZone = 'America/New_York'"], ["SET TimeZone = 'Europe/Paris'", "SET DateStyle = 'SQL, DMY'"]],
    values: [
      // DST changes, each side, with explicit offsets
      A('2024-03-10 01:59:59-05'), A('2024-03-10 03:00:00-04'), A('2024-03-10 07:30:00+00'), A('2024-11-03 01:30:00-04'), A('2024-11-03 01:30:00-05'),
      A('2024-03-31 01:59:59+01:00'), A('2024-03-31 03:00:00+02:00'), A('2024-10-27 02:30:00+0200'), A('2024-10-27 02:30:00+0100'),
      A('2000-01-01 00:00:00+05:30'), A('2000-01-01 00:00:00-0930'), A('0001-01-01 00:00:00+00'), A('0001-01-01 00:00:00+01'), A('9999-12-31 23:59:59.999999+15'), A('9999-12-31 23:59:59-15:59'),
      A('2024-06-01T12:00:00.5+02'), A('1970-01-01 00:00:00+00'),
      R('2024-01-01 12:00:00', notUtc), R('2024-01-01', notUtc), R('2024-03-10 02:30:00', notUtc),
      R('2024-01-01 12:00:00Z'), R('2024-01-01 12:00:00 UTC'), R('2024-01-01 12:00:00 Europe/Paris'), R('2024-03-10 02:30:00 America/New_York'), R('2024-01-01 12:00:00 +02'),
      R('epoch'), R('infinity'), R('-infinity'), R('2024-01-01 12:00:00+16'), R('2024-01-01 12:00:00+02:00:30'), R('2024-01-01 12:00:00.1234567+00'), R(''), A(null),
    ],
  },
  {
    name: 'text types',
    columns: ['text', 'varchar(5)', 'bpchar(5)', 'bpchar', 'varchar', 'name'],
    values: [
      A(''), A('a'), A('abc  '), A('abcde'), A('abcdef'), A('abcde   '), A('héllo'), A('héllos'), A('日本語テキスト'), A('😀😀😀😀😀'), A('😀😀😀😀😀😀'), A('  lead'),
      A('tab\there'), A('new\nline'), A('cr\rhere'), A('back\\slash'), A('\\N'), R('x'.repeat(100000), (_f, c) => c === 'name'), R('x'.repeat(64), (_f, c) => c === 'name'), A('é'.repeat(31)),
      R('a\u0000b'), A(null),
    ],
  },
  {
    name: 'bytea',
    columns: ['bytea'],
    values: [A('\\x'), A('\\xdeadBEEF'), A('\\x00ff'), A('abc'), A('a\\\\b'), A('\\000\\377'), A('\\101'), A(''), A('\\x' + 'ab'.repeat(5000)), R('\\xabc'), R('\\x de ad'), R('\\400'), R('a\\'), R('\\xzz'), R('é'), R('\\X00'), A(null)],
  },
  {
    name: 'uuid',
    columns: ['uuid'],
    values: [
      A('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), A('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'), A('a0eebc999c0b4ef8bb6d6bb9bd380a11'), A('00000000-0000-0000-0000-000000000000'), A('ffffffff-ffff-ffff-ffff-ffffffffffff'),
      R('{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'), R('a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'), R('not-a-uuid'), R(''), A(null),
    ],
  },
  {
    name: 'json, jsonb',
    columns: ['json', 'jsonb'],
    values: [
      A('{}'), A('[]'), A('{"a": 1, "b": [1, 2.50, "x"]}'), A('"héllo 😀"'), A('{"a":1,"a":2}'), A('  {"x": null}  '), A('1e400'), A('null'), A('"\\u0000"'), A('"\\ud83d\\ude00"'),
      A('{bad'), A(''), A('true'), A('{"k": "' + 'v'.repeat(50000) + '"}'), R('"a\u0000"'), A(null),
    ],
  },
];

const label = (v: string): string => (v.length > 40 ? `${v.slice(0, 40)}…(${v.length} chars)` : v);
const rowsOf = async (table: string): Promise<string[]> => (await client.query<{ r: string }>(`SELECT t::text AS r FROM ${table} t ORDER BY id`)).rows.map((x) => label(x.r));
const sameError = (a: ServerError | undefined, b: ServerError | undefined): boolean => a?.code === b?.code && a?.message === b?.message && a?.detail === b?.detail;

describe('binary wire encoders: text COPY and binary COPY give the same tables', () => {
  let tableNo = 0;
  for (const c of cases) {
    for (const session of c.sessions ?? [[]]) {
      it(`${c.name}${session.length ? ` (${session.join('; ')})` : ''}: ${c.values.length} values × ${c.columns.join(', ')}`, async () => {
        for (const s of session) await client.query(s);
        try {
          const facts = await sessionFacts(client);
          for (const [ci, column] of c.columns.entries()) {
            const typname = (await client.query<{ t: string; send: string }>(`SELECT t.typname AS t, t.typsend::text AS send FROM pg_type t WHERE t.oid = $1::regtype`, [column])).rows[0]!;
            const encoder = encoderFor({ typname: typname.t, typmod: -1, oid: 0 }, facts);
            assert.ok(encoder, `an encoder for ${column}`);
            const n = tableNo++;
            const tText = `${SCHEMA}.t${n}_text`;
            const tBin = `${SCHEMA}.t${n}_bin`;
            for (const t of [tText, tBin]) await client.query(`CREATE TABLE ${t} (id int PRIMARY KEY, v ${column})`);
            const rows = c.values.map((x, id) => [id, x.v] as const);
            // Text: every value through text COPY. Binary: the encoded ones through binary COPY, the refused ones through text.
            const textErrors = await loadRefusingEach(rows, (rs) => copyText(client, tText, rs));
            const { encoded, refused: refusedRows } = encodeRows(rows, encoder);
            const binaryErrors = await loadRefusingEach(encoded, (rs) => copyBinaryRows(client, tBin, rs));
            const fallbackErrors = await loadRefusingEach(refusedRows, (rs) => copyText(client, tBin, rs));
            const refused = refusedRows.map(([, v]) => v!);
            for (const [id, v] of rows) {
              const textError = textErrors.get(id);
              const binError = binaryErrors.get(id) ?? fallbackErrors.get(id);
              assert.ok(sameError(textError, binError), `${column} '${label(String(v))}': text ${JSON.stringify(textError)} vs binary ${JSON.stringify(binError)}`);
            }
            if (ci === 0 && typname.t !== 'jsonb') {
              // The encoder's bytes are the server's own: the send function of what text COPY stored.
              const sent = new Map((await client.query<{ id: number; h: string }>(`SELECT id, encode(${typname.send}(v), 'hex') AS h FROM ${tText} WHERE v IS NOT NULL`)).rows.map((x) => [x.id, x.h]));
              for (const [id, field] of encoded) {
                if (field && sent.has(id)) assert.equal(field.subarray(4).toString('hex'), sent.get(id), `${column} '${label(String(rows[id]![1]))}': encoder bytes vs ${typname.send}`);
              }
            }
            const expectedRefused = c.values.filter((x) => (typeof x.refused === 'function' ? x.refused(facts, column) : x.refused)).map((x) => x.v!);
            assert.deepEqual(refused.map(label), expectedRefused.map(label), `${column}: the values the encoder refused`);
            const [a, b] = [await tableMd5(client, tText), await tableMd5(client, tBin)];
            assert.ok(a.count > 0, `${column}: some rows loaded`);
            if (a.md5 !== b.md5) assert.deepEqual(await rowsOf(tBin), await rowsOf(tText), `${column}: text and binary tables`);
            assert.deepEqual(b, a, `${column}: text and binary tables`);
            // Visible in the test log: how many went to text, how many the server refused after the encoder accepted.
            process.stdout.write(`# ${column} [${session.join('; ')}]: ${c.values.length} values, ${a.count} loaded, ${refused.length} refused by the encoder, ${binaryErrors.size} refused by the server in binary, ${textErrors.size} refused by the server in text\n`);
          }
        } finally {
          await client.query('RESET ALL');
        }
      });
    }
  }
});
