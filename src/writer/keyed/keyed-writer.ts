import { createHash } from 'node:crypto';
import path from 'node:path';
import type pg from 'pg';
import type { Chunk, LoadTarget } from '../../core/chunk.js';
import { qualifiedName, quoteIdent } from '../../core/identifiers.js';
import { LoadError } from '../../core/load-error.js';
import { tableColumns } from '../../core/table-columns.js';
import type { WireChoice } from '../../wire/wire-report.js';
import type { ChunkResult, ChunkWriter, WriterLoad } from '../chunk-writer.js';
import { copySql, copyWriter, streamCopy } from '../copy-writer.js';
import { LEDGER_SCHEMA } from '../ledger/ledger.js';
import { wireCopyWriter } from '../wire-writer.js';
import { wireFormat } from '../../wire/wire-format.js';
import type { ChunkRouter } from '../chunk-transaction.js';
import { chooseKey } from './table-key.js';
import { laneTypeOf, type LaneSpec, type LaneType } from './key-lanes.js';
import { hasDistinctKeys, LaneRouter, runsOf, type LaneLoad } from './lane-router.js';

/** What a keyed load does with each row's key: replace the row (`--on-conflict update`) or delete it (`--mode delete`). */
export type KeyedAction = 'update' | 'delete';

export interface KeyedSpec {
  readonly action: KeyedAction;
  /** `--key`: the unique key rows are matched by; default the primary key, else the only unique key. */
  readonly key?: readonly string[] | undefined;
  /** `--update-columns`: the columns an update sets; default every file column but the key. */
  readonly updateColumns?: readonly string[] | undefined;
  /** The staging COPY's wire (`--wire`), as plain COPY's. */
  readonly wire: WireChoice;
  readonly workers?: number | undefined;
  readonly wasm?: boolean | undefined;
}

/** The column each staging row's place in its chunk goes into (0, 1, 2 … in COPY's order). */
const POSITION = 'pgsurge_position';
/** Order table: the lowest position of a key's rows applied so far, and whether the load inserted the key (it was not in the table). */
const FIRST = 'pgsurge_first';
const NEW = 'pgsurge_new';

/**
 * Bits of a row's position given to its place in its file: 2^44 bytes (16 TiB) a file; the
 * bits above number the load's inputs, in the order they were named.
 */
const FILE_BITS = 44n;

/** How an input's key values are read for key lanes: their types, and COPY text's delimiter and NULL marker. */
interface LaneKey {
  readonly types: readonly LaneType[];
  /** varchar(n)'s n, by key column. */
  readonly lengths: readonly (number | undefined)[];
  readonly delimiter: number;
  readonly nullMarker: Buffer;
  readonly csv?: { readonly quote: number; readonly escape: number };
  /** The table has a constraint between rows besides the key (`inRuns` in LaneSpec). */
  readonly inRuns: boolean;
}

/** What a load through key lanes needs of the load: their number, and the router that spreads each chunk over them. */
export interface LaneRouting {
  readonly lanes: number;
  /** The router the load's workers share (each call opens it for one more worker). */
  router(how: Pick<LaneLoad, 'connect' | 'placeOf' | 'retryForMs' | 'chunkBytes'>): () => ChunkRouter;
}

/** A keyed writer, as the load sees it: `laneRouting` once `planLoad` has run (undefined: chunks go to the workers as they come). */
interface KeyedWriter extends ChunkWriter {
  laneRouting(): LaneRouting | undefined;
}

/** The key lanes a writer's `planLoad` chose, when it is a keyed writer that did (wrappers made by Object.create see its method). */
export function laneRoutingOf(writer: ChunkWriter | undefined): LaneRouting | undefined {
  return (writer as Partial<KeyedWriter> | undefined)?.laneRouting?.();
}

/**
 * Why an update input's keys cannot go by lanes (undefined: they can), with how its key's
 * values are read when they can: every key column NOT NULL (NULLs are never equal) and of
 * a type `laneTypeOf` compares, and the input's records in COPY text or CSV with one-byte
 * delimiter, quote and escape.
 */
