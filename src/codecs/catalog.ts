import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName } from '../core/identifiers.js';
import type { ColumnType, SessionFacts } from './field-encoder.js';

/** A column of the COPY's column list, with its type as the binary wire needs it. */
export interface WireColumn extends ColumnType {
  readonly name: string;
  /** The type as the user wrote it (`character(1)`, a domain's name), for messages. */
  readonly declared: string;
}

/**
 * The COPY's columns (the target's column list, or every column COPY fills without one:
 * not dropped, not generated), in order, each domain resolved to its base type (through
 * domains over domains) with the typmod that applies. Read once per table.
 */
export async function readWireColumns(client: pg.Client, target: LoadTarget): Promise<WireColumn[]> {
  const r = await client.query<{ name: string; declared: string; oid: number; typname: string; typmod: number }>(
    `WITH RECURSIVE cols AS (
       SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS declared, a.atttypid AS typid, a.atttypmod AS typmod, 0 AS depth
         FROM pg_attribute a
        WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
       UNION ALL
       SELECT c.attnum, c.attname, c.declared, t.typbasetype, CASE WHEN t.typtypmod <> -1 THEN t.typtypmod ELSE c.typmod END, c.depth + 1
         FROM cols c JOIN pg_type t ON t.oid = c.typid
        WHERE t.typtype = 'd'
     )
     SELECT DISTINCT ON (c.attnum) c.attnum, c.attname AS name, c.declared, c.typid::int8::int AS oid, t.typname, c.typmod
       FROM cols c JOIN pg_type t ON t.oid = c.typid
      ORDER BY c.attnum, c.depth DESC`,
    [qualifiedName(target.table, target.schema)],
  );
  const all = r.rows.map((row) => ({ name: row.name, declared: row.declared, oid: Number(row.oid), typname: row.typname, typmod: Number(row.typmod) }));
  if (target.columns === undefined || target.columns.length === 0) return all;
  const byName = new Map(all.map((c) => [c.name, c]));
  return target.columns.map((name) => {
    const c = byName.get(name);
    // The column plan checked the names; a column gone since would fail the COPY either way.
    if (c === undefined) throw new Error(`internal: column ${name} of ${target.table} is not in the catalog`);
    return c;
  });
}

/** The session's facts that change how input text is read; read once per connection. */
export async function readSessionFacts(client: pg.Client): Promise<SessionFacts> {
  const r = await client.query<{ v: string; tz: string; ds: string; enc: string }>(
    "SELECT current_setting('server_version_num') AS v, current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds, current_setting('server_encoding') AS enc",
  );
  const row = r.rows[0]!;
  return { serverVersionNum: Number(row.v), timeZone: row.tz, dateStyle: row.ds, serverEncoding: row.enc };
}
