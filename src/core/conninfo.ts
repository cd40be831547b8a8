// Kept over pg-connection-string (URLs only: no key=value nor service=; refuses several hosts with ports, keeps a bad %-escape and %2F in dbname, names dbname `database`, reads sslcert files, warns on stderr).
import { LoadError } from './load-error.js';

/**
 * libpq's connection strings, read as psql reads them: a URL (`postgresql://user:pw@host:port/db?k=v`)
 * or key=value pairs (`host=db1 dbname=prod password='a b\'c'`). Pure: no environment, no files.
 *
 * Every error message is built from the masked string (`maskConninfo`), never from the
 * input: a malformed string's password cannot reach a message, whatever is wrong with it.
 */
export type Conninfo = Record<string, string>;

/** The keywords pgsurge honours (libpq's names); anything else is refused with its name, so a typo is not silently ignored. */
export const CONNINFO_KEYS = [
  'host',
  'hostaddr',
  'port',
  'dbname',
  'user',
  'password',
  'passfile',
  'service',
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'application_name',
  'fallback_application_name',
  'connect_timeout',
  'options',
  'keepalives',
  'keepalives_idle',
  'target_session_attrs',
  'client_encoding',
] as const;
const KNOWN = new Set<string>(CONNINFO_KEYS);

const URL_SCHEME = /^postgres(?:ql)?:\/\//i;

export function isConnUrl(s: string): boolean {
  return URL_SCHEME.test(s);
}

/**
 * The string with every password hidden, whatever shape it is in: safe to print. In a
 * URL, everything from the user's `:` to the last `@` goes (an unencoded `@`, `/` or `#`
 * in the password stays hidden), and so does a `password=` query value; in key=value
 * form, a `password=` value, quoted or not, goes. Masking more than needed is the point.
 */
export function maskConninfo(s: string): string {
  let out = s;
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)/i.exec(out);
  if (scheme) {
    const rest = out.slice(scheme[1]!.length);
    const at = rest.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = rest.slice(0, at);
      const colon = userinfo.indexOf(':');
      if (colon >= 0) out = `${scheme[1]}${userinfo.slice(0, colon)}:***${rest.slice(at)}`;
    }
    return out.replace(/([?&]password=)[^&]*/gi, '$1***');
  }
  // Not a URL nor key=value but shaped like credentials (`me:pw@host`, a scheme mistyped away): hide from the ':' to the last '@'.
  const creds = /^([^\s=:/@]*):(.*)@([^@]*)$/s.exec(out);
  if (creds && !creds[1]!.includes('=')) return `${creds[1]}:***@${creds[3]}`;
  // key=value: a well-quoted value ends at its quote; anything else (unquoted, or a quote
  // never closed, or blanks that should have been quoted) is hidden up to the next known keyword.
  const nextKey = new RegExp(`(?=\\s+(?:${CONNINFO_KEYS.join('|')})\\s*=|$)`);
  return out.replace(new RegExp(`(\\bpassword\\s*=\\s*)('(?:[^'\\\\]|\\\\.)*'(?=\\s|$)|'[^]*$|[^]*?${nextKey.source})`, 'gi'), '$1***');
}

function bad(masked: string, what: string, hint?: string): LoadError {
  return new LoadError('bad-option', `--db ${masked}: ${what}`, hint === undefined ? {} : { hint });
}

/**
 * A piece of the input, quoted for a message only when the string holds no password: in a
 * malformed string any token may be a piece of one (`password=a b` makes `b` a keyword).
 */
function token(original: string, masked: string, piece: string): string {
  return original === masked ? ` "${piece.slice(0, 40)}"` : '';
}

/** A URL or key=value string → libpq's keywords (URL parts mapped to host, port, dbname, user, password). */
export function parseConninfo(s: string): Conninfo {
  const params = isConnUrl(s) ? parseUrl(s) : parseKeyValue(s);
  const masked = maskConninfo(s);
  for (const key of Object.keys(params)) {
    if (!KNOWN.has(key)) throw bad(masked, `unknown connection option${token(s, masked, key)}`, `pgsurge takes libpq's keywords: ${CONNINFO_KEYS.join(', ')}`);
  }
  if (params.port !== undefined && !/^\d{1,5}(,\d{1,5})*$/.test(params.port)) throw bad(masked, `the port must be a number${token(s, masked, params.port)}`);
  return params;
}