async function laneKeyOf(client: pg.Client, input: LoadTarget, table: string, key: readonly string[]): Promise<LaneKey | undefined> {
  const wire = wireFormat(input);
  const delimiter = Buffer.from(wire.delimiter ?? (wire.format === 'csv' ? ',' : '\t'));
  const quote = Buffer.from(wire.quote ?? '"');
  const escape = wire.escape === undefined ? quote : Buffer.from(wire.escape);
  if (delimiter.length !== 1 || (wire.format === 'csv' && (quote.length !== 1 || escape.length !== 1))) return undefined;
  const r = await client.query<{ name: string; typname: string; typmod: number; notnull: boolean; deterministic: boolean | null }>(
    `SELECT a.attname::text AS name, t.typname::text AS typname, a.atttypmod AS typmod, a.attnotnull AS notnull, c.collisdeterministic AS deterministic
       FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_collation c ON c.oid = a.attcollation
      WHERE a.attrelid = to_regclass($1) AND a.attname = ANY($2::text[]) AND a.attnum > 0 AND NOT a.attisdropped`,
    [table, key],
  );
  const types: LaneType[] = [];
  const lengths: (number | undefined)[] = [];
  for (const k of key) {
    const col = r.rows.find((row) => row.name === k);
    const type = col?.notnull ? laneTypeOf(col.typname, col.deterministic !== false) : undefined;
    if (type === undefined) return undefined;
    types.push(type);
    // varchar(n): its typmod is n + 4 (the varlena header); -1 without a limit.
    lengths.push(col!.typname === 'varchar' && col!.typmod > 4 ? col!.typmod - 4 : undefined);
  }
  // Another unique index (on any partition) or an exclusion constraint: a row a later row of its key writes over
  // can still keep a row of another key out, as one by one.
  const between = await client.query<{ yes: boolean }>(
    `WITH rel AS (SELECT $1::regclass::oid AS relid UNION SELECT relid FROM pg_partition_tree($1::regclass))
     SELECT EXISTS (SELECT 1 FROM rel JOIN pg_index i ON i.indrelid = rel.relid WHERE i.indisunique GROUP BY rel.relid HAVING count(*) > 1)
         OR EXISTS (SELECT 1 FROM rel JOIN pg_constraint c ON c.conrelid = rel.relid WHERE c.contype = 'x') AS yes`,
    [table],
  );
  return {
    types,
    lengths,
    inRuns: between.rows[0]?.yes === true,
    delimiter: delimiter[0]!,
    nullMarker: Buffer.from(wire.null ?? (wire.format === 'csv' ? '' : '\\N')),
    ...(wire.format === 'csv' ? { csv: { quote: quote[0]!, escape: escape[0]! } } : {}),
  };
}

/** One input's plan, decided once before the load. */
interface InputPlan {
  /** The target, schema-qualified. */
  readonly table: string;
  /** The staging table's name (in pg_temp), one per target table. */
  readonly stage: string;
  readonly key: readonly string[];
  /** The columns an update sets, where a chunk fills them; undefined: every column it fills but the key. */
  readonly update: readonly string[] | undefined;
  /** The columns the input fills (a chunk of JSON records under `--missing default` may fill fewer). */
  readonly columns: readonly string[];
  /** The table's NOT NULL columns without a default: a chunk that leaves one out updates the rows there before it inserts the new ones. */
  readonly required: readonly string[];
  /** The table's GENERATED ALWAYS identity columns: no UPDATE can set them (the file's values go in by inserts only). */
  readonly always: readonly string[];
  /** The input's place among the load's inputs, as the high bits of its rows' positions. */
  readonly fileIndex: bigint;
  /** The order table (updates without key lanes): the position of the row that last wrote each key. */
  readonly order?: string;
  /** Key lanes (updates whose key pgsurge can compare, read from COPY text): how the key's values are read. */
  readonly lanes?: LaneKey;
  /** The statements for each set of columns a chunk fills. */
  readonly statements: Map<string, Statements>;
}

/** A chunk's statements, by the columns it fills. */
interface Statements {
  readonly columns: readonly string[];
  /** The staging table (in pg_temp). */
  readonly stage: string;
  /** Key lanes: the staging table lives as long as the session, emptied by each COMMIT (a second part in one transaction empties it first). */
  readonly kept?: boolean;
  /** Creates (once per transaction) and empties the staging table. */
  readonly stageSql: string;
  /** Moves the staged rows into the target; `$1` is the chunk's first position (updates through the order table only). */
  readonly applySql: string;
  /** Key lanes: the apply of a lane's part whose keys are all different (no key's last row to find). */
  readonly distinctSql?: string;
  /** Key lanes: run before `applySql`, the first row of each key the part holds more than once, inserted whole where the key is new. */
  readonly firstSql?: string;
  /** The order table: run before `applySql` and undone (a savepoint), the same insert, to find a first row the server refuses. */
  readonly trySql?: string;
}

/**
 * The first row of each key a staged part holds more than once, inserted whole where the key is
 * new (`order`: the column giving COPY's order), in COPY's order.
 */
function firstRowsSql(table: string, stage: string, key: readonly string[], staged: readonly string[], order: string): string {
  const sKeys = q(key, 's.');
  return `INSERT INTO ${table} AS t (${q(staged)}) OVERRIDING SYSTEM VALUE
          SELECT ${q(staged, 'f.')} FROM (
            SELECT DISTINCT ON (${sKeys}) ${q(staged, 's.')}, s.${order} AS pgsurge_at, count(*) OVER (PARTITION BY ${sKeys}) AS pgsurge_rows
              FROM pg_temp.${stage} AS s ORDER BY ${sKeys}, s.${order}) AS f
          WHERE f.pgsurge_rows > 1 ORDER BY f.pgsurge_at
        ON CONFLICT (${q(key)}) DO NOTHING`;
}

const q = (names: readonly string[], prefix = ''): string => names.map((n) => `${prefix}${quoteIdent(n)}`).join(', ');

