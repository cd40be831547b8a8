/*
 * The flat Parquet decoder's three hot loops, in WebAssembly: snappy decompression of a
 * page, the RLE/bit-packed hybrid of its dictionary indexes, and binary COPY tuples from
 * the decoded columns. hysnappy (hyparquet's snappy) copies each page into its module's
 * memory and out again into a fresh array (a third of a SF 1 lineitem load's decoding, and
 * most of its garbage); here the page is decompressed into this module's memory and read
 * there, and the indexes are unpacked there and checked against the dictionary in the same pass.
 * A big page is decompressed a step at a time (snappy_step), so that the load's event loop
 * runs between steps.
 *
 * The memory is the caller's (imported, shared) and laid out by
 * src/source/parquet/parquet-kernels.ts: every region has at least SLACK (16) bytes after
 * it, so the copies below may read and write up to 15 bytes past a value's end (the bytes
 * past an output's end are the slack's, never read as values). Errors are negative
 * returns; nothing here traps on bad input, whatever its bytes.
 *
 * Built by scripts/build-wasm.sh into src/source/parquet/wasm/parquet-kernels-wasm.ts.
 * test/unit/source/parquet-kernels.test.ts compares snappy with hysnappy, and
 * test/unit/source/parquet-flat-decoder.test.ts the hybrid with our JavaScript reader and
 * hyparquet's, and the tuples with writeFlatTuples, on every value.
 */
typedef unsigned char u8;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;

#include "../../../codecs/wasm/numeric-send.h"

#define ERR_HEADER -1   /* the preamble (uncompressed length) is not a varint */
#define ERR_LENGTH -2   /* the preamble's length is not the page header's */
#define ERR_INPUT -3    /* an element reaches past the input */
#define ERR_OUTPUT -4   /* an element reaches past the output */
#define ERR_OFFSET -5   /* a copy from before the output's start (or offset 0) */
#define ERR_SHORT -6    /* the input ended before the output was full */

/* hybrid's second result: the first k whose value is at or past `limit`, or -1. */
i32 r_bad;

static inline u64 load64(const u8 *p) {
  u64 v;
  __builtin_memcpy(&v, p, 8);
  return v;
}

static inline void store64(u8 *p, u64 v) { __builtin_memcpy(p, &v, 8); }

