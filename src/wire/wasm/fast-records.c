/*
 * The binary wire's fast records, in WebAssembly: COPY text records -> binary COPY tuples,
 * for exactly the forms the JavaScript fast paths read (src/wire/fast-fields.ts), writing
 * the same bytes. A record with any field outside those forms (a NULL, an escape, non-ASCII
 * text, a longer number, a date that is not YYYY-MM-DD, a field too many or too few, a
 * carriage return) is not encoded here: the call stops before it and the record splitter
 * encodes it in JavaScript, by its fast paths and its encoders' exact general ones, then
 * calls again. So this file decides nothing the JavaScript does not decide the same way,
 * and test/unit/wire/wasm-records.test.ts compares the two byte for byte.
 *
 * Built by scripts/build-wasm.sh (clang --target=wasm32, no libc) into
 * src/wire/wasm/fast-records-wasm.ts; the memory is the caller's (imported), laid out from
 * __heap_base by src/wire/wasm-records.ts.
 */
typedef unsigned char u8;
typedef signed char i8;
typedef unsigned int u32;
typedef int i32;
typedef long long i64;
typedef unsigned long long u64;

#include "../../codecs/wasm/numeric-send.h"

/* The column kinds, as src/wire/fast-fields.ts numbers them. */
#define KIND_INT2 1
#define KIND_INT4 2
#define KIND_INT8 3
#define KIND_NUMERIC 4
#define KIND_DATE 5
#define KIND_TEXT 6

#define STOP_END 0  /* every record of the input is encoded */
#define STOP_SLOW 1 /* the record at `consumed` needs the JavaScript */
#define STOP_ROOM 2 /* the output is full before the record at `consumed` */

/* The last call's results: input bytes of the whole records encoded, output bytes, why it stopped. */
i32 r_consumed;
i32 r_produced;
i32 r_stop;

static inline void put32(u8 *b, u32 v) {
  b[0] = v >> 24;
  b[1] = v >> 16;
  b[2] = v >> 8;
  b[3] = v;
}

static inline void put16(u8 *b, u32 v) {
  b[0] = v >> 8;
  b[1] = v;
}