/** The statements for a chunk that fills `columns` (the key's columns always staged: one a chunk lacks is NULL there, and its rows are rejected). */
function statementsFor(plan: InputPlan, action: KeyedAction, columns: readonly string[]): Statements {
  const { table, stage, key } = plan;
  const staged = [...columns, ...key.filter((k) => !columns.includes(k))];
  // The staging table has the file's columns only (as the target types and collates them), no constraint:
  // a column the file leaves out is not in the statement, so an update leaves it as it is.
  const stageSql = `DO $pgsurge$ BEGIN
        IF to_regclass('pg_temp.${stage}') IS NULL THEN
          CREATE TEMP TABLE ${stage} ON COMMIT DROP AS SELECT ${q(staged)} FROM ${table} WITH NO DATA;
          ALTER TABLE pg_temp.${stage} ADD COLUMN ${POSITION} bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 0 START WITH 0);
        END IF;
      END $pgsurge$; TRUNCATE pg_temp.${stage} RESTART IDENTITY`;
  const keys = q(key);
  if (action === 'delete') {
    const on = key.map((k) => `t.${quoteIdent(k)} = s.${quoteIdent(k)}`).join(' AND ');
    return { columns, stage, stageSql, applySql: `DELETE FROM ${table} AS t USING (SELECT DISTINCT ${keys} FROM pg_temp.${stage}) AS s WHERE ${on}` };
  }
  const update = (plan.update ?? staged).filter((c) => columns.includes(c) && !key.includes(c));
  const set = update.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${update.map((c) => `${quoteIdent(c)} = excluded.${quoteIdent(c)}`).join(', ')}`;
  if (plan.lanes !== undefined) return laneStatements(plan, columns, staged, update, set);
  // OVERRIDING SYSTEM VALUE: a GENERATED ALWAYS identity column takes the file's value, as COPY gives it.
  // latest: the chunk's last row of each key. won: those whose position is above the one the order table holds
  // for their key (the order row is locked until this transaction ends, in key order: no deadlock between workers).
  // A new key is inserted as row by row leaves it, where the key's first row inserts and the later ones update the
  // columns set: the first row's key columns (equal keys may differ in text: numeric 1.0 and 1, citext's case) and the
  // columns the file fills outside the columns set, the last row's columns set (firstOfKey).
  // The staged columns named s.…: DISTINCT ON, the window and ORDER BY then share one sort (a bare name would be the output column).
  const match = (a: string, b: string): string => key.map((k) => `${a}.${quoteIdent(k)} = ${b}.${quoteIdent(k)}`).join(' AND ');
  const fromFirst = firstOfKey(key, staged, update);
  const firstCols = staged.map((c) => (fromFirst.includes(c) ? `last_value(s.${quoteIdent(c)}) OVER k AS ${quoteIdent(c)}` : `s.${quoteIdent(c)}`)).join(', ');
  const sKeys = q(key, 's.');
  // A chunk holding a new key's first row, committed after a later chunk wrote the key, sets what its first row sets.
  // (A GENERATED ALWAYS identity key column keeps its value: integers are written alike; outside the key, refuseLateFirstRows.)
  const rekey = fromFirst.filter((c) => !plan.always.includes(c));
  const rekeyed =
    rekey.length === 0
      ? ''
      : `, rekeyed AS (
        INSERT INTO ${table} AS t (${q(staged)}) OVERRIDING SYSTEM VALUE
          SELECT ${q(staged, 'l.')} FROM latest AS l JOIN won AS w USING (${keys}) WHERE w.pgsurge_top <> l.${POSITION} AND w.pgsurge_rekey
        ON CONFLICT (${keys}) DO UPDATE SET ${rekey.map((k) => `${quoteIdent(k)} = excluded.${quoteIdent(k)}`).join(', ')}
      )`;
  const head = `WITH latest AS MATERIALIZED (
        SELECT DISTINCT ON (${sKeys}) ${firstCols}, $1::bigint + s.${POSITION} AS ${POSITION}, $1::bigint + last_value(s.${POSITION}) OVER k AS ${FIRST}
          FROM pg_temp.${stage} AS s
        WINDOW k AS (PARTITION BY ${sKeys} ORDER BY s.${POSITION} DESC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
        ORDER BY ${sKeys}, s.${POSITION} DESC
      ), won AS (
        INSERT INTO ${plan.order!} AS o (${keys}, ${POSITION}, ${FIRST}, ${NEW})
          SELECT ${q(key, 'l.')}, l.${POSITION}, l.${FIRST}, NOT EXISTS (SELECT 1 FROM ${table} AS t WHERE ${match('t', 'l')}) FROM latest AS l ORDER BY ${q(key, 'l.')}
        ON CONFLICT (${keys}) DO UPDATE SET ${POSITION} = greatest(o.${POSITION}, excluded.${POSITION}),
          ${FIRST} = CASE WHEN o.${NEW} THEN least(o.${FIRST}, excluded.${FIRST}) ELSE o.${FIRST} END
          WHERE o.${POSITION} < excluded.${POSITION} OR (o.${NEW} AND excluded.${FIRST} < o.${FIRST})
        RETURNING ${keys}, o.${POSITION} AS pgsurge_top, o.${NEW} AND o.${FIRST} >= $1::bigint AS pgsurge_rekey
      )${rekeyed}`;
  // In file order: rows of different keys meet another unique key as one by one (the order rows were locked in key order).
  const insert = (where: string): string =>
    `INSERT INTO ${table} AS t (${q(staged)}) OVERRIDING SYSTEM VALUE SELECT ${q(staged, 'l.')} FROM latest AS l JOIN won AS w USING (${keys}) WHERE w.pgsurge_top = l.${POSITION}${where} ORDER BY l.${POSITION} ON CONFLICT (${keys}) ${set}`;
  // A new key takes its first row's columns outside the columns set, inserted with the last row's columns set: a first row
  // the server refuses for a value in the columns set alone would give them. So the chunk's first row of each key it
  // repeats is first tried whole, as row by row inserts it, and undone: one refused splits the chunk, and alone it is rejected.
  const requiredLeftOut = plan.required.some((c) => !staged.includes(c));
  const trySql = fromFirst.some((c) => !key.includes(c)) && !requiredLeftOut ? firstRowsSql(table, stage, key, staged, POSITION) : undefined;
  if (!requiredLeftOut) return { columns, stage, stageSql, applySql: `${head} ${insert('')}`, ...(trySql ? { trySql } : {}) };
  // The chunk leaves out a NOT NULL column without a default: INSERT … ON CONFLICT would check the row it proposes (with
  // NULL there) before finding the conflict, so the rows there are updated first, and only the others proposed for insertion.
  const assign = update.length === 0 ? `${quoteIdent(key[0]!)} = t.${quoteIdent(key[0]!)}` : update.map((c) => `${quoteIdent(c)} = s.${quoteIdent(c)}`).join(', ');
  const applySql = `${head}, updated AS (
        UPDATE ${table} AS t SET ${assign} FROM (SELECT l.* FROM latest AS l JOIN won AS w USING (${keys}) WHERE w.pgsurge_top = l.${POSITION}) AS s WHERE ${match('t', 's')} RETURNING ${q(key, 't.')}
      ), inserted AS (
        ${insert(` AND NOT EXISTS (SELECT 1 FROM updated AS u WHERE ${match('u', 'l')})`)} RETURNING 1
      ) SELECT (SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted) AS applied`;
  return { columns, stage, stageSql, applySql };
}

/**
 * The staged columns a new key takes from its first row: its key columns and those outside
 * the columns set. Row by row, the first row inserts the key whole and each later one sets
 * only the columns set (`update`), so these keep the first row's values.
 */
function firstOfKey(key: readonly string[], staged: readonly string[], update: readonly string[]): string[] {
  return staged.filter((c) => key.includes(c) || !update.includes(c));
}

/**
 * An update's statements through key lanes: a lane applies its parts chunk after chunk, so
 * a part's rows only need to land as applied one by one, in order. Every row of a part is
 * staged (the server reads each, and refuses one it cannot read, as one by one); a part
 * whose keys all differ is applied as it is (`distinctSql`: one `INSERT … SELECT … ON
 * CONFLICT DO UPDATE`, as by hand). Else its last row of each key is found by the server
 * (`applySql`), in COPY's order (the staging table's physical order: emptied, then filled
 * by that one COPY); the keys lanes take (integers, deterministic text) are stored alike
 * however they are written, so the last row is the key's row whole.
 */
function laneStatements(plan: InputPlan, columns: readonly string[], staged: readonly string[], update: readonly string[], set: string): Statements {
  const { table, key } = plan;
  // A staging table per set of columns (files with other headers, NDJSON records under --missing default), made once a session.
  const stage = `${plan.stage}_${createHash('sha256').update(staged.join('\u0000')).digest('hex').slice(0, 8)}`;
  const stageSql = `DO $pgsurge$ BEGIN
        IF to_regclass('pg_temp.${stage}') IS NULL THEN
          CREATE TEMP TABLE ${stage} ON COMMIT DELETE ROWS AS SELECT ${q(staged)} FROM ${table} WITH NO DATA;
        END IF;
      END $pgsurge$`;
  const keys = q(key);
  const sKeys = q(key, 's.');
  const match = (a: string, b: string): string => key.map((k) => `${a}.${quoteIdent(k)} = ${b}.${quoteIdent(k)}`).join(' AND ');
  // The last row of each key, then those rows in COPY's order: rows of different keys meet another unique key as one by one.
  // A new key's columns outside the columns set are its first row's, as row by row leaves them: that row is inserted
  // whole first (firstSql), so it meets the table's constraints as row by row, and one the server refuses gives the key
  // nothing (split out and rejected, the key's next row inserts); the last row then sets the columns set. Where the
  // part leaves out a NOT NULL column no row can insert a key: the last row takes them from the first.
  const fromFirst = firstOfKey(key, staged, update).filter((c) => !key.includes(c));
  const requiredLeftOut = plan.required.some((c) => !staged.includes(c));
  const firstSql = fromFirst.length === 0 || requiredLeftOut ? undefined : firstRowsSql(table, stage, key, staged, 'ctid');
  const latest =
    fromFirst.length === 0 || !requiredLeftOut
      ? `SELECT * FROM (SELECT DISTINCT ON (${sKeys}) ${q(staged, 's.')}, s.ctid AS pgsurge_at FROM pg_temp.${stage} AS s ORDER BY ${sKeys}, s.ctid DESC) AS d ORDER BY d.pgsurge_at`
      : `SELECT * FROM (SELECT DISTINCT ON (${sKeys}) ${staged.map((c) => (fromFirst.includes(c) ? `last_value(s.${quoteIdent(c)}) OVER k AS ${quoteIdent(c)}` : `s.${quoteIdent(c)}`)).join(', ')}, s.ctid AS pgsurge_at
          FROM pg_temp.${stage} AS s
          WINDOW k AS (PARTITION BY ${sKeys} ORDER BY s.ctid DESC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
          ORDER BY ${sKeys}, s.ctid DESC) AS d ORDER BY d.pgsurge_at`;
  // ctes: the WITH list the statement starts with (the part's latest rows), from: the rows it applies.
  const apply = (ctes: readonly string[], from: string): string => {
    const insert = (where: string): string => `INSERT INTO ${table} AS t (${q(staged)}) OVERRIDING SYSTEM VALUE SELECT ${q(staged, 'l.')} FROM ${from} AS l${where} ON CONFLICT (${keys}) ${set}`;
    const withList = (more: readonly string[]): string => (ctes.length + more.length === 0 ? '' : `WITH ${[...ctes, ...more].join(', ')} `);
    if (!requiredLeftOut) return `${withList([])}${insert('')}`;
    // The part leaves out a NOT NULL column without a default: the rows there are updated first, the others inserted.
    const assign = update.length === 0 ? `${quoteIdent(key[0]!)} = t.${quoteIdent(key[0]!)}` : update.map((c) => `${quoteIdent(c)} = s.${quoteIdent(c)}`).join(', ');
    return `${withList([
      `updated AS (UPDATE ${table} AS t SET ${assign} FROM ${from} AS s WHERE ${match('t', 's')} RETURNING ${q(key, 't.')})`,
      `inserted AS (${insert(` WHERE NOT EXISTS (SELECT 1 FROM updated AS u WHERE ${match('u', 'l')})`)} RETURNING 1)`,
    ])}SELECT (SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted) AS applied`;
  };
  return { columns, stage, kept: true, stageSql, applySql: apply([`latest AS MATERIALIZED (${latest})`], 'latest'), distinctSql: apply([], `pg_temp.${stage}`), ...(firstSql ? { firstSql } : {}) };
}

/**
 * The order table keeps one position a key, for the whole row: right when every row of a table
 * fills the same columns. Rows that fill different ones (NDJSON records under `--missing default`,
 * files whose headers differ) each set only theirs, so a row that lost on position could still
 * have had columns of its own to set: such a load runs chunk after chunk, in file order (-w 1).
 */
function refuseMixedColumns(inputs: readonly LoadTarget[], plans: ReadonlyMap<string, InputPlan>): void {
  const byTable = new Map<string, string>();
  for (const input of inputs) {
    const plan = plans.get(input.file)!;
    const columns = plan.columns.join(', ');
    const partial = input.format === 'ndjson' && input.input?.missing === 'default';
    if (partial || (byTable.get(plan.table) ?? columns) !== columns) {
      throw new LoadError('bad-option', `--on-conflict update into ${plan.table} from rows that fill different columns (${partial ? `${input.file}'s records under --missing default` : `${input.file}'s ${columns}; another file's ${byTable.get(plan.table)}`}) lets the last row win only when its chunks commit in file order`, {
        hint: 'load with -w 1',
      });
    }
    byTable.set(plan.table, columns);
  }
}

/** Where chunks commit out of file order (the order table above -w 1): what only file order applies exactly is refused. */
function refuseOutOfOrder(inputs: readonly LoadTarget[], plans: ReadonlyMap<string, InputPlan>): void {
  refuseMixedColumns(inputs, plans);
  refuseLateFirstRows(inputs, plans);
}

/** Before the apply: a lane's part's first rows of the keys it repeats inserted (`firstSql`), or by the order table tried and undone (`trySql`). */
async function firstRows(client: pg.Client, sql: Statements, distinct: boolean): Promise<void> {
  if (sql.firstSql !== undefined && !distinct) await client.query(sql.firstSql);
  if (sql.trySql !== undefined) await client.query(`SAVEPOINT pgsurge_first; ${sql.trySql}; ROLLBACK TO SAVEPOINT pgsurge_first; RELEASE SAVEPOINT pgsurge_first`);
}

/**
 * By the order table, a chunk holding a new key's first row that commits after a later chunk
 * inserted the key writes back that row's columns outside the columns set: an UPDATE, which
 * cannot set a GENERATED ALWAYS identity column. A file filling one outside the key and the
 * columns set then loads chunk after chunk, in file order (-w 1), where the first row inserts.
 */
function refuseLateFirstRows(inputs: readonly LoadTarget[], plans: ReadonlyMap<string, InputPlan>): void {
  for (const input of inputs) {
    const plan = plans.get(input.file)!;
    const set = plan.update ?? plan.columns;
    const stuck = plan.always.filter((c) => plan.columns.includes(c) && !plan.key.includes(c) && !set.includes(c));
    if (stuck.length > 0) {
      throw new LoadError('bad-option', `--on-conflict update into ${plan.table} by ${input.file}: ${stuck.join(', ')}, a GENERATED ALWAYS identity column outside --update-columns, takes a new key's first row's value, which a chunk committing after a later one's cannot write back (no UPDATE sets it)`, {
        hint: 'load with -w 1',
      });
    }
  }
}

