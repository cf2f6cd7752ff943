// Real-client round trip with kcat (librdkafka 2.0.2 in Debian 12).
// kcat produces stdin lines "key<TAB>value" (-K), with headers fixed per run (-H),
// so one kcat process per partition (-p) carries that partition's records in
// order, each with headers src=kcat, part=<p>. kcat cannot set timestamps: the
// records carry librdkafka's CreateTime, checked to lie in the produce window
// and never to go backwards within a partition. Consuming uses `kcat -C -e -J`
// (all partitions from the beginning), and ListOffsets by timestamp `kcat -Q`.
// kcat cannot create topics; the topic is created with kafkajs's admin client.
import { kcatPath, requireTools } from '../support/tools.js';
import { createTopic, runProcess, type ClientRun, type RoundTripOptions } from './common.js';
import { consumeKcatJson, partitionLines } from './kcat-common.js';
import { RoundTripVerifier, recordPartition, timestampSamples, type Expectation } from './content.js';

export interface KcatRoundTripOptions extends RoundTripOptions {
  /** Wall-clock window of an earlier produce phase, to check timestamps in a consume phase. */
  readonly produceWindow?: { readonly start: number; readonly end: number };
}

export interface KcatRun extends ClientRun {
  readonly produceWindow: { readonly start: number; readonly end: number } | null;
}

const client = 'kcat';

function librdkafkaConfig(o: RoundTripOptions): string[] {
  const x = ['-X', 'linger.ms=5'];
  if (o.idempotent === true) x.push('-X', 'enable.idempotence=true');
  // Without idempotence a retried request can overtake a later one; one request
  // in flight keeps the per-partition order the consumer verifies.
  else x.push('-X', 'max.in.flight.requests.per.connection=1');
  return x;
}

async function produce(o: KcatRoundTripOptions, partitions: number, error: (m: string) => void, timeoutMs: number): Promise<void> {
  const codec = o.compression ?? 'none';
  const runs = Array.from({ length: partitions }, (_, p) => {
    const args = ['-P', '-b', o.bootstrap, '-t', o.topic, '-p', String(p), '-K', '\\t', '-H', `src=${client}`, '-H', `part=${p}`, ...librdkafkaConfig(o)];
    if (codec !== 'none') args.push('-z', codec);
    return runProcess(kcatPath, args, { input: partitionLines(0, o.count, partitions, p), timeoutMs }).then((r) => {
      if (r.code !== 0) error(`kcat -P partition ${p}: exit ${r.code ?? r.signal}: ${r.stderr.trim().slice(-1000)}`);
      else if (/error|fail/i.test(r.stderr)) error(`kcat -P partition ${p}: ${r.stderr.trim().slice(-1000)}`);
    });
  });
  await Promise.all(runs);
}

function consume(o: KcatRoundTripOptions, verifier: RoundTripVerifier, timestamps: Map<number, number[]>, timeoutMs: number): Promise<void> {
  return consumeKcatJson(['-C', '-b', o.bootstrap, '-t', o.topic, '-o', 'beginning', '-e', '-q', '-J'], {
    label: 'kcat -C',
    timeoutMs,
    stderrIsError: true,
    error: (m) => verifier.error(m),
    consumed: () => verifier.consumedCount,
    onRecord: (r) => {
      let list = timestamps.get(r.partition);
      if (list === undefined) timestamps.set(r.partition, (list = []));
      list[r.offset] = r.timestamp;
      verifier.observe(r);
    },
  });
}

/** First offset in `ts` (timestamps by offset) whose timestamp is >= target, or -1. */
function firstOffsetAtOrAfter(ts: readonly number[], target: number): number {
  for (let off = 0; off < ts.length; off++) if ((ts[off] ?? -Infinity) >= target) return off;
  return -1;
}

