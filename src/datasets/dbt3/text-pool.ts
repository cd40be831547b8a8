/**
 * Comment text, the dbgen way: one pool of sentences from the spec's grammar, built once
 * per thread, and every comment a substring of it at a random offset (dbgen builds a
 * 300 MB pool; a few MB give the same shape and build in milliseconds).
 */
import { RowRng, STREAM } from './prng.js';
import { ADJECTIVES, ADVERBS, NOUNS, PREPOSITIONS, TERMINATORS, VERBS } from './vocabulary.js';

export const TEXT_POOL_BYTES = 4 * 1024 * 1024;

const AUXILIARIES = [
  'do', 'may', 'might', 'shall', 'will', 'would', 'can', 'could', 'should', 'ought to', 'must',
  'will have to', 'shall have to', 'could have to', 'should have to', 'must have to', 'need to', 'try to',
];

/** Pick from weighted choices with a 0..99 draw: [weight, value] pairs whose weights sum to 100. */
function weighted<T>(choices: readonly (readonly [number, T])[], roll: number): T {
  let acc = 0;
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i]!;
    acc += choice[0];
    if (roll < acc) return choice[1];
  }
  return choices[choices.length - 1]![1];
}

// dbgen's dists.dss weights, scaled to 100
const SENTENCES = [
  [27, 'N V T'],
  [27, 'N V P T'],
  [28, 'N V N T'],
  [9, 'N P V N T'],
  [9, 'N P V P T'],
] as const;
const NOUN_PHRASES = [
  [11, 'N'],
  [22, 'J N'],
  [11, 'J, J N'],
  [56, 'D J N'],
] as const;
const VERB_PHRASES = [
  [42, 'V'],
  [2, 'X V'],
  [55, 'V D'],
  [1, 'X V D'],
] as const;

/** The pool of comment text for a seed: deterministic, no `|`, `\`, tab or newline. */
export function buildTextPool(seed: number, size = TEXT_POOL_BYTES): Buffer {
  const rng = new RowRng().seed(seed, STREAM.textPool, 0);
  const words = (list: readonly string[]): Buffer[] => list.map((w) => Buffer.from(w, 'latin1'));
  const nouns = words(NOUNS);
  const verbs = words(VERBS);
  const adjectives = words(ADJECTIVES);
  const adverbs = words(ADVERBS);
  const prepositions = words(PREPOSITIONS);
  const auxiliaries = words(AUXILIARIES);
  const terminators = words(TERMINATORS);
  const the = Buffer.from('the', 'latin1');
  // room for one sentence past the end, cut off below
  const out = Buffer.allocUnsafe(size + 1024);
  let pos = 0;
  const put = (word: Buffer): void => {
    for (let i = 0; i < word.length; i++) out[pos + i] = word[i]!;
    pos += word.length;
  };
  const space = (): void => {
    out[pos++] = 0x20;
  };
  const pick = (list: readonly Buffer[]): Buffer => list[rng.int(0, list.length - 1)]!;
  const nounPhrase = (): void => {
    switch (weighted(NOUN_PHRASES, rng.int(0, 99))) {
      case 'N':
        break;
      case 'J N':
        put(pick(adjectives));
        space();
        break;
      case 'J, J N':
        put(pick(adjectives));
        out[pos++] = 0x2c;
        space();
        put(pick(adjectives));
        space();
        break;
      default:
        put(pick(adverbs));
        space();
        put(pick(adjectives));
        space();
    }
    put(pick(nouns));
  };
  const verbPhrase = (): void => {
    const shape = weighted(VERB_PHRASES, rng.int(0, 99));
    if (shape === 'X V' || shape === 'X V D') {
      put(pick(auxiliaries));
      space();
    }
    put(pick(verbs));
    if (shape === 'V D' || shape === 'X V D') {
      space();
      put(pick(adverbs));
    }
  };
  while (pos < size) {
    const shape = weighted(SENTENCES, rng.int(0, 99));
    // symbols are one letter each, space-separated, ending in T (the terminator)
    for (let i = 0; i < shape.length - 2; i += 2) {
      const symbol = shape[i];
      if (i > 0) space();
      if (symbol === 'N') nounPhrase();
      else if (symbol === 'V') verbPhrase();
      else if (symbol === 'P') {
        put(pick(prepositions));
        space();
        put(the);
        space();
        nounPhrase();
      }
    }
    put(pick(terminators));
    space();
  }
  return out.subarray(0, size);
}