/** `key=value key2='quoted \' value'`, as libpq's conninfo_parse reads it. */
export function parseKeyValue(s: string): Conninfo {
  const masked = maskConninfo(s);
  const out: Conninfo = {};
  let i = 0;
  const blank = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';
  while (i < s.length) {
    while (blank(s[i])) i++;
    if (i >= s.length) break;
    const keyStart = i;
    while (i < s.length && s[i] !== '=' && !blank(s[i])) i++;
    const key = s.slice(keyStart, i);
    while (blank(s[i])) i++;
    if (s[i] !== '=') {
      if (key.includes('://') || key.includes('@') || key.includes(':')) {
        throw bad(masked, 'not a connection string', 'give a URL that starts with postgresql:// or key=value pairs (host=… dbname=…)');
      }
      throw bad(masked, `missing "=" after a keyword${token(s, masked, key)}`, "key=value pairs: host=db1 port=5432 dbname=prod user=me (quote a value that holds blanks: password='a b')");
    }
    i++;
    while (blank(s[i])) i++;
    let value = '';
    if (s[i] === "'") {
      i++;
      let closed = false;
      while (i < s.length) {
        const c = s[i]!;
        if (c === '\\' && i + 1 < s.length) {
          value += s[i + 1];
          i += 2;
        } else if (c === "'") {
          closed = true;
          i++;
          break;
        } else {
          value += c;
          i++;
        }
      }
      if (!closed) throw bad(masked, `unterminated quoted value${token(s, masked, key)}`, "quote with '…', escaping a ' or \\ inside as \\' or \\\\");
    } else {
      while (i < s.length && !blank(s[i])) {
        if (s[i] === '\\' && i + 1 < s.length) {
          value += s[i + 1];
          i += 2;
        } else value += s[i++];
      }
    }
    if (key === '') throw bad(masked, 'a value without a keyword');
    out[key] = value;
  }
  return out;
}

function decode(masked: string, part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw bad(masked, `bad percent-encoding in the ${what}`, 'percent-encode special characters: @ is %40, / is %2F, : is %3A, # is %23, ? is %3F, % is %25');
  }
}

/** `postgresql://[user[:password]@][host][:port][,…][/dbname][?key=value&…]`, as libpq's conninfo_uri_parse reads it. */
export function parseUrl(s: string): Conninfo {
  const masked = maskConninfo(s);
  const out: Conninfo = {};
  let rest = s.replace(URL_SCHEME, '');
  if (/\s/.test(rest)) throw bad(masked, 'a URL cannot hold blanks', 'percent-encode them (%20), or use key=value form');
  if (rest.includes('#')) throw bad(masked, 'a URL cannot hold "#"', 'percent-encode it as %23 (in a password too)');
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  // libpq takes the first '@' before the first '/' as the end of the credentials.
  const slash = rest.indexOf('/');
  const authorityEnd = slash >= 0 ? slash : rest.length;
  const at = rest.slice(0, authorityEnd).indexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const colon = userinfo.indexOf(':');
    const user = colon >= 0 ? userinfo.slice(0, colon) : userinfo;
    if (user !== '') out.user = decode(masked, user, 'user name');
    if (colon >= 0) out.password = decode(masked, userinfo.slice(colon + 1), 'password');
    rest = rest.slice(at + 1);
  }
  const slash2 = rest.indexOf('/');
  const hostPart = slash2 >= 0 ? rest.slice(0, slash2) : rest;
  const dbPart = slash2 >= 0 ? rest.slice(slash2 + 1) : '';
  if (hostPart.includes('@')) throw bad(masked, 'more than one "@" before the host', 'percent-encode an @ in the user name or password as %40');
  const hosts: string[] = [];
  const ports: string[] = [];
  for (const spec of hostPart === '' ? [] : hostPart.split(',')) {
    let host = spec;
    let port = '';
    if (spec.startsWith('[')) {
      const close = spec.indexOf(']');
      if (close < 0) throw bad(masked, 'an IPv6 address without its closing "]"');
      host = spec.slice(1, close);
      const after = spec.slice(close + 1);
      if (after !== '' && !after.startsWith(':')) throw bad(masked, `unexpected text${token(s, masked, after)} after the IPv6 address`);
      port = after.slice(1);
    } else {
      const colon = spec.lastIndexOf(':');
      if (colon >= 0) {
        host = spec.slice(0, colon);
        port = spec.slice(colon + 1);
      }
    }
    if (port !== '' && !/^\d{1,5}$/.test(port)) throw bad(masked, `the port must be a number${token(s, masked, port)}`, 'percent-encode a ":", "/" or "?" in the password (%3A, %2F, %3F)');
    hosts.push(decode(masked, host, 'host'));
    ports.push(port);
  }
  if (hosts.some((h) => h !== '')) out.host = hosts.join(',');
  if (ports.some((p) => p !== '')) out.port = ports.join(',');
  if (dbPart !== '') {
    if (dbPart.includes('/')) throw bad(masked, 'a "/" in the database name', 'percent-encode it as %2F (in a password too)');
    out.dbname = decode(masked, dbPart, 'database name');
  }
  for (const pair of query === '' ? [] : query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw bad(masked, `a query parameter without "="${token(s, masked, pair)}`, 'percent-encode a "?" or "&" in the password (%3F, %26)');
    let key = decode(masked, pair.slice(0, eq), 'query parameter');
    // libpq's aliases in URLs (JDBC habits)
    if (key === 'ssl' && pair.slice(eq + 1) === 'true') {
      out.sslmode = 'require';
      continue;
    }
    if (key === 'database') key = 'dbname';
    out[key] = decode(masked, pair.slice(eq + 1), `value of a query parameter${token(s, masked, key)}`);
  }
  return out;
}
