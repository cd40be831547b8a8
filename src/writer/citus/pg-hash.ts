/**
 * PostgreSQL's hash functions, byte for byte (`src/common/hashfn.c`: Bob Jenkins's lookup3
 * as `hash_bytes` and `hash_bytes_uint32`, and the type support functions in
 * `src/backend/access/hash/hashfunc.c` that call them), as Citus uses them to put a row
 * of a hash-distributed table in a shard: the distribution column's hash support
 * function (`hashint2`, `hashint4`, `hashint8`, `hashtext`), read as a signed 32-bit
 * value, falls in exactly one shard's `[shardminvalue, shardmaxvalue]`.
 *
 * Everything is unsigned 32-bit arithmetic: `>>> 0` after each step, and `Math.imul` is
 * not needed (lookup3 only adds, subtracts, xors and rotates). The results match a
 * little-endian server; PostgreSQL's big-endian build hashes byte strings differently
 * (`hashtext` on a big-endian server is not this), which the caller must rule out.
 */

function rot(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** lookup3's `final(a, b, c)`; returns c. */
function final(a: number, b: number, c: number): number {
  c = ((c ^ b) - rot(b, 14)) >>> 0;
  a = ((a ^ c) - rot(c, 11)) >>> 0;
  b = ((b ^ a) - rot(a, 25)) >>> 0;
  c = ((c ^ b) - rot(b, 16)) >>> 0;
  a = ((a ^ c) - rot(c, 4)) >>> 0;
  b = ((b ^ a) - rot(a, 14)) >>> 0;
  c = ((c ^ b) - rot(b, 24)) >>> 0;
  return c;
}

/** `hash_bytes_uint32(k)`: the hash of a 32-bit value, unsigned. */
export function hashUint32(k: number): number {
  const init = (0x9e3779b9 + 4 + 3923095) >>> 0;
  return final((init + (k >>> 0)) >>> 0, init, init);
}

/** Little-endian 32-bit word at `at` (what the aligned and unaligned paths both read on a little-endian server). */
function word(k: Uint8Array, at: number): number {
  return (k[at]! | (k[at + 1]! << 8) | (k[at + 2]! << 16) | (k[at + 3]! << 24)) >>> 0;
}

/** `hash_bytes(k, len)` (`hash_any`): the hash of a byte string, unsigned. */
export function hashBytes(k: Uint8Array, from = 0, to = k.length): number {
  let len = to - from;
  let a = (0x9e3779b9 + len + 3923095) >>> 0;
  let b = a;
  let c = a;
  let at = from;
  while (len >= 12) {
    a = (a + word(k, at)) >>> 0;
    b = (b + word(k, at + 4)) >>> 0;
    c = (c + word(k, at + 8)) >>> 0;
    // mix(a, b, c)
    a = ((a - c) >>> 0) ^ rot(c, 4);
    c = (c + b) >>> 0;
    b = ((b - a) >>> 0) ^ rot(a, 6);
    a = (a + c) >>> 0;
    c = ((c - b) >>> 0) ^ rot(b, 8);
    b = (b + a) >>> 0;
    a = ((a - c) >>> 0) ^ rot(c, 16);
    c = (c + b) >>> 0;
    b = ((b - a) >>> 0) ^ rot(a, 19);
    a = (a + c) >>> 0;
    c = ((c - b) >>> 0) ^ rot(b, 4);
    b = (b + a) >>> 0;
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    at += 12;
    len -= 12;
  }
  // The last 11 bytes, little-endian; the lowest byte of c is reserved for the length.
  // (C's switch with fall-through, as cumulative tests: TypeScript's noFallthroughCasesInSwitch.)
  if (len >= 8) {
    if (len >= 11) c = (c + (k[at + 10]! << 24)) >>> 0;
    if (len >= 10) c = (c + (k[at + 9]! << 16)) >>> 0;
    if (len >= 9) c = (c + (k[at + 8]! << 8)) >>> 0;
    b = (b + word(k, at + 4)) >>> 0;
    a = (a + word(k, at)) >>> 0;
  } else if (len >= 4) {
    if (len >= 7) b = (b + (k[at + 6]! << 16)) >>> 0;
    if (len >= 6) b = (b + (k[at + 5]! << 8)) >>> 0;
    if (len >= 5) b = (b + k[at + 4]!) >>> 0;
    a = (a + word(k, at)) >>> 0;
  } else {
    if (len >= 3) a = (a + (k[at + 2]! << 16)) >>> 0;
    if (len >= 2) a = (a + (k[at + 1]! << 8)) >>> 0;
    if (len >= 1) a = (a + k[at]!) >>> 0;
  }
  return final(a, b, c);
}

/** Unsigned 32-bit → the signed int4 PostgreSQL returns (and Citus compares with shard ranges). */
export function asInt32(h: number): number {
  return h | 0;
}

/** `hashint2` / `hashint4`: the value (sign-extended to 32 bits) through `hash_uint32`. */
export function hashInt4(value: number): number {
  return asInt32(hashUint32(value >>> 0));
}

const LOW32 = 0xffffffffn;

/**
 * `hashint8`: so that an int8 equal to an int4 hashes alike, the high half is folded into
 * the low one (xored, or its complement xored for a negative value), then `hash_uint32`.
 */
export function hashInt8(value: bigint): number {
  const v = BigInt.asIntN(64, value);
  let lo = Number(v & LOW32);
  const hi = Number((v >> 32n) & LOW32);
  lo = (lo ^ (v >= 0n ? hi : ~hi)) >>> 0;
  return asInt32(hashUint32(lo));
}

/** `hashint8` of a safe integer, without BigInt: the same halves, by floor division and two's complement. */
export function hashInt8Number(value: number): number {
  if (!Number.isSafeInteger(value)) throw new Error(`internal: ${value} is not a safe integer`);
  const hi = Math.floor(value / 4294967296) >>> 0;
  const lo = (value - Math.floor(value / 4294967296) * 4294967296) >>> 0;
  return asInt32(hashUint32((lo ^ (value >= 0 ? hi : ~hi)) >>> 0));
}

/** `hashtext` under a deterministic collation: `hash_any` of the value's bytes in the server's encoding. */
export function hashText(bytes: Uint8Array, from = 0, to = bytes.length): number {
  return asInt32(hashBytes(bytes, from, to));
}