async function checkQuery(o: KcatRoundTripOptions, partitions: number, timestamps: Map<number, number[]>, error: (m: string) => void): Promise<number> {
  const recordTs = (i: number): number | undefined => timestamps.get(recordPartition(i, partitions))?.[Math.floor(i / partitions)];
  const targets: number[] = [];
  for (const i of timestampSamples(o.count)) {
    const ts = recordTs(i);
    if (ts !== undefined) targets.push(ts);
  }
  const maxTs = Math.max(...[...timestamps.values()].flat());
  if (Number.isFinite(maxTs)) targets.push(maxTs + 1000);
  let checked = 0;
  for (const target of targets) {
    const args = ['-Q', '-b', o.bootstrap];
    for (let p = 0; p < partitions; p++) args.push('-t', `${o.topic}:${p}:${target}`);
    const r = await runProcess(kcatPath, args, { timeoutMs: 60_000 });
    if (r.code !== 0) {
      error(`kcat -Q ${target}: exit ${r.code ?? r.signal}: ${r.stderr.trim().slice(-500)}`);
      continue;
    }
    const got = new Map<number, number>();
    for (const m of r.stdout.matchAll(/^(.*) \[(\d+)\] offset (-?\d+)$/gm)) got.set(Number(m[2]), Number(m[3]));
    for (let p = 0; p < partitions; p++) {
      const want = firstOffsetAtOrAfter(timestamps.get(p) ?? [], target);
      const offset = got.get(p);
      if (offset !== want) error(`kcat -Q timestamp ${target} partition ${p}: offset ${offset ?? 'missing'}, expected ${want}`);
      checked++;
    }
  }
  return checked;
}

/** kcat: none, gzip, snappy, lz4, zstd. Assign mode only (kcat -G would add a group mode). */
export async function runKcatRoundTrip(o: KcatRoundTripOptions): Promise<KcatRun> {
  requireTools(['kcat']);
  if (o.group !== undefined) throw new Error('runKcatRoundTrip: group mode is not wired for kcat');
  const partitions = o.partitions ?? 3;
  const timeoutMs = o.timeoutMs ?? 600_000;
  const phase = o.phase ?? 'all';
  const started = performance.now();
  let window = o.produceWindow ?? null;
  const lastTs = new Map<number, number>();
  const expect: Expectation = {
    headers: (i) => [
      ['src', client],
      ['part', String(recordPartition(i, partitions))],
    ],
    timestamp: (_i, ts, p) => {
      const prev = lastTs.get(p) ?? -Infinity;
      lastTs.set(p, ts);
      if (ts < prev) return `timestamp ${ts} goes back from ${prev}`;
      if (window !== null && (ts < window.start - 1000 || ts > window.end + 1000)) return `timestamp ${ts} outside the produce window ${window.start}..${window.end}`;
      return null;
    },
  };
  const verifier = new RoundTripVerifier(o.count, partitions, expect);
  const error = (m: string): void => verifier.error(m);
  let produceMs = 0;
  let consumeMs = 0;
  let listOffsetsChecked = 0;
  let produced = 0;
  if (phase !== 'consume') {
    const t0 = performance.now();
    const start = Date.now();
    try {
      if (o.createTopic !== false) await createTopic(o.bootstrap, o.topic, partitions);
      await produce(o, partitions, error, timeoutMs);
      produced = o.count;
    } catch (e) {
      error(`produce: ${String(e)}`);
    }
    window = { start, end: Date.now() };
    produceMs = Math.round(performance.now() - t0);
  }
  let v = { consumed: 0, duplicates: 0, missing: 0, ...verifier.report() };
  if (phase !== 'produce') {
    const t0 = performance.now();
    const timestamps = new Map<number, number[]>();
    await consume(o, verifier, timestamps, timeoutMs);
    consumeMs = Math.round(performance.now() - t0);
    listOffsetsChecked = await checkQuery(o, partitions, timestamps, error);
    v = verifier.finish();
  }
  const kcatVersion = await runProcess(kcatPath, ['-V'], { timeoutMs: 10_000 });
  return {
    client,
    clientVersion: /Version (\S+)/.exec(kcatVersion.stdout + kcatVersion.stderr)?.[1] ?? 'unknown',
    compression: o.compression ?? 'none',
    idempotent: o.idempotent === true,
    mode: 'assign',
    topic: o.topic,
    partitions,
    baseTimestamp: window?.start ?? 0,
    produced,
    consumed: v.consumed,
    duplicates: v.duplicates,
    missing: v.missing,
    listOffsetsChecked,
    produceMs,
    consumeMs,
    ok: v.errorCount === 0,
    errorCount: v.errorCount,
    errors: v.errors,
    produceWindow: window,
    wallMs: performance.now() - started,
  };
}
