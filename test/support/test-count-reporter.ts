// A node:test reporter that writes no output of its own: it counts, per test
// file, the tests that ran, failed, were skipped or marked todo, and writes the
// counts as JSON to SEDIMENT_TEST_COUNTS when the run ends. test/runner.ts runs
// it beside the spec reporter, so a file that registers no test at all (a
// filter by environment variable that matched nothing, a loop over an empty
// list) fails the run instead of passing as "0 tests, 0 failures".
import { writeFileSync } from 'node:fs';

export interface FileCounts {
  tests: number;
  failed: number;
  skipped: number;
  todo: number;
}

interface TestEventData {
  readonly file?: string;
  readonly name?: string;
  readonly skip?: unknown;
  readonly todo?: unknown;
  readonly details?: { readonly type?: string };
}

interface TestEvent {
  readonly type: string;
  readonly data?: TestEventData;
}

export default async function* countTests(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const counts: Record<string, FileCounts> = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    if (d?.file === undefined || d.details?.type === 'suite') continue;
    const c = (counts[d.file] ??= { tests: 0, failed: 0, skipped: 0, todo: 0 });
    // A file that never called node:test (or failed to load) is reported as one
    // test named by its own path: that is not a test of the file's.
    if (d.name === d.file) {
      if (event.type === 'test:fail') c.failed++;
      continue;
    }
    c.tests++;
    if (event.type === 'test:fail') c.failed++;
    if (d.skip !== undefined && d.skip !== false) c.skipped++;
    if (d.todo !== undefined && d.todo !== false) c.todo++;
  }
  const out = process.env['SEDIMENT_TEST_COUNTS'];
  if (out !== undefined && out !== '') writeFileSync(out, JSON.stringify(counts));
  yield '';
}
