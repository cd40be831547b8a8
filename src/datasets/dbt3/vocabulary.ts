/**
 * The value domains of TPC-H's spec (section 4.2.2.13) and dbgen's dists.dss.
 */

export const REGIONS = ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'] as const;

/** [name, regionkey], in nationkey order. */
export const NATIONS: readonly (readonly [string, number])[] = [
  ['ALGERIA', 0],
  ['ARGENTINA', 1],
  ['BRAZIL', 1],
  ['CANADA', 1],
  ['EGYPT', 4],
  ['ETHIOPIA', 0],
  ['FRANCE', 3],
  ['GERMANY', 3],
  ['INDIA', 2],
  ['INDONESIA', 2],
  ['IRAN', 4],
  ['IRAQ', 4],
  ['JAPAN', 2],
  ['JORDAN', 4],
  ['KENYA', 0],
  ['MOROCCO', 0],
  ['MOZAMBIQUE', 0],
  ['PERU', 1],
  ['CHINA', 2],
  ['ROMANIA', 3],
  ['SAUDI ARABIA', 4],
  ['VIETNAM', 2],
  ['RUSSIA', 3],
  ['UNITED KINGDOM', 3],
  ['UNITED STATES', 1],
];

/** The 92 colour words part names are made of. */
export const COLORS = (
  'almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood ' +
  'burnished chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim ' +
  'dodger drab firebrick floral forest frosted gainsboro ghost goldenrod green grey honeydew ' +
  'hot indian ivory khaki lace lavender lawn lemon light lime linen magenta maroon medium ' +
  'metallic midnight mint misty moccasin navajo navy olive orange orchid pale papaya peach ' +
  'peru pink plum powder puff purple red rose rosy royal saddle salmon sandy seashell sienna ' +
  'sky slate smoke snow spring steel tan thistle tomato turquoise violet wheat white yellow'
).split(' ');

export const TYPE_SIZES = ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'] as const;
export const TYPE_FINISHES = ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'] as const;
export const TYPE_METALS = ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'] as const;

export const CONTAINER_SIZES = ['SM', 'LG', 'MED', 'JUMBO', 'WRAP'] as const;
export const CONTAINER_KINDS = ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'] as const;

export const SEGMENTS = ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'] as const;
export const PRIORITIES = ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'] as const;
export const INSTRUCTIONS = ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'] as const;
export const SHIP_MODES = ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'] as const;

/** Characters of dbgen's random address strings (its "alpha numeric" set). */
export const ADDRESS_CHARS = '0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,';

/** dbgen's grammar words, for the comment text pool. */
export const NOUNS = (
  'foxes ideas theodolites pinto&beans instructions dependencies excuses platelets asymptotes ' +
  'courts dolphins multipliers sauternes warthogs frets dinos attainments somas Tiresias ' +
  'patterns forges braids hockey&players frays warhorses dugouts notornis epitaphs pearls ' +
  'tithes waters orbits gifts sheaves depths sentiments decoys realms pains grouches escapades'
)
  .split(' ')
  .map((w) => w.replace('&', ' '));
export const VERBS = (
  'sleep wake are cajole haggle nag use boost affix detect integrate maintain nod was lose ' +
  'sublate solve thrash promise engage hinder print x-ray breach eat grow impress mold poach ' +
  'serve run dazzle snooze doze unwind kindle play hang believe doubt'
).split(' ');
export const ADJECTIVES = (
  'furious sly careful blithe quick fluffy slow quiet ruthless thin close dogged daring brave ' +
  'stealthy permanent enticing idle busy regular final ironic even bold silent'
).split(' ');
export const ADVERBS = (
  'sometimes always never furiously slyly carefully blithely quickly fluffily slowly quietly ' +
  'ruthlessly thinly closely doggedly daringly bravely stealthily permanently enticingly idly ' +
  'busily regularly finally ironically evenly boldly silently'
).split(' ');
export const PREPOSITIONS = (
  'about above according&to across after against along alongside&of among around at atop ' +
  'before behind beneath beside besides between beyond by despite during except for from ' +
  'in&place&of inside instead&of into near of on outside over past since through throughout ' +
  'to toward under until up upon without with within'
)
  .split(' ')
  .map((w) => w.replace(/&/g, ' '));
export const TERMINATORS = ['.', ';', ':', '?', '!', '--'] as const;
