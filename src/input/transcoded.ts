import type { LoadTarget } from '../core/chunk.js';
import { decoderFor, isUtf8 } from './encodings.js';
import type { FramedBlock, Framer } from './framer.js';

/** Frames the source bytes, then converts the records to UTF-8 (a newline is 0x0A in every input encoding offered). */
export function transcoded(inner: Framer, target: LoadTarget): Framer {
  const encoding = target.input?.encoding;
  if (isUtf8(encoding)) return inner;
  const decode = decoderFor(encoding);
  return {
    frame(buf: Buffer, eof: boolean): FramedBlock {
      const framed = inner.frame(buf, eof);
      return framed.records === 0 ? framed : { ...framed, out: Buffer.from(decode(framed.out), 'utf8') };
    },
    linesBeforeRecord: (source, record) => inner.linesBeforeRecord(source, record),
    recordSpans: (source) => inner.recordSpans(source),
    get lineEnd() {
      return inner.lineEnd;
    },
  };
}