/**
 * Key lanes when every input's key can go by them, and no earlier run of this load went
 * through an order table (its committed chunks are then not a prefix of each key's rows).
 * Else every input keeps the order table. Sets the plans (and the order tables) so.
 */
async function choseLanes(client: pg.Client, plans: Map<string, InputPlan>, orderTables: Map<string, { readonly fresh: boolean }>): Promise<boolean> {
  let lanes = [...plans.values()].every((p) => p.lanes !== undefined);
  for (const [order, t] of orderTables) {
    if (!lanes || t.fresh) continue;
    if ((await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [order])).rows[0]?.ok === true) lanes = false;
  }
  for (const [file, p] of plans) {
    const { lanes: laneKey, order, ...rest } = p;
    plans.set(file, lanes ? { ...rest, lanes: laneKey! } : { ...rest, ...(order === undefined ? {} : { order }) });
  }
  if (lanes) orderTables.clear();
  return lanes;
}

/** The key lanes of a load whose plans chose them: `lanes` sessions, each chunk's records spread over them by key. */
function laneRoutingFor(plans: ReadonlyMap<string, InputPlan>, lanes: number): LaneRouting {
  return {
    lanes,
    router: (how) => {
      const router = new LaneRouter({
        lanes,
        ...how,
        specOf(chunk): LaneSpec | undefined {
          const plan = plans.get(chunk.target.file);
          if (plan?.lanes === undefined) return undefined;
          const columns = chunk.target.columns ?? plan.columns;
          const { types, lengths, delimiter, nullMarker, csv, inRuns } = plan.lanes;
          return { fields: plan.key.map((k) => columns.indexOf(k)), types, lengths, delimiter, nullMarker, inRuns, ...(csv ? { csv } : {}) };
        },
      });
      return () => router.open();
    },
  };
}

