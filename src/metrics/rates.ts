/** Rates are pure functions of counts and seconds, so the report and the tests agree. */

export function perSecond(count: number, seconds: number): number {
  return seconds > 0 ? count / seconds : 0;
}

export const MB = 1024 * 1024;

export function mbPerSecond(bytes: number, seconds: number): number {
  return perSecond(bytes / MB, seconds);
}
