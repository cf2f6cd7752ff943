// What the two kcat drivers (the round trip in test/clients/kcat.ts and the
// compatibility matrix in test/compat/kcat.ts) share: the stdin lines of a
// partition's produce run, and a consumer run whose -J output is parsed line by
// line into ConsumedRecords (headers as pairs, CreateTime or LogAppendTime).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { kcatPath } from '../support/tools.js';
import { recordKey, recordValue, type ConsumedRecord } from './content.js';

/** The "key<TAB>value" lines of records [from, to) that go to partition `p` (record i goes to i mod partitions), 1000 a chunk. */
export function* partitionLines(from: number, to: number, partitions: number, p: number): Generator<string> {
  let chunk: string[] = [];
  for (let i = from + ((((p - from) % partitions) + partitions) % partitions); i < to; i += partitions) {
    chunk.push(`${recordKey(i)}\t${recordValue(i)}\n`);
    if (chunk.length === 1000) {
      yield chunk.join('');
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk.join('');
}

/** One record of kcat -J output. */
interface KcatEnvelope {
  partition: number;
  offset: number;
  tstype: string;
  ts: number;
  headers?: string[];
  key: string | null;
  payload: string | null;
}

/** kcat -J always says which timestamp type a record carries. */
export type KcatRecord = ConsumedRecord & { readonly createTime: boolean };

export interface KcatConsumeOptions {
  /** How errors name the run (`kcat -C`, `kcat -G`). */
  readonly label: string;
  readonly timeoutMs: number;
  readonly onRecord: (record: KcatRecord) => void;
  readonly error: (message: string) => void;
  /** For the timeout message. */
  readonly consumed: () => number;
  /** Anything on stderr of a successful run is an error too. */
  readonly stderrIsError?: boolean;
}

/** Runs a kcat consumer with `args` (which must include -J) until it exits or times out; failures go to `error`. */
export function consumeKcatJson(args: readonly string[], o: KcatConsumeOptions): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(kcatPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr: Buffer[] = [];
    child.stderr.on('data', (b: Buffer) => stderr.push(b));
    const timer = setTimeout(() => {
      o.error(`${o.label} timed out after ${o.timeoutMs} ms with ${o.consumed()} records`);
      child.kill('SIGKILL');
    }, o.timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let m: KcatEnvelope;
      try {
        m = JSON.parse(line) as KcatEnvelope;
      } catch {
        o.error(`${o.label} printed a non-JSON line: ${line.slice(0, 200)}`);
        return;
      }
      const h = m.headers ?? [];
      const headers: Array<[string, string]> = [];
      for (let k = 0; k + 1 < h.length; k += 2) headers.push([h[k]!, h[k + 1]!]);
      o.onRecord({ partition: m.partition, offset: m.offset, key: m.key, value: m.payload, headers, timestamp: m.ts, createTime: m.tstype === 'create' });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const err = Buffer.concat(stderr).toString('utf8').trim();
      if (code !== 0) o.error(`${o.label}: exit ${code ?? signal}: ${err.slice(-1000)}`);
      else if (o.stderrIsError === true && err !== '') o.error(`${o.label}: ${err.slice(-1000)}`);
      resolve();
    });
  });
}
