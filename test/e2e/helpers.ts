// Shared checks for the end-to-end suites: a client run is clean, the broker
// logged no errors, and a timing table printed at the end of a file.
import assert from 'node:assert/strict';
import type { ClientRun } from '../clients/run-client.js';
import { LogLevel, type LogCollector } from '../support/sediment.js';

/** Records per round trip (SEDIMENT_E2E_COUNT overrides, e.g. 2000 for a quick run). */
export function e2eCount(defaultCount: number): number {
  const env = process.env['SEDIMENT_E2E_COUNT'];
  return env === undefined || env === '' ? defaultCount : Math.min(defaultCount, Number(env));
}

export interface Timing {
  readonly run: string;
  readonly records: number;
  readonly produceMs: number;
  readonly consumeMs: number;
  readonly wallMs: number;
}

export class Timings {
  private readonly rows: Timing[] = [];

  add(run: string, r: ClientRun, records: number): void {
    this.rows.push({ run, records, produceMs: r.produceMs, consumeMs: r.consumeMs, wallMs: Math.round(r.wallMs) });
  }

  print(title: string): void {
    const lines = [`\n${title}`];
    for (const t of this.rows) {
      lines.push(
        `  ${t.run.padEnd(44)} ${String(t.records).padStart(7)} rec  produce ${String(t.produceMs).padStart(6)} ms  consume ${String(t.consumeMs).padStart(6)} ms  wall ${String(t.wallMs).padStart(6)} ms`,
      );
    }
    console.log(lines.join('\n'));
  }
}

/** The run verified every record: all produced, all consumed once, ListOffsets by time checked. */
export function assertCleanRun(run: ClientRun, label: string, count: number, options: { produced?: number; listOffsets?: boolean } = {}): void {
  assert.equal(run.ok, true, `${label}: ${run.errorCount} errors:\n${run.errors.join('\n')}`);
  assert.equal(run.produced, options.produced ?? count, `${label}: produced`);
  assert.equal(run.consumed, count, `${label}: consumed`);
  assert.equal(run.duplicates, 0, `${label}: duplicates`);
  assert.equal(run.missing, 0, `${label}: missing`);
  if (options.listOffsets !== false) assert.ok(run.listOffsetsChecked > 0, `${label}: ListOffsets by timestamp checked`);
}

/** No error or fatal line in the broker's log, and no stack trace on its stderr (warnings such as closed connections are allowed). */
export function assertNoBrokerErrors(logs: LogCollector, label = 'broker'): void {
  const bad = logs.atLeast(LogLevel.error);
  assert.equal(bad.length, 0, `${label} logged errors:\n${bad.slice(0, 10).map((l) => JSON.stringify(l)).join('\n')}`);
  const traces = logs.stackTraces();
  assert.equal(traces.length, 0, `${label} printed a stack trace:\n${traces.slice(0, 20).join('\n')}\n(raw output: ${logs.other.slice(-20).join('\n')})`);
}
