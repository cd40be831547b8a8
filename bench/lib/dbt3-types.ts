/** The catalog's typname for a DDL type as the built-in schemas write it (`numeric(15,2)` → `numeric`), for benches that skip the catalog. */
export function typnameOf(sqlType: string): string {
  const base = sqlType.replace(/\(.*\)/, '').trim();
  return ({ integer: 'int4', bigint: 'int8', smallint: 'int2', numeric: 'numeric', decimal: 'numeric', date: 'date', char: 'bpchar', varchar: 'varchar', text: 'text' } as Record<string, string>)[base] ?? base;
}