/**
 * The columns an update sets (undefined: every column a chunk fills but the key): `--update-columns`, checked against
 * the file's columns, else every column the file fills but the key and a GENERATED ALWAYS identity column (no UPDATE sets one).
 */
function columnsSet(named: readonly string[] | undefined, file: string, fileColumns: readonly string[], key: readonly string[], always: readonly string[]): readonly string[] | undefined {
  const stray = (named ?? []).filter((c) => !fileColumns.includes(c) || key.includes(c));
  if (stray.length > 0) {
    throw new LoadError('bad-option', `\`--update-columns\` names ${stray.join(', ')}, which ${stray.length === 1 ? 'is' : 'are'} not a column of ${file} outside the key (${key.join(', ')})`, {
      hint: `choose among ${fileColumns.filter((c) => !key.includes(c)).join(', ') || '(none: the file holds only the key)'}`,
    });
  }
  const fixed = (named ?? []).filter((c) => always.includes(c));
  if (fixed.length > 0) {
    throw new LoadError('bad-option', `\`--update-columns\` names ${fixed.join(', ')}, a GENERATED ALWAYS identity column, which no UPDATE can set`, {
      hint: 'leave it out: a new row takes the file\'s value, a row already there keeps its own',
    });
  }
  if (named !== undefined || !always.some((c) => fileColumns.includes(c) && !key.includes(c))) return named;
  return fileColumns.filter((c) => !key.includes(c) && !always.includes(c));
}

