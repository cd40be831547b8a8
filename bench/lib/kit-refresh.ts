/*
 * The DBT-3 kit's way of running a refresh set, with psql (as its dbt3-pgsql-rf1 and
 * dbt3-pgsql-rf2 do, through temporary tables): RF1 copies orders.tbl.uK and lineitem.tbl.uK
 * into a temporary table each, then INSERT … SELECT into orders and lineitem, in one
 * transaction; RF2 copies delete.K into a temporary key table, indexes and analyzes it,
 * and DELETE … USING from lineitem and orders, in one transaction. dbgen's trailing `|`
 * lands in an extra column, dropped before the INSERT (the kit's patched dbgen writes none).
 * Used by bench/dbt3-refresh.ts and the refresh test.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { psqlPath } from './machine.js';

function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function ident(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/** The two psql scripts of set `set` for the files in `dir`, on the tables of `schema`. */
export function kitRefreshScripts(dir: string, set: number, schema: string): { rf1: string; rf2: string } {
  const file = (name: string): string => literal(path.resolve(dir, name));
  const table = (t: string): string => `${ident(schema)}.${t}`;
  const stage = (t: string, name: string): string[] => [
    `CREATE TEMPORARY TABLE tmp_${t}${set} (LIKE ${table(t)});`,
    `ALTER TABLE tmp_${t}${set} ADD COLUMN eol text;`,
    `\\copy tmp_${t}${set} FROM ${file(name)} WITH (DELIMITER '|')`,
    `ALTER TABLE tmp_${t}${set} DROP COLUMN eol;`,
    `INSERT INTO ${table(t)} SELECT * FROM tmp_${t}${set};`,
  ];
  const rf1 = ['BEGIN;', ...stage('orders', `orders.tbl.u${set}`), ...stage('lineitem', `lineitem.tbl.u${set}`), 'COMMIT;'].join('\n');
  const rf2 = [
    'BEGIN;',
    `CREATE TEMPORARY TABLE tmp_orderkey${set} (orderkey bigint, eol text);`,
    `\\copy tmp_orderkey${set} FROM ${file(`delete.${set}`)} WITH (DELIMITER '|')`,
    `CREATE INDEX ON tmp_orderkey${set} (orderkey);`,
    `ANALYZE tmp_orderkey${set};`,
    `DELETE FROM ${table('lineitem')} USING tmp_orderkey${set} WHERE l_orderkey = orderkey;`,
    `DELETE FROM ${table('orders')} USING tmp_orderkey${set} WHERE o_orderkey = orderkey;`,
    'COMMIT;',
  ].join('\n');
  return { rf1, rf2 };
}

/** Run one script with psql (`-X -v ON_ERROR_STOP=1`, as the kit); its wall seconds. */
export function runPsql(url: string, script: string): number {
  const started = performance.now();
  const r = spawnSync(psqlPath(), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url], { input: script, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql failed (${r.status}): ${r.stderr}`);
  return (performance.now() - started) / 1000;
}

/** RF1 then RF2 of one set the kit's way; their seconds. */
export function kitRefresh(url: string, dir: string, set: number, schema: string): { rf1: number; rf2: number } {
  const { rf1, rf2 } = kitRefreshScripts(dir, set, schema);
  return { rf1: runPsql(url, rf1), rf2: runPsql(url, rf2) };
}
