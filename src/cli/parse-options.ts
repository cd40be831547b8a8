import { constants } from 'node:buffer';
import os from 'node:os';
import { InvalidArgumentError } from 'commander';
import { DURABILITY_PRESETS, isDurabilityPreset, type DurabilityPreset } from '../writer/durability/presets.js';
import { FORMATS, isFormat, type Format } from '../input/formats.js';

/** Validators for option values: each message names the flag and the bad value. */

const SIZE_UNITS: Record<string, number> = { '': 1, B: 1, KB: 1024, K: 1024, MB: 1024 ** 2, M: 1024 ** 2, GB: 1024 ** 3, G: 1024 ** 3 };

/** `65536`, `64KB`, `16MB`, `1.5GB` → bytes (binary units, as PostgreSQL's own settings). */
export function parseSize(flag: string, value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/.exec(value);
  const unit = m ? SIZE_UNITS[m[2]!.toUpperCase()] : undefined;
  if (!m || unit === undefined) {
    throw new InvalidArgumentError(`Expected \`${flag}\` to be a size such as 65536, 64KB or 16MB, got \`${value}\``);
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1) throw new InvalidArgumentError(`Expected \`${flag}\` to be at least 1 byte, got \`${value}\``);
  return bytes;
}

/**
 * `--chunk-size`: a size, at most what one buffer can hold (a chunk is read into one
 * buffer, and its wire bytes take one more byte).
 */
export function parseChunkSize(flag: string, value: string): number {
  const bytes = parseSize(flag, value);
  const max = constants.MAX_LENGTH - 1;
  if (bytes > max) throw new InvalidArgumentError(`Expected \`${flag}\` to be at most ${Math.floor(max / 2 ** 20)}MB (a chunk is held in one buffer), got \`${value}\``);
  return bytes;
}

export function parseWholeNumber(flag: string, value: string, min = 1): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min) {
    throw new InvalidArgumentError(`Expected \`${flag}\` to be a whole number from ${min} up, got \`${value}\``);
  }
  return Number(value);
}

/** `--sample N|all`: records to sniff a file's types from, or the whole file. */
export function parseSample(value: string): number | 'all' {
  return value.trim() === 'all' ? 'all' : parseWholeNumber('--sample', value.replace(/_/g, ''), 1);
}

export function parseFormat(value: string): Format {
  if (!isFormat(value)) throw new InvalidArgumentError(`Expected \`--format\` to be one of ${FORMATS.join(', ')}, got \`${value}\``);
  return value;
}

export function parseDurability(value: string): DurabilityPreset {
  if (!isDurabilityPreset(value)) throw new InvalidArgumentError(`Expected \`--durability\` to be one of ${DURABILITY_PRESETS.join(', ')}, got \`${value}\``);
  return value;
}

export function defaultWorkers(): number {
  return Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}

/** 8 MB chunks: big enough that BEGIN/COMMIT per chunk costs nothing, small enough to keep memory at tens of MB. */
export const DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * An upsert's chunks (`--on-conflict update`), 2 MB: two workers keep two chunks in flight
 * over the lanes, so smaller chunks keep the lanes busier at the start, the end and between
 * chunks (bench/upsert.ts, SF 1, -w 2: 1.30× the psql way at 2 MB against 1.15× at 8 MB).
 */
export const UPSERT_CHUNK_BYTES = 2 * 1024 * 1024;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, '': 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** `30s`, `2m`, `500ms`, `1h`, or a plain number of seconds → milliseconds. */
export function parseDuration(flag: string, value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|)\s*$/i.exec(value);
  if (!m) throw new InvalidArgumentError(`Expected \`${flag}\` to be a duration such as 30s, 2m or 500ms, got \`${value}\``);
  return Math.round(Number(m[1]) * DURATION_UNITS[m[2]!.toLowerCase()]!);
}

/** A load id names rows in the ledger and appears in commands: letters, digits, `_.-` only. */
export function parseLoadId(value: string): string {
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(value)) {
    throw new InvalidArgumentError(`Expected \`--load-id\` to be 1 to 100 letters, digits, \`_\`, \`.\` or \`-\`, got \`${value}\``);
  }
  return value;
}
