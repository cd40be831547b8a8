/** The encoders' output as hex, for table-driven unit tests. */
import assert from 'node:assert/strict';
import { encoderFor } from '../../src/codecs/index.js';
import { WireBuffer, type SessionFacts } from '../../src/codecs/field-encoder.js';

export const PG15: SessionFacts = { serverVersionNum: 150000, timeZone: 'UTC', dateStyle: 'ISO, MDY', serverEncoding: 'UTF8' };
export const PG13: SessionFacts = { ...PG15, serverVersionNum: 130000 };

/** The field's bytes as hex (length first), or false when the encoder refuses; checks `pos` is unchanged on refusal. */
export function encodeHex(typname: string, input: string | Uint8Array, session: SessionFacts = PG15): string | false {
  const enc = encoderFor({ typname, typmod: -1, oid: 0 }, session);
  assert.ok(enc, `no encoder for ${typname}`);
  const out = new WireBuffer(16);
  out.pos = 3; // not at zero, so a refusal that moved pos shows
  const src = typeof input === 'string' ? Buffer.from(`<${input}>`) : Buffer.concat([Buffer.from('<'), input, Buffer.from('>')]);
  const ok = enc.encode(src, 1, src.length - 1, out);
  if (!ok) {
    assert.equal(out.pos, 3, `${typname} '${String(input)}': refused but moved pos`);
    return false;
  }
  return Buffer.from(out.bytes.subarray(3, out.pos)).toString('hex');
}

