/** SQL identifiers are always quoted: names with quotes, spaces, semicolons or upper case stay what they are. */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** `schema.table`, or `table` alone (resolved through the search_path). */
export function qualifiedName(table: string, schema?: string): string {
  return schema === undefined ? quoteIdent(table) : `${quoteIdent(schema)}.${quoteIdent(table)}`;
}
