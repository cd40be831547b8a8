import type pg from 'pg';
import { qualifiedName } from '../core/identifiers.js';
import type { Dbt3Table } from './dbt3-schema.js';

/**
 * How `dbt3 load` lays the DBT-3 tables out on a Citus cluster, the usual TPC-H-on-Citus
 * layout: the two big tables hash-distributed by order key and colocated (a lineitem row
 * and its order are in the same shard's node, so the order-key join and the
 * lineitem → orders foreign key stay on one node), the six small ones reference tables
 * (a copy on every node: every join with them is local, and every foreign key of the
 * kit is one Citus allows: distributed → reference and reference → reference). The
 * kit's primary keys all hold the distribution column (orders: o_orderkey; lineitem:
 * l_orderkey, l_linenumber), so every key and index of the kit is built as on one server.
 *
 * partsupp and part as reference tables are copied to every node, which is cheap up to
 * a few scale factors' worth and wasteful at SF 100 (partsupp is 80M rows there); then
 * distribute them by partkey, colocated, and drop lineitem's foreign key to partsupp
 * (Citus needs a distributed table's foreign key to a distributed table colocated).
 */
export const DBT3_CITUS_LAYOUT: Readonly<Record<Dbt3Table, { readonly distributeBy: string; readonly colocateWith?: Dbt3Table } | 'reference'>> = {
  orders: { distributeBy: 'o_orderkey' },
  lineitem: { distributeBy: 'l_orderkey', colocateWith: 'orders' },
  region: 'reference',
  nation: 'reference',
  supplier: 'reference',
  customer: 'reference',
  part: 'reference',
  partsupp: 'reference',
};

/** Whether the target database has the citus extension. */
export async function hasCitus(client: pg.Client): Promise<boolean> {
  return (await client.query<{ ok: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS ok")).rows[0]?.ok === true;
}

/**
 * Distributes the freshly created (empty) DBT-3 tables as `DBT3_CITUS_LAYOUT` says, the
 * colocated ones after the table they follow; returns the statements run.
 */
export async function distributeDbt3(client: pg.Client, tables: readonly Dbt3Table[], schema: string | undefined): Promise<string[]> {
  const ran: string[] = [];
  const order = [...tables].sort((a, b) => Number(colocated(a)) - Number(colocated(b)));
  for (const table of order) {
    const layout = DBT3_CITUS_LAYOUT[table];
    const name = qualifiedName(table, schema);
    const sql =
      layout === 'reference'
        ? `SELECT create_reference_table(${client.escapeLiteral(name)})`
        : `SELECT create_distributed_table(${client.escapeLiteral(name)}, ${client.escapeLiteral(layout.distributeBy)}${layout.colocateWith && tables.includes(layout.colocateWith) ? `, colocate_with => ${client.escapeLiteral(qualifiedName(layout.colocateWith, schema))}` : ''})`;
    await client.query(sql);
    ran.push(sql);
  }
  return ran;
}

function colocated(table: Dbt3Table): boolean {
  const layout = DBT3_CITUS_LAYOUT[table];
  return layout !== 'reference' && layout.colocateWith !== undefined;
}
