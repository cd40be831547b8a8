/**
 * A node:test reporter that counts, for test/run-tests.ts: passed, failed and skipped tests
 * from the runner's own events (`test:pass`, `test:fail`), not from any reporter's text.
 * Suites are not counted (their tests are); a test that fails to load counts as a failure
 * (the runner reports the file as a failed test), and so does a cancelled one. `todo` tests
 * count as skipped, whatever their outcome, as node:test itself does not fail a run on them.
 * Its only output, at the end, is one JSON line: `{"pass":N,"fail":N,"skipped":N}`.
 */
interface TestEventData {
  skip?: boolean | string;
  todo?: boolean | string;
  details?: { type?: string };
}

interface TestEvent {
  type: string;
  data: TestEventData;
}

export interface Counts {
  pass: number;
  fail: number;
  skipped: number;
}

/** Adds one event to the counts; events other than a test's end are left alone. */
export function countEvent(counts: Counts, event: TestEvent): void {
  if (event.type !== 'test:pass' && event.type !== 'test:fail') return;
  const { data } = event;
  if (data.details?.type === 'suite') return;
  if (data.skip !== undefined && data.skip !== false) counts.skipped++;
  else if (data.todo !== undefined && data.todo !== false) counts.skipped++;
  else if (event.type === 'test:pass') counts.pass++;
  else counts.fail++;
}

export default async function* countReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const counts: Counts = { pass: 0, fail: 0, skipped: 0 };
  for await (const event of source) countEvent(counts, event);
  yield `${JSON.stringify(counts)}\n`;
}
