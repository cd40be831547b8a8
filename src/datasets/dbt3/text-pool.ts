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
  for (const [w, v] of choices) {
    acc += w;
    if (roll < acc) return v;
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
  const pick = (list: readonly string[]): string => list[rng.int(0, list.length - 1)]!;
  const parts: string[] = [];
  let length = 0;
  const nounPhrase = (): string => {
    const shape = weighted(NOUN_PHRASES, rng.int(0, 99));
    switch (shape) {
      case 'N':
        return pick(NOUNS);
      case 'J N':
        return `${pick(ADJECTIVES)} ${pick(NOUNS)}`;
      case 'J, J N':
        return `${pick(ADJECTIVES)}, ${pick(ADJECTIVES)} ${pick(NOUNS)}`;
      default:
        return `${pick(ADVERBS)} ${pick(ADJECTIVES)} ${pick(NOUNS)}`;
    }
  };
  const verbPhrase = (): string => {
    const shape = weighted(VERB_PHRASES, rng.int(0, 99));
    switch (shape) {
      case 'V':
        return pick(VERBS);
      case 'X V':
        return `${pick(AUXILIARIES)} ${pick(VERBS)}`;
      case 'V D':
        return `${pick(VERBS)} ${pick(ADVERBS)}`;
      default:
        return `${pick(AUXILIARIES)} ${pick(VERBS)} ${pick(ADVERBS)}`;
    }
  };
  const prepPhrase = (): string => `${pick(PREPOSITIONS)} the ${nounPhrase()}`;
  while (length < size) {
    const shape = weighted(SENTENCES, rng.int(0, 99));
    const words: string[] = [];
    for (const symbol of shape.split(' ')) {
      if (symbol === 'N') words.push(nounPhrase());
      else if (symbol === 'V') words.push(verbPhrase());
      else if (symbol === 'P') words.push(prepPhrase());
    }
    const sentence = words.join(' ') + TERMINATORS[rng.int(0, TERMINATORS.length - 1)]! + ' ';
    parts.push(sentence);
    length += sentence.length;
  }
  return Buffer.from(parts.join('').slice(0, size), 'latin1');
}