static const i32 DAYS_IN_MONTH[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

static inline int is_leap(i32 y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Days since 2000-01-01 of a proleptic Gregorian date, year >= 1 (H. Hinnant's days_from_civil). */
static inline i32 days_since_2000(i32 y, i32 m, i32 d) {
  y -= m <= 2;
  const i32 era = y / 400;
  const i32 yoe = y - era * 400;
  const i32 doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const i32 doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468 - 10957;
}

/*
 * Encodes the whole records of d[0, len) while every field is in a fast form; returns the
 * number of records encoded, sets r_consumed, r_produced, r_stop. `kinds[ncols]`: each
 * column's kind; `stops[256]`: 1 for the bytes that end fast text (textStops); `nul`: the
 * NULL string, a field equal to it goes to the JavaScript (which writes the NULL).
 * Each record ends in "\n" (the caller keeps CR-NL input off this path).
 */
i32 encode_records(const u8 *d, i32 len, const i8 *kinds, i32 ncols, i32 delim, const u8 *stops, const u8 *nul, i32 nul_len, u8 *out, i32 out_cap) {
  i32 p = 0, q = 0, records = 0;
  const i32 last = ncols - 1;
  i32 stop = STOP_END;
  while (p < len) {
    const i32 record_start = p, out_start = q;
    int whole = 0;
    if (out_cap - q < 2) {
      stop = STOP_ROOM;
      break;
    }
    put16(out + q, (u32)ncols);
    q += 2;
    for (i32 col = 0;; col++) {
      const i32 s = p;
      const i32 kind = kinds[col];
      i32 e;
      if (kind == KIND_TEXT) {
        i32 x = s;
        while (x < len && !stops[d[x]]) x++;
        /* A field ended by anything but the delimiter or the newline is the JavaScript's
           (found before the room check: a long field that is not fast grows nothing) */
        if (x >= len || (d[x] != delim && d[x] != '\n')) break;
        const i32 n = x - s;
        if (out_cap - q < 4 + n) {
          stop = STOP_ROOM;
          break;
        }
        put32(out + q, (u32)n);
        __builtin_memcpy(out + q + 4, d + s, (unsigned long)n);
        q += 4 + n;
        e = x;
      } else if (kind == KIND_NUMERIC) {
        /* -?[0-9]{0,8}(\.[0-9]{0,4})?, a digit in all: fastNumeric's form, numeric_send's bytes (at most 18 here: 3 digits) */
        if (out_cap - q < 18) {
          stop = STOP_ROOM;
          break;
        }
        const int neg = s < len && d[s] == '-';
        i32 x = neg ? s + 1 : s;
        const i32 int_start = x;
        u32 iv = 0;
        while (x < len && (u32)(d[x] - '0') <= 9 && x - int_start <= 8) iv = iv * 10 + (u32)(d[x++] - '0');
        const i32 n_int = x - int_start;
        if (n_int > 8) break;
        u32 fv = 0;
        i32 dscale = 0;
        if (x < len && d[x] == '.') {
          const i32 frac_start = ++x;
          while (x < len && (u32)(d[x] - '0') <= 9 && x - frac_start <= 4) fv = fv * 10 + (u32)(d[x++] - '0');
          dscale = x - frac_start;
          if (dscale > 4) break;
        }
        if (n_int == 0 && dscale == 0) break;
        const i64 v = (i64)iv * NUMERIC_POW10[dscale] + fv;
        q = (i32)(numeric_send(out + q, neg ? -v : v, (u32)dscale) - out);
        e = x;
      } else if (kind == KIND_DATE) {
        /* YYYY-MM-DD, a day that exists, year >= 1 */
        if (out_cap - q < 8) {
          stop = STOP_ROOM;
          break;
        }
        if (s + 10 > len) break;
        const u8 *c = d + s;
        if (c[4] != '-' || c[7] != '-') break;
        const u32 y0 = c[0] - '0', y1 = c[1] - '0', y2 = c[2] - '0', y3 = c[3] - '0';
        const u32 m0 = c[5] - '0', m1 = c[6] - '0', d0 = c[8] - '0', d1 = c[9] - '0';
        if (y0 > 9 || y1 > 9 || y2 > 9 || y3 > 9 || m0 > 9 || m1 > 9 || d0 > 9 || d1 > 9) break;
        const i32 year = (i32)(y0 * 1000 + y1 * 100 + y2 * 10 + y3), month = (i32)(m0 * 10 + m1), day = (i32)(d0 * 10 + d1);
        if (year == 0 || month == 0 || month > 12 || day == 0) break;
        if (day > DAYS_IN_MONTH[month] + (month == 2 && is_leap(year))) break;
        put32(out + q, 4);
        put32(out + q + 4, (u32)days_since_2000(year, month, day));
        q += 8;
        e = s + 10;
      } else if (kind == KIND_INT4 || kind == KIND_INT8 || kind == KIND_INT2) {
        /* -?[0-9]{1,9} / {1,15} / {1,4} */
        if (out_cap - q < 12) {
          stop = STOP_ROOM;
          break;
        }
        const i32 max_digits = kind == KIND_INT4 ? 9 : kind == KIND_INT8 ? 15 : 4;
        const int neg = s < len && d[s] == '-';
        i32 x = neg ? s + 1 : s;
        const i32 digits = x;
        i64 v = 0;
        while (x < len && (u32)(d[x] - '0') <= 9 && x - digits <= max_digits) v = v * 10 + (d[x++] - '0');
        const i32 n = x - digits;
        if (n == 0 || n > max_digits) break;
        if (neg) v = -v;
        if (kind == KIND_INT4) {
          put32(out + q, 4);
          put32(out + q + 4, (u32)v);
          q += 8;
        } else if (kind == KIND_INT8) {
          put32(out + q, 8);
          put32(out + q + 4, (u32)((u64)v >> 32));
          put32(out + q + 8, (u32)v);
          q += 12;
        } else {
          put32(out + q, 2);
          put16(out + q + 4, (u32)v);
          q += 6;
        }
        e = x;
      } else {
        break;
      }
      /* Kept only when the form ends the field, the field is not the NULL string, and the
         byte after it is the delimiter before the last column or the newline after it. */
      if (e >= len) break;
      if (e - s == nul_len) {
        i32 k = 0;
        while (k < nul_len && d[s + k] == nul[k]) k++;
        if (k == nul_len) break;
      }
      const u8 c = d[e];
      if (c == delim && col < last) {
        p = e + 1;
        continue;
      }
      if (c == '\n' && col == last) {
        p = e + 1;
        whole = 1;
      }
      break;
    }
    if (!whole) {
      if (stop == STOP_END) stop = STOP_SLOW;
      p = record_start;
      q = out_start;
      break;
    }
    records++;
  }
  r_consumed = p;
  r_produced = q;
  r_stop = stop;
  return records;
}