static inline u32 load32(const u8 *p) {
  u32 v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

static const u32 WORD_MASK[5] = {0, 0xff, 0xffff, 0xffffff, 0xffffffff};

/*
 * A copy element's tag, looked up: bits 0-7 its length, 8-10 its offset's high bits (for a
 * 1-byte offset), 11-13 the offset bytes after it. Made on first use.
 */
static u32 TAGS[256];
static int tagsMade;

static void makeTags(void) {
  for (u32 tag = 0; tag < 256; tag++) {
    switch (tag & 3) {
      case 1: TAGS[tag] = (4 + ((tag >> 2) & 7)) | ((tag >> 5) << 8) | (1 << 11); break;
      case 2: TAGS[tag] = (1 + (tag >> 2)) | (2 << 11); break;
      case 3: TAGS[tag] = (1 + (tag >> 2)) | (4 << 11); break;
      default: TAGS[tag] = 0;
    }
  }
  tagsMade = 1;
}

static inline void copy16(u8 *to, const u8 *from) { __builtin_memcpy(to, from, 16); }

/* The length in a snappy block's preamble (a varint) from *ipp, *ipp moved past it; ERR_HEADER if there is none. */
static i32 preamble(const u8 **ipp, const u8 *iend, u32 *len) {
  const u8 *ip = *ipp;
  u32 n = 0;
  for (int shift = 0;; shift += 7) {
    if (ip >= iend || shift > 28) return ERR_HEADER;
    u8 b = *ip++;
    n |= (u32)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  *len = n;
  *ipp = ip;
  return 0;
}

/* No stop: `elements` decodes to the block's end. */
#define NO_STOP 0xffffffffu

/*
 * Snappy's elements from *ipp into the output at *opp while the input lasts and fewer than
 * `stop` bytes of output are written (NO_STOP: to the block's end); *ipp and *opp moved
 * past what was decoded. 0, or an error.
 */
static inline i32 elements(const u8 **ipp, const u8 *iend, u8 *out, u8 **opp, u8 *oend, u32 stop) {
  const u8 *ip = *ipp;
  u8 *op = *opp;
  if (!tagsMade) makeTags();
  while (ip < iend && (u32)(op - out) < stop) {
    u32 tag = *ip++;
    u32 n;
    u32 off;
    if ((tag & 3) == 0) {
      n = tag >> 2;
      if (n >= 60) {
        u32 k = n - 59;
        if ((u32)(iend - ip) < k) return ERR_INPUT;
        n = load32(ip) & WORD_MASK[k];
        ip += k;
      }
      n += 1;
      if (n == 0 || (u32)(iend - ip) < n) return ERR_INPUT;
      if ((u32)(oend - op) < n) return ERR_OUTPUT;
      if (n <= 256) {
        /* 16 bytes a move (memory.copy costs a call): past the literal's end at worst into the output's slack, or over bytes the next elements write. */
        for (u32 k = 0; k < n; k += 16) copy16(op + k, ip + k);
      } else {
        __builtin_memcpy(op, ip, n);
      }
      ip += n;
      op += n;
      continue;
    }
    u32 e = TAGS[tag];
    u32 extra = e >> 11;
    if ((u32)(iend - ip) < extra) return ERR_INPUT;
    /* The offset's bytes, read as one word (the input's slack covers the bytes past it). */
    off = (e & 0x700) + (load32(ip) & WORD_MASK[extra]);
    ip += extra;
    n = e & 0xff;
    if (off - 1 >= (u32)(op - out)) return ERR_OFFSET; /* off 0 wraps */
    if ((u32)(oend - op) < n) return ERR_OUTPUT;
    const u8 *src = op - off;
    if (off >= 8) {
      /* Each 8-byte move reads bytes already written (the source is 8 or more behind); most copies are 16 bytes or less. */
      store64(op, load64(src));
      store64(op + 8, load64(src + 8));
      for (u32 k = 16; k < n; k += 8) store64(op + k, load64(src + k));
    } else {
      /* A repeating pattern shorter than 8: 8-byte moves, each `gap` further on, the gap doubling until it is 8 or more. */
      u8 *to = op;
      u8 *end = op + n;
      while (to - src < 8 && to < end) {
        u32 gap = (u32)(to - src);
        store64(to, load64(src));
        to += gap;
      }
      for (; to < end; to += 8, src += 8) store64(to, load64(src));
    }
    op += n;
  }
  *ipp = ip;
  *opp = op;
  return 0;
}

/*
 * Decompresses the snappy block in[0, inLen) into out[0, outLen); 0, or an error. outLen
 * must be the block's preamble length: a page header and its block that disagree are an error.
 */
i32 snappy(const u8 *in, i32 inLen, u8 *out, i32 outLen) {
  const u8 *ip = in;
  const u8 *iend = in + inLen;
  u32 len;
  if (preamble(&ip, iend, &len) != 0) return ERR_HEADER;
  if (len != (u32)outLen) return ERR_LENGTH;
  u8 *op = out;
  u8 *oend = out + outLen;
  i32 r = elements(&ip, iend, out, &op, oend, NO_STOP);
  if (r != 0) return r;
  return op == oend ? 0 : ERR_SHORT;
}

/* snappy_step's second result: the output's offset after the step. */
i32 r_op;

/*
 * `snappy` a step at a time (so a big page leaves the caller's event loop free between
 * steps): decodes in[ipAt…] into out[opAt…] until the output reaches `stop` (at outLen or
 * past it: the block's end), from the preamble when ipAt is 0. Returns the input's offset
 * after the step (inLen: the block is done, and was exactly outLen bytes) with r_op the
 * output's, or an error. Nothing of a step is kept here: the caller keeps in and out as
 * they are between steps.
 */
i32 snappy_step(const u8 *in, i32 inLen, i32 ipAt, u8 *out, i32 outLen, i32 opAt, i32 stop) {
  const u8 *ip = in + ipAt;
  const u8 *iend = in + inLen;
  if (ipAt == 0) {
    u32 len;
    if (preamble(&ip, iend, &len) != 0) return ERR_HEADER;
    if (len != (u32)outLen) return ERR_LENGTH;
  }
  u8 *op = out + opAt;
  u8 *oend = out + outLen;
  i32 r = elements(&ip, iend, out, &op, oend, stop >= outLen ? NO_STOP : (u32)stop);
  r_op = (i32)(op - out);
  if (r != 0) return r;
  if (ip == iend && op != oend) return ERR_SHORT;
  return (i32)(ip - in);
}

/*
 * Reads `count` values of the RLE/bit-packed hybrid encoding, `width` bits each (0 to 24),
 * from p[0, len) into out[0, count), as src/source/parquet/flat-decoder.ts's readHybrid:
 * the padding of a last bit-packed group is skipped, and a run that reaches past `len` is an
 * error (-1). Returns the offset after the runs read. `r_bad` is set to the first k with
 * out[k] >= limit (limit >= 0: a dictionary's size; -1: no check), else -1.
 */
i32 hybrid(const u8 *p, i32 len, i32 width, i32 *out, i32 count, i32 limit) {
  const u32 mask = width == 0 ? 0 : (1u << width) - 1;
  const u32 rleBytes = (u32)(width + 7) >> 3;
  u32 at = 0;
  i32 n = 0;
  r_bad = -1;
  while (n < count) {
    u32 header = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= (u32)len || shift > 28) return -1;
      u8 b = p[at++];
      header |= (u32)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    if (header & 1) {
      u32 groups = header >> 1;
      u64 bytes = (u64)groups * (u32)width;
      if (at + bytes > (u32)len) return -1;
      u32 take = (u64)groups * 8 < (u64)(count - n) ? groups * 8 : (u32)(count - n);
      const u8 *q = p + at;
      i32 *o = out + n;
      /* Value k's bits start at bit k * width: an 8-byte load there holds them all (width <= 24), the page's slack covering the last. */
      for (u32 k = 0, bit = 0; k < take; k++, bit += width) o[k] = (i32)((load64(q + (bit >> 3)) >> (bit & 7)) & mask);
      n += take;
      at += (u32)bytes;
    } else {
      u32 run = header >> 1;
      if (at + rleBytes > (u32)len) return -1;
      u32 v = 0;
      for (u32 k = 0; k < rleBytes; k++) v |= (u32)p[at + k] << (8 * k);
      at += rleBytes;
      u32 take = run < (u32)(count - n) ? run : (u32)(count - n);
      i32 *o = out + n;
      for (u32 k = 0; k < take; k++) o[k] = (i32)v;
      n += take;
    }
  }
  if (limit >= 0) {
    for (i32 k = 0; k < count; k++) {
      if ((u32)out[k] >= (u32)limit) {
        r_bad = k;
        break;
      }
    }
  }
  return (i32)at;
}

/*
 * Binary COPY tuples from a slice's flat columns, as src/source/parquet/flat-tuples.ts's
 * writeFlatTuples writes them, for the kinds it writes inline (its numbers). Each column is
 * 8 words at `cols`: kind, its rows' value indexes (from the slice's first row; -1 NULL), its
 * values' bytes, SPAN's spans or TABLE's field offsets, TABLE's field lengths (-1: the value
 * does not fit the column), DECIMAL's scale. The caller (wasm-tuples.ts) has them here,
 * decoded here or copied in, with SLACK after each, and copies the tuples out.
 */
#define K_TABLE 0
#define K_INT32 1
#define K_DATE 2
#define K_LE8 3
#define K_SPAN 4
#define K_DECIMAL32 7
#define K_DECIMAL64 8

#define TUPLES_END 0   /* rows [from, to) written */
#define TUPLES_FULL 1  /* `limit` bytes reached before row r_row */
#define TUPLES_OWN 2   /* row r_row's field r_column needs its own writer (the JavaScript's) */
#define TUPLES_UNFIT 3 /* row r_row's value of column r_column does not fit the column */

/* tuples' results: the row it stopped before, the bytes written (whole rows), the column. */
i32 r_row;
i32 r_bytes;
i32 r_column;

#define UNIX_TO_POSTGRES_DAYS 10957

static inline void put32(u8 *p, u32 v) {
  v = __builtin_bswap32(v);
  __builtin_memcpy(p, &v, 4);
}

static inline u32 word(const u8 *base, i32 i) {
  u32 v;
  __builtin_memcpy(&v, base + 4 * (u32)i, 4);
  return v;
}


/* `n` bytes, 16 a move (the caller's slack after both). */
static inline u8 *copyBytes(u8 *to, const u8 *from, u32 n) {
  for (u32 k = 0; k < n; k += 16) copy16(to + k, from + k);
  return to + n;
}

/*
 * Rows [from, to) of `ncols` columns as binary tuples into `out`, while the bytes written are
 * fewer than `limit` at a row's start (as writeFlatTuples: the caller leaves room for one
 * row more, and SLACK); returns why it stopped, with r_row, r_bytes and r_column.
 */
i32 tuples(const i32 *cols, i32 ncols, i32 from, i32 to, u8 *out, i32 limit) {
  u8 *p = out;
  i32 r = from;
  i32 stop = TUPLES_END;
  r_column = -1;
  for (; r < to; r++) {
    if (p - out >= limit) {
      stop = TUPLES_FULL;
      break;
    }
    u8 *row = p;
    p[0] = (u8)(ncols >> 8);
    p[1] = (u8)ncols;
    p += 2;
    for (i32 k = 0; k < ncols; k++) {
      const i32 *c = cols + 8 * k;
      i32 i = ((const i32 *)c[1])[r];
      if (i < 0) {
        put32(p, 0xffffffffu);
        p += 4;
        continue;
      }
      const u8 *bytes = (const u8 *)c[2];
      switch (c[0]) {
        case K_TABLE: {
          i32 len = ((const i32 *)c[4])[i];
          if (len < 0) {
            stop = TUPLES_UNFIT;
            break;
          }
          p = copyBytes(p, bytes + ((const i32 *)c[3])[i], (u32)len);
          continue;
        }
        case K_INT32:
          put32(p, 4);
          put32(p + 4, word(bytes, i));
          p += 8;
          continue;
        case K_DATE:
          put32(p, 4);
          put32(p + 4, word(bytes, i) - UNIX_TO_POSTGRES_DAYS);
          p += 8;
          continue;
        case K_LE8:
          /* The little-endian 8 bytes reversed: the high word first, each big-endian. */
          put32(p, 8);
          put32(p + 4, word(bytes, 2 * i + 1));
          put32(p + 8, word(bytes, 2 * i));
          p += 12;
          continue;
        case K_SPAN: {
          const i32 *span = (const i32 *)c[3];
          i32 s = span[2 * i];
          u32 len = (u32)(span[2 * i + 1] - s);
          put32(p, len);
          p = copyBytes(p + 4, bytes + s, len);
          continue;
        }
        case K_DECIMAL32:
          p = numeric_send(p, (i32)word(bytes, i), (u32)c[5]);
          continue;
        case K_DECIMAL64: {
          long long v = (long long)(((u64)word(bytes, 2 * i + 1) << 32) | word(bytes, 2 * i));
          /* A safe integer inline (as writeFlatTuples); a bigger one by the column's own writer. */
          if (v < -(1ll << 53) || v >= (1ll << 53)) {
            stop = TUPLES_OWN;
            break;
          }
          p = numeric_send(p, v, (u32)c[5]);
          continue;
        }
        default:
          stop = TUPLES_OWN;
          break;
      }
      /* A field this kernel does not write: the row is left to the caller. */
      r_column = k;
      p = row;
      break;
    }
    if (stop != TUPLES_END) break;
  }
  r_row = r;
  r_bytes = (i32)(p - out);
  return stop;
}
