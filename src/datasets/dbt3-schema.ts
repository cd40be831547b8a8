/**
 * The DBT-3 / TPC-H schema as the DBT-3 kit creates it for PostgreSQL: tables first
 * (loaded bare), then the keys and indexes the kit builds after its load.
 */

export const DBT3_TABLES = [
  'region',
  'nation',
  'supplier',
  'customer',
  'part',
  'partsupp',
  'orders',
  'lineitem',
] as const;
export type Dbt3Table = (typeof DBT3_TABLES)[number];

export function isDbt3Table(name: string): name is Dbt3Table {
  return (DBT3_TABLES as readonly string[]).includes(name);
}

/** Column lists, in file order. */
export const DBT3_COLUMNS: Record<Dbt3Table, readonly (readonly [string, string])[]> = {
  region: [
    ['r_regionkey', 'integer'],
    ['r_name', 'char(25)'],
    ['r_comment', 'varchar(152)'],
  ],
  nation: [
    ['n_nationkey', 'integer'],
    ['n_name', 'char(25)'],
    ['n_regionkey', 'integer'],
    ['n_comment', 'varchar(152)'],
  ],
  supplier: [
    ['s_suppkey', 'integer'],
    ['s_name', 'char(25)'],
    ['s_address', 'varchar(40)'],
    ['s_nationkey', 'integer'],
    ['s_phone', 'char(15)'],
    ['s_acctbal', 'numeric(15,2)'],
    ['s_comment', 'varchar(101)'],
  ],
  customer: [
    ['c_custkey', 'integer'],
    ['c_name', 'varchar(25)'],
    ['c_address', 'varchar(40)'],
    ['c_nationkey', 'integer'],
    ['c_phone', 'char(15)'],
    ['c_acctbal', 'numeric(15,2)'],
    ['c_mktsegment', 'char(10)'],
    ['c_comment', 'varchar(117)'],
  ],
  part: [
    ['p_partkey', 'integer'],
    ['p_name', 'varchar(55)'],
    ['p_mfgr', 'char(25)'],
    ['p_brand', 'char(10)'],
    ['p_type', 'varchar(25)'],
    ['p_size', 'integer'],
    ['p_container', 'char(10)'],
    ['p_retailprice', 'numeric(15,2)'],
    ['p_comment', 'varchar(23)'],
  ],
  partsupp: [
    ['ps_partkey', 'integer'],
    ['ps_suppkey', 'integer'],
    ['ps_availqty', 'integer'],
    ['ps_supplycost', 'numeric(15,2)'],
    ['ps_comment', 'varchar(199)'],
  ],
  orders: [
    ['o_orderkey', 'bigint'],
    ['o_custkey', 'integer'],
    ['o_orderstatus', 'char(1)'],
    ['o_totalprice', 'numeric(15,2)'],
    ['o_orderdate', 'date'],
    ['o_orderpriority', 'char(15)'],
    ['o_clerk', 'char(15)'],
    ['o_shippriority', 'integer'],
    ['o_comment', 'varchar(79)'],
  ],
  lineitem: [
    ['l_orderkey', 'bigint'],
    ['l_partkey', 'integer'],
    ['l_suppkey', 'integer'],
    ['l_linenumber', 'integer'],
    ['l_quantity', 'numeric(15,2)'],
    ['l_extendedprice', 'numeric(15,2)'],
    ['l_discount', 'numeric(15,2)'],
    ['l_tax', 'numeric(15,2)'],
    ['l_returnflag', 'char(1)'],
    ['l_linestatus', 'char(1)'],
    ['l_shipdate', 'date'],
    ['l_commitdate', 'date'],
    ['l_receiptdate', 'date'],
    ['l_shipinstruct', 'char(25)'],
    ['l_shipmode', 'char(10)'],
    ['l_comment', 'varchar(44)'],
  ],
};

/** Primary keys, built first after the load (the foreign keys need them). */
export const DBT3_PRIMARY_KEYS: Record<Dbt3Table, readonly string[]> = {
  region: ['r_regionkey'],
  nation: ['n_nationkey'],
  supplier: ['s_suppkey'],
  customer: ['c_custkey'],
  part: ['p_partkey'],
  partsupp: ['ps_partkey', 'ps_suppkey'],
  orders: ['o_orderkey'],
  lineitem: ['l_orderkey', 'l_linenumber'],
};

/** Foreign keys: [table, columns, referenced table, referenced columns]. */
export const DBT3_FOREIGN_KEYS: readonly (readonly [Dbt3Table, readonly string[], Dbt3Table, readonly string[]])[] = [
  ['nation', ['n_regionkey'], 'region', ['r_regionkey']],
  ['supplier', ['s_nationkey'], 'nation', ['n_nationkey']],
  ['customer', ['c_nationkey'], 'nation', ['n_nationkey']],
  ['partsupp', ['ps_partkey'], 'part', ['p_partkey']],
  ['partsupp', ['ps_suppkey'], 'supplier', ['s_suppkey']],
  ['orders', ['o_custkey'], 'customer', ['c_custkey']],
  ['lineitem', ['l_orderkey'], 'orders', ['o_orderkey']],
  ['lineitem', ['l_partkey', 'l_suppkey'], 'partsupp', ['ps_partkey', 'ps_suppkey']],
];

/** Secondary indexes the DBT-3 kit creates after its load: [name, table, columns]. */
export const DBT3_INDEXES: readonly (readonly [string, Dbt3Table, readonly string[]])[] = [
  ['i_l_shipdate', 'lineitem', ['l_shipdate']],
  ['i_l_suppkey_partkey', 'lineitem', ['l_partkey', 'l_suppkey']],
  ['i_l_partkey', 'lineitem', ['l_partkey']],
  ['i_l_suppkey', 'lineitem', ['l_suppkey']],
  ['i_l_receiptdate', 'lineitem', ['l_receiptdate']],
  ['i_l_orderkey', 'lineitem', ['l_orderkey']],
  ['i_l_orderkey_quantity', 'lineitem', ['l_orderkey', 'l_quantity']],
  ['i_l_commitdate', 'lineitem', ['l_commitdate']],
  ['i_c_nationkey', 'customer', ['c_nationkey']],
  ['i_o_orderdate', 'orders', ['o_orderdate']],
  ['i_o_custkey', 'orders', ['o_custkey']],
  ['i_s_nationkey', 'supplier', ['s_nationkey']],
  ['i_ps_partkey', 'partsupp', ['ps_partkey']],
  ['i_ps_suppkey', 'partsupp', ['ps_suppkey']],
  ['i_n_regionkey', 'nation', ['n_regionkey']],
];
