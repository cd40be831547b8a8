/**
 * Everything a thread precomputes once before writing rows: counts, the calendar, the
 * comment pool and every word of the value domains as bytes.
 */
import { buildDateTable } from './dates.js';
import { dbt3Counts, type Dbt3Counts } from './scale.js';
import { buildTextPool } from './text-pool.js';
import { latin1, latin1List } from './byte-writer.js';
import {
  CONTAINER_KINDS,
  CONTAINER_SIZES,
  COLORS,
  INSTRUCTIONS,
  NATIONS,
  PRIORITIES,
  REGIONS,
  SEGMENTS,
  SHIP_MODES,
  TYPE_FINISHES,
  TYPE_METALS,
  TYPE_SIZES,
  ADDRESS_CHARS,
} from './vocabulary.js';
import { RowRng } from './prng.js';

export const DEFAULT_SEED = 19920101;

export interface GenContext {
  readonly seed: number;
  readonly counts: Dbt3Counts;
  readonly rng: RowRng;
  readonly dates: Buffer;
  readonly pool: Buffer;
  readonly regions: Buffer[];
  readonly nations: Buffer[];
  readonly nationRegion: number[];
  readonly colors: Buffer[];
  /** "STANDARD ANODIZED TIN" … all 150 types, by index size*25 + finish*5 + metal. */
  readonly types: Buffer[];
  /** "SM CASE" … all 40 containers. */
  readonly containers: Buffer[];
  readonly segments: Buffer[];
  readonly priorities: Buffer[];
  readonly instructions: Buffer[];
  readonly shipModes: Buffer[];
  readonly addressChars: Buffer;
  readonly words: {
    supplier: Buffer;
    customer: Buffer;
    manufacturer: Buffer;
    brand: Buffer;
    clerk: Buffer;
    complaints: Buffer;
    recommends: Buffer;
  };
}

export function buildContext(scale: number, seed: number = DEFAULT_SEED): GenContext {
  const types: string[] = [];
  for (const s of TYPE_SIZES) for (const f of TYPE_FINISHES) for (const m of TYPE_METALS) types.push(`${s} ${f} ${m}`);
  const containers: string[] = [];
  for (const s of CONTAINER_SIZES) for (const k of CONTAINER_KINDS) containers.push(`${s} ${k}`);
  return {
    seed,
    counts: dbt3Counts(scale),
    rng: new RowRng(),
    dates: buildDateTable(),
    pool: buildTextPool(seed),
    regions: latin1List(REGIONS),
    nations: latin1List(NATIONS.map(([name]) => name)),
    nationRegion: NATIONS.map(([, region]) => region),
    colors: latin1List(COLORS),
    types: latin1List(types),
    containers: latin1List(containers),
    segments: latin1List(SEGMENTS),
    priorities: latin1List(PRIORITIES),
    instructions: latin1List(INSTRUCTIONS),
    shipModes: latin1List(SHIP_MODES),
    addressChars: latin1(ADDRESS_CHARS),
    words: {
      supplier: latin1('Supplier#'),
      customer: latin1('Customer#'),
      manufacturer: latin1('Manufacturer#'),
      brand: latin1('Brand#'),
      clerk: latin1('Clerk#'),
      complaints: latin1('Customer Complaints'),
      recommends: latin1('Customer Recommends'),
    },
  };
}