/**
 * Upserts and deletes by key through a staging table, COPY's way: each chunk is copied
 * (binary where `--wire` would send binary) into a temporary table, then applied to the
 * target in the chunk's transaction, with its ledger row.
 *
 * Update: the result is the file's rows applied in file order, last row per key wins, at
 * any number of workers and across crashes and resumes. Each row's position in the input
 * (the file's place among the inputs, the chunk's byte offset, the row's place in the
 * chunk) is a number that grows with file order. An order table keeps, per key, the
 * position of the row that last wrote it, committed with that row: a chunk's rows
 * (its last row per key) write a key only when their position is higher than the one
 * stored, and lock the key's order row until they commit. So a key ends holding the row of
 * the highest position any committed chunk had for it — the last in the file — whatever
 * order the chunks commit in. docs/exactly-once.md says why in full.
 *
 * Delete: each key in the chunk is deleted; a key that matches no row is counted as not
 * found (skipped). Deletes commute, so chunks need no order.
 */
export function keyedWriter(spec: KeyedSpec): KeyedWriter {
  const plans = new Map<string, InputPlan>();
  const orderTables = new Map<string, { readonly table: string; readonly key: readonly string[]; readonly fresh: boolean; readonly unlogged: boolean; readonly files: readonly string[] }>();
  const stageTables = new Map<string, string>();
  let dropAtEnd = false;
  /** The update goes by key lanes (chosen by `planLoad`). */
  let useLanes = false;

  const routing = laneRoutingFor(plans, Math.max(1, spec.workers ?? 1));
  const binary = spec.wire === 'text' ? undefined : wireCopyWriter(spec.wire, undefined, { workers: spec.workers, wasm: spec.wasm });

  const planOf = (chunk: Chunk): InputPlan => {
    const plan = plans.get(chunk.target.file);
    if (plan === undefined) throw new Error(`internal: no ${spec.action} plan for ${chunk.target.file}`);
    return plan;
  };

  async function planInput(client: pg.Client, input: LoadTarget, fileIndex: number, load: WriterLoad): Promise<InputPlan> {
    const flag = spec.action === 'update' ? '--on-conflict update' : '--mode delete';
    if (spec.action === 'update' && input.format === 'json') {
      throw new LoadError('bad-option', `${flag} orders rows by their place in the file, which a JSON array's chunks do not carry`, { hint: 'write the rows as NDJSON (one object a line), or CSV' });
    }
    const table = qualifiedName(input.table, input.schema);
    const key = await chooseKey(client, input.table, input.schema, spec.key, flag);
    const fileColumns = input.columns ?? (await tableColumns(client, input.table, input.schema)).map((c) => c.name);
    const missing = key.filter((k) => !fileColumns.includes(k));
    if (missing.length > 0) {
      throw new LoadError('bad-option', `${input.file} has no column ${missing.join(', ')} of the key (${key.join(', ')}) ${flag} matches rows of ${table} by`, {
        hint: spec.action === 'delete' ? 'name the key columns the file holds with --key, or its columns with --columns' : 'the file must hold every key column: name them with --columns, or choose another key with --key',
      });
    }
    const stage = `pgsurge_stage_${createHash('sha256').update(table).digest('hex').slice(0, 12)}`;
    stageTables.set(stage, input.table);
    const described = await tableColumns(client, input.table, input.schema);
    const required = described.filter((c) => c.notNull && !c.hasDefault && !c.identity).map((c) => c.name);
    const always = described.filter((c) => c.identityAlways).map((c) => c.name);
    const base = { table, stage, key, columns: fileColumns, required, always, fileIndex: BigInt(fileIndex), statements: new Map<string, Statements>() };
    if (spec.action === 'delete') return { ...base, update: undefined };
    const update = columnsSet(spec.updateColumns, input.file, fileColumns, key, always);
    // Named by the inputs' order too: positions number the inputs as named, so a resume that names them otherwise finds no order table.
    const named = load.inputs.map((i) => path.resolve(i.file)).join('\0');
    const order = `${LEDGER_SCHEMA}.${quoteIdent(`order_${createHash('sha256').update(`${load.loadId}\0${table}\0${named}`).digest('hex').slice(0, 16)}`)}`;
    const fresh = load.inputs.filter((i) => qualifiedName(i.table, i.schema) === table).every((i) => load.fresh(i));
    const unlogged = (await client.query<{ u: boolean }>(`SELECT relpersistence = 'u' AS u FROM pg_class WHERE oid = to_regclass($1)`, [table])).rows[0]?.u === true;
    orderTables.set(order, { table, key, fresh: fresh && (orderTables.get(order)?.fresh ?? true), unlogged, files: load.inputs.map((i) => i.file) });
    const lanes = await laneKeyOf(client, input, table, key);
    return { ...base, update, order, ...(lanes ? { lanes } : {}) };
  }

  /** The order tables: made anew for a load that starts, kept for one that resumes (they hold what its committed chunks wrote). */
  async function makeOrderTables(client: pg.Client): Promise<void> {
    if (orderTables.size === 0) return;
    const schema = await client.query<{ ok: boolean }>(`SELECT to_regnamespace('${LEDGER_SCHEMA}') IS NOT NULL AS ok`);
    if (schema.rows[0]?.ok !== true) await client.query(`CREATE SCHEMA IF NOT EXISTS ${LEDGER_SCHEMA}`);
    for (const [order, t] of orderTables) {
      const keys = t.key.map(quoteIdent).join(', ');
      if (t.fresh) await client.query(`DROP TABLE IF EXISTS ${order}`);
      else if ((await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [order])).rows[0]?.ok !== true) {
        // Chunks committed without it (their inputs named in another order): the rows left would meet no record of them.
        throw new LoadError('bad-option', `this load into ${t.table} has committed chunks, but not with its files named in this order (${t.files.join(', ')}): --on-conflict update lets the last row win in the order the load started with`, {
          hint: 'name the files in the order the load started with',
        });
      }
      // Unlogged with an unlogged target: crash recovery empties both, and the ledger's chunks of it are loaded again.
      await client.query(`CREATE ${t.unlogged ? 'UNLOGGED ' : ''}TABLE IF NOT EXISTS ${order} AS SELECT ${keys}, 0::bigint AS ${POSITION}, 0::bigint AS ${FIRST}, false AS ${NEW} FROM ${t.table} WITH NO DATA`);
      await client.query(`DO $pgsurge$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indrelid = '${order}'::regclass AND indisprimary) THEN
            ALTER TABLE ${order} ADD PRIMARY KEY (${keys});
            COMMENT ON TABLE ${order} IS ${client.escapeLiteral(`pgsurge --on-conflict update into ${t.table}: the position in the input of the row that last wrote each key (dropped when the load ends)`)};
          END IF;
        END $pgsurge$`);
    }
  }

  /** The chunk's first row's position: its file's place, then its byte (a Parquet chunk: row) offset. */
  const firstPosition = (chunk: Chunk, plan: InputPlan): string => String((plan.fileIndex << FILE_BITS) + BigInt(chunk.location.byteOffset));

  function writer(inner: ChunkWriter | undefined): KeyedWriter {
    async function send(client: pg.Client, chunk: Chunk, begin: boolean): Promise<ChunkResult> {
      const runs = runsOf(chunk);
      if (runs !== undefined) {
        // A lane's part in runs of distinct keys, in file order (`LaneSpec.inRuns`), in one transaction.
        let loaded = 0;
        let skipped = 0;
        for (const [i, run] of runs.entries()) {
          const r = await send(client, run, begin && i === 0);
          loaded += r.loaded;
          skipped += r.skipped;
        }
        return { loaded, skipped };
      }
      const plan = planOf(chunk);
      const columns = chunk.target.columns ?? plan.columns;
      const id = columns.join('\u0000');
      let sql = plan.statements.get(id);
      if (sql === undefined) plan.statements.set(id, (sql = statementsFor(plan, spec.action, columns)));
      if (!stageTables.has(sql.stage)) stageTables.set(sql.stage, chunk.target.table);
      // A lane's part whose keys all differ is applied as it is; else each key's last row is found by ctid.
      const distinct = sql.kept === true && hasDistinctKeys(chunk);
      // A kept staging table is empty at a transaction's start (its last COMMIT emptied it, a ROLLBACK undid its rows);
      // emptied again where ctid must follow COPY's order (a table emptied in this transaction, then filled by one COPY).
      await client.query(`${begin ? 'BEGIN; ' : ''}${sql.stageSql}${sql.kept && (!begin || !distinct) ? `; TRUNCATE pg_temp.${sql.stage}` : ''}`);
      const staged: Chunk = { ...chunk, target: { ...chunk.target, table: sql.stage, schema: 'pg_temp', columns } };
      const read = inner !== undefined ? (await inner.writeRows(client, staged)).loaded : await streamCopy(client, copySql(staged.target), chunk.data);
      await firstRows(client, sql, distinct);
      const applied =
        plan.lanes !== undefined
          ? await client.query(distinct ? sql.distinctSql! : sql.applySql)
          : await client.query(sql.applySql, spec.action === 'update' ? [firstPosition(chunk, plan)] : []);
      // The two-step form counts its rows in its one result row; the one-step form in its row count.
      const counted = (applied.rows[0] as { applied?: string } | undefined)?.applied;
      const done = counted !== undefined ? Number(counted) : (applied.rowCount ?? 0);
      return { loaded: done, skipped: read - done };
    }
    return {
      name: spec.action === 'update' ? 'upsert' : 'delete',
      laneRouting: () => (useLanes ? routing : undefined),
      readsBy: { '--key': spec.key?.join(','), '--update-columns': spec.updateColumns?.join(',') },
      wire: spec.wire,
      async prepare(client) {
        await inner?.prepare?.(client);
      },
      writeRows: (client, chunk) => send(client, chunk, false),
      beginAndWriteRows: (client, chunk) => send(client, chunk, true),
      failedRecord: copyWriter.failedRecord!.bind(copyWriter),
      ...(inner === undefined ? {} : { refusedWriter: writer(undefined) }),
      wireReport: () => (binary?.wireReport?.() ?? []).map((t) => ({ ...t, table: stageTables.get(t.table) ?? t.table })),
      async planLoad(client, load) {
        if (load.part) throw new LoadError('bad-option', `--part splits a load between processes: ${spec.action === 'update' ? '--on-conflict update' : '--mode delete'} runs as one (with -w for parallel workers)`, { hint: 'drop --part' });
        if (load.citus) throw new LoadError('bad-option', `${spec.action === 'update' ? '--on-conflict update' : '--mode delete'} does not load into a Citus distributed table yet`, { hint: 'load through --on-conflict skip, or into a local table' });
        dropAtEnd = !load.withLedger;
        for (const [i, input] of load.inputs.entries()) plans.set(input.file, await planInput(client, input, i, load));
        useLanes = spec.action === 'update' && (await choseLanes(client, plans, orderTables));
        if (spec.action === 'update' && !useLanes && (spec.workers ?? 1) > 1) refuseOutOfOrder(load.inputs, plans);
        await makeOrderTables(client);
      },
      async endLoad(client, completed) {
        // A finished load (or one without the ledger, which cannot be resumed) needs its order tables no more.
        if (!completed && !dropAtEnd) return;
        for (const order of orderTables.keys()) await client.query(`DROP TABLE IF EXISTS ${order}`);
      },
    };
  }
  return writer(binary);
}
