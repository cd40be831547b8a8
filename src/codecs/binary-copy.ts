/**
 * The frame of a binary COPY stream (PostgreSQL docs, "COPY: Binary Format"): an 11-byte
 * signature, an int32 flags field (0: no OIDs) and an int32 header-extension length (0);
 * then tuples, each an int16 field count followed by its fields (int32 length, -1 for NULL,
 * then the bytes); then the trailer, an int16 -1.
 */
import type { WireBuffer } from './field-encoder.js';

/** `PGCOPY\n\377\r\n\0`, flags 0, extension length 0. */
export const BINARY_COPY_HEADER: Uint8Array = Uint8Array.of(0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0);

/** The file trailer: a field count of -1. */
export const BINARY_COPY_TRAILER: Uint8Array = Uint8Array.of(0xff, 0xff);

/** Starts a tuple of `fieldCount` fields. */
export function writeTupleStart(out: WireBuffer, fieldCount: number): void {
  out.reserve(2);
  out.bytes[out.pos] = fieldCount >> 8;
  out.bytes[out.pos + 1] = fieldCount;
  out.pos += 2;
}

/** Appends a NULL field (length -1). */
export function writeNull(out: WireBuffer): void {
  out.reserve(4);
  const b = out.bytes;
  const p = out.pos;
  b[p] = 0xff;
  b[p + 1] = 0xff;
  b[p + 2] = 0xff;
  b[p + 3] = 0xff;
  out.pos = p + 4;
}

/** Appends raw bytes (the header or the trailer). */
export function writeRaw(out: WireBuffer, bytes: Uint8Array): void {
  out.reserve(bytes.length);
  out.bytes.set(bytes, out.pos);
  out.pos += bytes.length;
}
