/**
 * dbgen's text (text.c): a 300 MiB pool of sentences from dists.dss's grammar, drawn once
 * on stream 5, and every comment a substring of it at a random offset. The pool is not
 * kept: the comments' (offset, length) pairs are drawn first (they do not depend on the
 * pool's bytes), then the pool is generated once and only those ranges are copied out.
 */
import type { DbgenStreams } from './dbgen-random.js';
import { SD } from './dbgen-random.js';
import * as D from './dists.js';
import type { Distribution } from './dists.js';

/** text.c's TEXT_POOL_SIZE. */
export const TEXT_POOL_SIZE = 300 * 1024 * 1024;

/** A distribution ready to pick from: words as bytes and running weights. */
export interface Picker {
  readonly words: readonly Buffer[];
  readonly cumulative: Int32Array;
  readonly total: number;
}

export function picker(dist: Distribution): Picker {
  const cumulative = new Int32Array(dist.length);
  let sum = 0;
  dist.forEach(([, w], i) => (cumulative[i] = sum += w));
  return { words: dist.map(([t]) => Buffer.from(t, 'latin1')), cumulative, total: sum };
}

/** bm_utils.c's pick_str: one draw on 1..total, the first entry whose running weight reaches it. */
export function pick(streams: DbgenStreams, p: Picker, stream: number): number {
  const j = streams.random(1, p.total, stream);
  let i = 0;
  while (p.cumulative[i]! < j) i++;
  return i;
}

/** A phrase form: per token its part of speech and the punctuation that follows it (0: none). */
type Form = readonly (readonly [Picker, number])[];

function forms(dist: Distribution, parts: Record<string, Picker>): Form[] {
  return dist.map(([syntax]) =>
    syntax.split(' ').filter((t) => t !== '').map((token): readonly [Picker, number] => {
      const part = parts[token[0]!];
      if (part === undefined) throw new Error(`dbgen grammar: unknown part of speech in ${syntax}`);
      return [part, token.length > 1 ? token.charCodeAt(1) : 0];
    }),
  );
}

const SPACE = 0x20;

/** Sentences of the pool, one at a time, into a reused buffer (text.c's txt_* functions). */
class SentenceMaker {
  private readonly buf = Buffer.alloc(1024);
  private readonly grammar = picker(D.GRAMMAR);
  private readonly np = picker(D.NP);
  private readonly vp = picker(D.VP);
  private readonly prepositions = picker(D.PREPOSITIONS);
  private readonly terminators = picker(D.TERMINATORS);
  private readonly npForms: Form[];
  private readonly vpForms: Form[];
  private readonly sentenceForms: string[];

  constructor(private readonly streams: DbgenStreams) {
    const adverbs = picker(D.ADVERBS);
    this.npForms = forms(D.NP, { A: picker(D.ARTICLES), J: picker(D.ADJECTIVES), D: adverbs, N: picker(D.NOUNS) });
    this.vpForms = forms(D.VP, { D: adverbs, V: picker(D.VERBS), X: picker(D.AUXILLARIES) });
    // text.c's txt_vp writes a space over a verb phrase's punctuation and leaves a NUL in the
    // sentence; dists.dss's verb phrases have none, and this port supports none
    if (this.vpForms.some((f) => f.some(([, punct]) => punct !== 0))) throw new Error('dbgen grammar: punctuation in a verb phrase');
    // dists.dss's sentence forms are single letters; text.c mishandles anything after one
    this.sentenceForms = D.GRAMMAR.map(([s]) => {
      if (!/^[NVPT]( [NVPT])*$/.test(s)) throw new Error(`dbgen grammar: unsupported sentence form ${s}`);
      return s;
    });
  }

  private word(p: Picker, at: number): number {
    const w = p.words[pick(this.streams, p, SD.textPool)]!;
    w.copy(this.buf, at);
    this.buf[at + w.length] = 0; // strcpy's terminator, as the C leaves it
    return w.length;
  }

  /** txt_np and txt_vp: each word, its punctuation if any, a space. */
  private phrase(form: Form, at: number): number {
    let dest = at;
    for (const [part, punct] of form) {
      dest += this.word(part, dest);
      if (punct !== 0) this.buf[dest++] = punct;
      this.buf[dest++] = SPACE;
    }
    return dest - at;
  }

  /** txt_sentence: the sentence's length; its bytes are `bytes()[0..length)`. */
  sentence(): number {
    const syntax = this.sentenceForms[pick(this.streams, this.grammar, SD.textPool)]!;
    let dest = 0;
    let res = 0;
    for (let c = 0; c < syntax.length; c++) {
      const ch = syntax[c]!;
      if (ch === ' ') continue;
      let len = 0;
      if (ch === 'V') len = this.phrase(this.vpForms[pick(this.streams, this.vp, SD.textPool)]!, dest);
      else if (ch === 'N') len = this.phrase(this.npForms[pick(this.streams, this.np, SD.textPool)]!, dest);
      else if (ch === 'P') {
        len = this.word(this.prepositions, dest);
        len += this.buf.write(' the ', dest + len, 'latin1');
        len += this.phrase(this.npForms[pick(this.streams, this.np, SD.textPool)]!, dest + len);
      } else if (ch === 'T') {
        dest -= 1; // a terminator abuts the previous word
        len = this.word(this.terminators, dest);
      }
      dest += len;
      res += len;
    }
    this.buf[dest] = 0;
    return res - 1;
  }

  bytes(): Buffer {
    return this.buf;
  }
}

/** A comment to cut from the pool, filled in by `cutFromPool`. */
export interface PoolCut {
  readonly offset: number;
  readonly length: number;
  text?: Buffer;
}

/**
 * dbg_text's pool, made once from the start of stream 5, with each cut's bytes copied out
 * as the pool passes them. Takes a few seconds (300 MiB of sentences); memory stays small.
 */
export function cutFromPool(streams: DbgenStreams, cuts: readonly PoolCut[]): void {
  const pending = [...cuts].sort((a, b) => a.offset - b.offset);
  for (const cut of pending) cut.text = Buffer.alloc(cut.length);
  const maker = new SentenceMaker(streams);
  const sentence = maker.bytes();
  const active: PoolCut[] = [];
  let next = 0;
  let wordlen = 0;
  const end = pending.length === 0 ? 0 : Math.max(...pending.map((c) => c.offset + c.length));
  while (wordlen < TEXT_POOL_SIZE && wordlen < end) {
    const sLen = maker.sentence();
    const needed = TEXT_POOL_SIZE - wordlen;
    let taken: number;
    if (needed >= sLen + 1) {
      sentence[sLen] = SPACE;
      taken = sLen + 1;
    } else taken = needed;
    const from = wordlen;
    const to = wordlen + taken;
    while (next < pending.length && pending[next]!.offset < to) active.push(pending[next++]!);
    for (let i = active.length - 1; i >= 0; i--) {
      const cut = active[i]!;
      const lo = Math.max(from, cut.offset);
      const hi = Math.min(to, cut.offset + cut.length);
      if (hi > lo) sentence.copy(cut.text!, lo - cut.offset, lo - from, hi - from);
      if (cut.offset + cut.length <= to) active.splice(i, 1);
    }
    wordlen = to;
  }
}
