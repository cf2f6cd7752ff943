// TypeScript entry points for the real-client round trips. Each runs one
// unmodified client against `bootstrap` (Sediment or the reference Kafka),
// and resolves with the client's JSON summary; `ok` is false on any mismatch.
//   const s = await runPythonRoundTrip({ bootstrap, topic: 't', count: 100_000, compression: 'zstd' });
//   assert.equal(s.ok, true, s.errors.join('\n'));
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot, requireTools, systemPython } from '../support/tools.js';
import { clientCodecs, parseSummary, runProcess, type ClientRun, type Codec, type RoundTripOptions } from './common.js';
import { defaultBaseTimestamp } from './content.js';

export type { RoundTripSummary } from './content.js';
export { clientCodecs, createTopic, type ClientRun, type Codec, type RoundTripOptions } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function commonArgs(o: RoundTripOptions, baseTimestamp: number): string[] {
  const args = [
    '--bootstrap', o.bootstrap,
    '--topic', o.topic,
    '--count', String(o.count),
    '--partitions', String(o.partitions ?? 3),
    '--compression', o.compression ?? 'none',
    '--base-timestamp', String(baseTimestamp),
    '--phase', o.phase ?? 'all',
    '--timeout', String(Math.floor((o.timeoutMs ?? 600_000) / 2000)),
  ];
  if (o.idempotent === true) args.push('--idempotent');
  if (o.group !== undefined) args.push('--group', o.group);
  if (o.createTopic === false) args.push('--no-create');
  if (o.batchSize !== undefined) args.push('--batch-size', String(o.batchSize));
  return args;
}

/** confluent-kafka-python (librdkafka) via /usr/bin/python3: none, gzip, snappy, lz4, zstd. */
export async function runPythonRoundTrip(o: RoundTripOptions): Promise<ClientRun> {
  requireTools(['python-confluent-kafka']);
  const script = path.join(repoRoot(), 'test', 'clients', 'python', 'round_trip.py');
  const started = performance.now();
  const args = [script, ...commonArgs(o, o.baseTimestamp ?? defaultBaseTimestamp())];
  const onProgress = o.onProgress;
  if (onProgress !== undefined) args.push('--progress', String(o.progressEvery ?? 10_000));
  const hold = o.holdAt === undefined ? undefined : holdGate(o.onHold);
  if (o.holdAt !== undefined) args.push('--hold-at', String(o.holdAt));
  const r = await runProcess(systemPython, args, {
    timeoutMs: o.timeoutMs ?? 600_000,
    ...(hold === undefined ? {} : { input: hold.input }),
    onStderrLine: (line: string) => {
      const progress = /^progress acked=(\d+)$/.exec(line);
      if (progress?.[1] !== undefined) onProgress?.(Number(progress[1]));
      const held = /^held acked=(\d+)/.exec(line);
      if (held?.[1] !== undefined) hold?.held(Number(held[1]));
    },
  });
  if (hold?.failure !== undefined) throw hold.failure.error;
  return parseSummary('confluent-kafka-python', r, performance.now() - started);
}

/** The producer's stdin while it holds: one line once `onHold` has settled (a failure is kept for the caller). */
function holdGate(onHold: ((acked: number) => Promise<void>) | undefined): {
  input: AsyncIterable<string>;
  held: (acked: number) => void;
  readonly failure: { error: unknown } | undefined;
} {
  let held: (acked: number) => void = () => undefined;
  const reached = new Promise<number>((resolve) => (held = resolve));
  let failure: { error: unknown } | undefined;
  async function* input(): AsyncGenerator<string> {
    const acked = await reached;
    try {
      await onHold?.(acked);
    } catch (error) {
      failure = { error };
    }
    yield 'go\n';
  }
  return {
    input: input(),
    held: (acked: number) => held(acked),
    get failure() {
      return failure;
    },
  };
}

/** kafkajs 2.x in a child Node process: none and gzip. */
export async function runKafkajsRoundTrip(o: RoundTripOptions): Promise<ClientRun> {
  requireTools(['kafkajs']);
  const codec = o.compression ?? 'none';
  if (!(clientCodecs.kafkajs as readonly Codec[]).includes(codec)) {
    throw new Error(`kafkajs has no built-in ${codec} codec (only none and gzip; others need plugins)`);
  }
  const program = path.join(here, 'kafkajs', 'round-trip.js');
  const started = performance.now();
  const r = await runProcess(process.execPath, [program, ...commonArgs(o, o.baseTimestamp ?? defaultBaseTimestamp())], { timeoutMs: o.timeoutMs ?? 600_000 });
  return parseSummary('kafkajs', r, performance.now() - started);
}

export { runKcatRoundTrip } from './kcat.js';
