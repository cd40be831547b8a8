/** SQL identifiers are always quoted: names with quotes, spaces, semicolons or upper case stay what they are. */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** `schema.table`, or `table` alone (resolved through the search_path). */
export function qualifiedName(table: string, schema?: string): string {
  return schema === undefined ? quoteIdent(table) : `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

/**
 * A table named as psql and pg_dump users write it: `lineitem`, `public.lineitem`,
 * `"My Schema"."Line Item"`. Unquoted parts fold to lower case (as SQL does); quoted parts
 * keep case, blanks and dots, with `""` for a quote. Throws a message without the flag,
 * for the caller to name it.
 */
export function splitQualifiedName(text: string): { schema?: string; table: string } {
  const parts: string[] = [];
  let cur = '';
  let quotedAny = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const start = i;
      i++;
      let closed = false;
      while (i < text.length) {
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cur += '"';
            i += 2;
            continue;
          }
          closed = true;
          i++;
          break;
        }
        cur += text[i++];
      }
      if (!closed) throw new Error(`unterminated quoted identifier starting at character ${start + 1}`);
      quotedAny = true;
    } else if (c === '.') {
      if (cur === '' && !quotedAny) throw new Error('an empty name before a "."');
      parts.push(cur);
      cur = '';
      quotedAny = false;
      i++;
    } else {
      // SQL folds unquoted names to lower case: ASCII letters only, as PostgreSQL's downcase_identifier does in UTF-8.
      cur += c >= 'A' && c <= 'Z' ? c.toLowerCase() : c;
      i++;
    }
  }
  if (cur === '' && !quotedAny) throw new Error(parts.length > 0 ? 'an empty name after a "."' : 'an empty name');
  parts.push(cur);
  if (parts.length > 2) throw new Error('at most schema.table (a database name cannot be given here: name the database in --db)');
  return parts.length === 2 ? { schema: parts[0]!, table: parts[1]! } : { table: parts[0]! };
}
