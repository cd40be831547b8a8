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

/**
 * PostgreSQL's reserved and type/function-name keywords (`pg_get_keywords()`, catcodes R
 * and T): names a column or table can have only quoted. Unreserved and column-name
 * keywords (`name`, `type`, `date`, `int`) need no quotes there.
 */
const RESERVED = new Set(
  ('all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column concurrently ' +
    'constraint create cross current_catalog current_date current_role current_schema current_time current_timestamp current_user default ' +
    'deferrable desc distinct do else end except false fetch for foreign freeze from full grant group having ilike in initially inner ' +
    'intersect into is isnull join lateral leading left like limit localtime localtimestamp natural not notnull null offset on only or ' +
    'order outer overlaps placing primary references returning right select session_user similar some symmetric system_user table tablesample ' +
    'then to trailing true union unique user using variadic verbose when where window with').split(' '),
);

/** A keyword a column or table can be named only quoted (`select`, `user`; not `name` or `date`). */
export function isReservedWord(name: string): boolean {
  return RESERVED.has(name);
}

/** An identifier as a DBA types it: bare when SQL reads it back unchanged (lower case, no keyword), else double-quoted. */
export function sqlIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) && !RESERVED.has(name) && Buffer.byteLength(name) < 64 ? name : quoteIdent(name);
}

/** `schema.table` or `table`, each part quoted only where it must be (`sqlIdent`). */
export function sqlQualifiedName(table: string, schema?: string): string {
  return schema === undefined ? sqlIdent(table) : `${sqlIdent(schema)}.${sqlIdent(table)}`;
}
