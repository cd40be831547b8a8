/**
 * A string literal for the few places SQL takes no parameter (COPY's options): quoted as
 * PostgreSQL's quote_literal does, so it reads the same whatever standard_conforming_strings is.
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\u0000')) throw new Error('a SQL literal cannot hold a NUL character');
  const quoted = `'${value.replace(/'/g, "''")}'`;
  return value.includes('\\') ? `E${quoted.replace(/\\/g, '\\\\')}` : quoted;
}
