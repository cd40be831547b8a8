/*
 * numeric `v · 10^-scale` (|v| < 2^53, scale 0-8) as numeric_send gives it, for the
 * WebAssembly modules (src/wire/wasm/fast-records.c, src/input/parquet/wasm/parquet-kernels.c,
 * which include this file): the same routine as src/codecs/numeric.ts's putScaledNumeric,
 * base-10000 digits, the leading and trailing zero ones dropped, dscale = scale, zero as no
 * digits with weight 0 and a positive sign. Writes at most 24 bytes at `b` (the field's
 * length word first); returns the position after them. scripts/build-wasm.sh hashes this
 * file with each module's source.
 */
#ifndef PGSURGE_NUMERIC_SEND_H
#define PGSURGE_NUMERIC_SEND_H

static const unsigned int NUMERIC_POW10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
/* What a fraction of `scale` digits is multiplied by to fill whole base-10000 digits. */
static const unsigned int NUMERIC_GROUP_SCALE[9] = {1, 1000, 100, 10, 1, 1000, 100, 10, 1};

static inline unsigned char *numeric_digit(unsigned char *q, unsigned int g) {
  q[0] = (unsigned char)(g >> 8);
  q[1] = (unsigned char)g;
  return q + 2;
}

static inline unsigned char *numeric_send(unsigned char *b, long long v, unsigned int scale) {
  const int neg = v < 0;
  const unsigned long long a = neg ? (unsigned long long)(-v) : (unsigned long long)v;
  const unsigned long long whole = a / NUMERIC_POW10[scale];
  const unsigned int frac = (unsigned int)(a - whole * NUMERIC_POW10[scale]);
  /* The whole part's digits, most significant first (whole < 10^16: at most 4, the first not zero). */
  unsigned char *q = b + 12;
  int weight = -1;
  if (whole >= 100000000) {
    const unsigned int top = (unsigned int)(whole / 100000000), low = (unsigned int)(whole % 100000000);
    if (top >= 10000) {
      q = numeric_digit(numeric_digit(q, top / 10000), top % 10000);
      weight = 3;
    } else {
      q = numeric_digit(q, top);
      weight = 2;
    }
    q = numeric_digit(numeric_digit(q, low / 10000), low % 10000);
  } else if (whole >= 10000) {
    q = numeric_digit(numeric_digit(q, (unsigned int)whole / 10000), (unsigned int)whole % 10000);
    weight = 1;
  } else if (whole > 0) {
    q = numeric_digit(q, (unsigned int)whole);
    weight = 0;
  }
  /* Then the fraction padded to whole digits (scale 1-4: one, 5-8: two); a zero one before any other only lowers the weight. */
  if (scale > 4) {
    const unsigned int padded = frac * NUMERIC_GROUP_SCALE[scale], hi = padded / 10000;
    if (hi != 0 || q != b + 12) q = numeric_digit(q, hi);
    else weight--;
    q = numeric_digit(q, padded % 10000);
  } else if (scale > 0) {
    q = numeric_digit(q, frac * NUMERIC_GROUP_SCALE[scale]);
  }
  /* Trailing zero digits dropped; zero is no digits, weight 0, positive. */
  while (q > b + 12 && q[-1] == 0 && q[-2] == 0) q -= 2;
  const unsigned int ndigits = (unsigned int)(q - b - 12) >> 1, len = 8 + 2 * ndigits;
  if (ndigits == 0) weight = 0;
  b[0] = 0;
  b[1] = 0;
  b[2] = (unsigned char)(len >> 8);
  b[3] = (unsigned char)len;
  b[4] = 0;
  b[5] = (unsigned char)ndigits;
  b[6] = (unsigned char)(weight >> 8);
  b[7] = (unsigned char)weight;
  b[8] = neg && ndigits != 0 ? 0x40 : 0;
  b[9] = 0;
  b[10] = 0;
  b[11] = (unsigned char)scale;
  return q;
}

#endif
