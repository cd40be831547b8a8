import type { LoadTarget } from '../core/chunk.js';
import { inputFormat } from './format-registry.js';
import type { Format } from './formats.js';
import type { Framer } from './framer.js';
import type { TextFramerOptions } from './line-framer.js';

/** The framer of a plain format with COPY's default options (for locating an error in a chunk). */
export function framerFor(format: Format, options: TextFramerOptions = {}): Framer {
  return inputFormat(format).plainFramer(format, options);
}

/**
 * The framer for one input: its format, quote and escape, encoding, JSON column mapping,
 * line ending. `endsInput: false`: the bytes framed stop before the end of the input (a
 * byte range of a file).
 */
export function framerForTarget(target: LoadTarget, options: { endsInput?: boolean } = {}): Framer {
  return inputFormat(target.format).framer(target, options);
}

/**
 * The framer that cuts a chunk's source bytes (`chunk.source`) into records again, for
 * isolating rejects and resuming inside a chunk.
 */
export function sourceFramer(target: LoadTarget): Framer {
  return inputFormat(target.format).sourceFramer(target);
}

/**
 * The framer of a chunk's wire bytes (`chunk.data`): COPY text lines, or CSV with the
 * input's quote and escape; every record ends in `\n` there, whatever the input's line ending.
 */
export function wireFramer(target: LoadTarget): Framer {
  return inputFormat(target.format).wireFramer(target);
}
