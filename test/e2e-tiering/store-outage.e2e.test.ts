// The object store goes away while the broker tiers: MinIO killed (SIGKILL,
// connections refused) and, separately, frozen (SIGSTOP, connections hang).
//
// During uploads: librdkafka keeps producing and every record is acknowledged;
// no local segment is deleted before it is remote (the local log start never
// passes the highest remote offset + 1) while the disk grows; the local tier
// still serves reads (kcat, every record checked); a Fetch below the local log
// start answers a retriable error or nothing, never records. When the store is
// back, copying catches up, the bucket holds each segment exactly once and
// complete, and a consumer from offset 0 reads every record byte-identical.
//
// During remote reads: kcat consumers read a fully tiered topic from offset 0;
// the store goes away mid-read; Fetches of remote offsets answer retriable
// errors or empty (bounded by remote.fetch.max.wait.ms), never data; when the
// store is back the same consumers finish, every record checked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runPythonRoundTrip } from '../clients/run-client.js';
import { defaultBaseTimestamp, partitionRecordCount } from '../clients/content.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { errorName, isRetriable } from '../../broker/protocol/errors.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import type { SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import {
  brokerState,
  createTopic,
  fetchOnce,
  GiveUp,
  groupSegments,
  kcatConsume,
  localSegments,
  offsetsOf,
  readAndVerify,
  recordMismatch,
  segmentObjects,
  Spec,
  startTieredBroker,
  tieredTopicConfigs,
  uniquePrefix,
  waitFor,
  waitFullyTiered,
  type FetchAnswer,
  type LocalSegment,
} from './support.js';

/** Every partition's local segment files, in partition order. */
function segmentsOf(dataDir: string, topic: string): LocalSegment[][] {
  return Array.from({ length: partitions }, (_, p) => localSegments(dataDir, topic, p));
}

/** The bytes of the segments that start above each partition's highest remote offset. */
function untieredBytes(segments: readonly (readonly LocalSegment[])[], tiered: readonly bigint[]): number {
  let n = 0;
  segments.forEach((list, p) => {
    for (const s of list) if (s.baseOffset > (tiered[p] ?? -1n)) n += s.size;
  });
  return n;
}

const count = Number(process.env['SEDIMENT_TIERING_FAULT_COUNT'] ?? 200_000);
const partitions = 2;
// segment.bytes's floor; librdkafka's default batch.size (1000000) must fit in a segment.
const segmentBytes = 1_048_576;
// A store that is down or frozen fails a request attempt in 2 s.
const overrides = { 'rsm.config.s3.request.timeout.ms': '2000', 'rsm.config.s3.retry.max.attempts': '2' };

let minio: MinioServer;
const report: string[] = [];

before(async () => {
  requireTools(['python-confluent-kafka', 'kcat']);
  minio = await startMinio();
});
after(async () => {
  await minio?.stop();
  console.log(`\nstore outages:\n  ${report.join('\n  ')}`);
});

type Mode = 'killed' | 'frozen';

async function outage(mode: Mode): Promise<void> {
  if (mode === 'killed') await minio.kill('SIGKILL');
  else await minio.pause();
}

async function restore(mode: Mode): Promise<void> {
  if (mode === 'killed') await minio.restart();
  else await minio.resume();
}

/** Checks an answer for a remote offset while the store is away: a retriable error or nothing, never records. */
function assertNoRemoteData(a: FetchAnswer, what: string): void {
  assert.equal(a.recordBytes, 0, `${what}: no records while the store is away`);
  if (a.errorCode !== 0) assert.ok(isRetriable(a.errorCode), `${what}: ${errorName(a.errorCode)} is retriable`);
}

function describeAnswers(answers: readonly FetchAnswer[]): string {
  const codes = new Map<string, number>();
  for (const a of answers) {
    const k = a.errorCode === 0 ? 'empty' : errorName(a.errorCode);
    codes.set(k, (codes.get(k) ?? 0) + 1);
  }
  const slowest = Math.max(...answers.map((a) => a.elapsedMs));
  return `${[...codes].map(([k, n]) => `${k} x${n}`).join(', ')}; slowest ${Math.round(slowest)} ms`;
}

/** The bucket after catching up: each closed segment exactly once, complete, nothing else. */
async function assertBucketExact(broker: SedimentProcess, prefix: string, topic: string): Promise<number> {
  const segments = groupSegments(await segmentObjects(minio, prefix), topic);
  for (let p = 0; p < partitions; p++) {
    const remote = segments.filter((s) => s.partition === p);
    const incomplete = remote.filter((s) => !s.complete);
    assert.deepEqual(incomplete.map((s) => `${s.baseOffset}-${s.segmentId}: ${[...s.kinds].join(',')}`), [], `partition ${p}: no objects of failed attempts remain`);
    assert.equal(new Set(remote.map((s) => s.baseOffset)).size, remote.length, `partition ${p}: each segment in the bucket once`);
    assert.equal(remote[0]?.baseOffset, 0n, `partition ${p}: the bucket starts at offset 0`);
    const activeBase = localSegments(broker.dataDir, topic, p).at(-1)?.baseOffset;
    assert.ok(remote.every((s) => activeBase !== undefined && s.baseOffset < activeBase), `partition ${p}: the active segment is not uploaded`);
  }
  return segments.length;
}

for (const mode of ['killed', 'frozen'] as const) {
  describe(`MinIO ${mode}`, () => {
    test(`during uploads: produce and local reads go on, the disk grows, nothing is lost, copying catches up (${count} records)`, { timeout: 10 * 60_000 }, async () => {
      const prefix = uniquePrefix(`outage-upload-${mode}`);
      const topic = `upload-${mode}`;
      const broker = await startTieredBroker(minio, prefix, { overrides });
      const baseTimestamp = defaultBaseTimestamp();
      try {
        await createTopic(broker.bootstrap, topic, partitions, tieredTopicConfigs(segmentBytes));
        // The store goes away once copying has started: the producer holds a quarter in until a copy has finished and
        // the store is gone, so three quarters of the records arrive during the outage.
        const firstCopy = broker.logs.next((l) => l.msg === 'remote segment copy finished');
        let atOutage: { tiered: bigint[]; segments: LocalSegment[][] } | undefined;
        const produced = await runPythonRoundTrip({
          bootstrap: broker.bootstrap,
          topic,
          count,
          partitions,
          phase: 'produce',
          createTopic: false,
          baseTimestamp,
          holdAt: count / 4,
          onHold: async () => {
            await firstCopy;
            await outage(mode);
            const segments = segmentsOf(broker.dataDir, topic);
            atOutage = { tiered: await offsetsOf(broker.bootstrap, topic, partitions, Spec.latestTiered), segments };
          },
        });
        assert.equal(produced.ok, true, `${produced.errors.join('\n')}\n${brokerState(broker)}`);
        assert.equal(produced.produced, count, 'every record acknowledged while the store was away');
        assert.ok(atOutage !== undefined, 'the outage started during the produce');

        // Copies hit the outage and fail (the frozen store after the request timeout).
        await waitFor('a failed copy', () => broker.logs.atLeast(40).some((l) => l.msg === 'remote segment copy failed'), {
          timeoutMs: 60_000,
          broker,
          wakeOn: ['remote segment copy failed'],
        });
        const duringTiered = await offsetsOf(broker.bootstrap, topic, partitions, Spec.latestTiered);
        const duringLocalStart = await offsetsOf(broker.bootstrap, topic, partitions, Spec.earliestLocal);
        // Segments copied before the outage may still go (local retention is 1 s), so the disk that must grow is
        // what is not remote: the segments above the highest remote offset, then and now.
        const atOutageBytes = untieredBytes(atOutage.segments, duringTiered);
        const duringBytes = untieredBytes(segmentsOf(broker.dataDir, topic), duringTiered);
        assert.ok(duringBytes > atOutageBytes, `the local bytes not yet remote grew while the store was away (${atOutageBytes} -> ${duringBytes} bytes)`);
        let localRecords = 0;
        for (let p = 0; p < partitions; p++) {
          assert.ok((duringTiered[p] ?? -1n) >= (atOutage.tiered[p] ?? -1n), `partition ${p}: -5 never goes back`);
          // Nothing local goes before it is remote: the tiers still meet (or overlap).
          assert.ok((duringLocalStart[p] ?? 0n) <= (duringTiered[p] ?? -1n) + 1n, `partition ${p}: local start ${duringLocalStart[p]} <= highest remote ${duringTiered[p]} + 1`);
          assert.ok(localSegments(broker.dataDir, topic, p).length > 2, `partition ${p}: closed segments wait on disk`);
          // Local reads go on: from the first offset that is not remote, which no retention can take while the store
          // is away (the local start itself may move on meanwhile, over segments copied before the outage).
          const firstNotRemote = (duringTiered[p] ?? -1n) + 1n;
          localRecords += await readAndVerify({ bootstrap: broker.bootstrap, topic, partition: p, offset: firstNotRemote, partitions, baseTimestamp, timeoutMs: 120_000 });
          // A read below the local log start needs the store: a retriable error or nothing.
          if ((duringLocalStart[p] ?? 0n) > 0n) assertNoRemoteData(await fetchOnce(broker.bootstrap, topic, p, 0n), `partition ${p} Fetch at 0`);
        }
        assert.ok(localRecords > 0);
        report.push(
          `${mode} during uploads: local bytes not remote ${(atOutageBytes / 1048576).toFixed(1)} -> ${(duringBytes / 1048576).toFixed(1)} MiB, ` +
            `-5 stuck at ${duringTiered.join('/')} of ${partitionRecordCount(count, partitions, 0)}, ${localRecords} records read locally`,
        );

        const restored = performance.now();
        await restore(mode);
        await waitFullyTiered(broker, topic, partitions, 3 * 60_000);
        report.push(`${mode} during uploads: caught up ${((performance.now() - restored) / 1000).toFixed(1)} s after the store came back`);
        const segments = await assertBucketExact(broker, prefix, topic);
        report.push(`${mode} during uploads: bucket holds ${segments} segments, each once`);

        const consumed = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'consume', createTopic: false, baseTimestamp, timeoutMs: 5 * 60_000 });
        assert.equal(consumed.ok, true, `${consumed.errors.join('\n')}\n${brokerState(broker)}`);
        assert.equal(consumed.consumed, count);
        assertNoBrokerErrors(broker.logs);
      } finally {
        if (mode === 'frozen') await minio.resume();
        else if (!(await minioAlive())) await minio.restart();
        await broker.close();
      }
    });

    test(`during remote reads: Fetches answer retriable errors or nothing, consumers finish when the store is back (${count} records)`, { timeout: 10 * 60_000 }, async () => {
      const prefix = uniquePrefix(`outage-read-${mode}`);
      const topic = `read-${mode}`;
      // A small chunk cache, so the consumers need the store again soon after it went away.
      const broker = await startTieredBroker(minio, prefix, { overrides: { ...overrides, 'rsm.config.chunk.cache.size.bytes': String(4 * 1048576) } });
      const baseTimestamp = defaultBaseTimestamp();
      try {
        await createTopic(broker.bootstrap, topic, partitions, tieredTopicConfigs(segmentBytes));
        const produced = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'produce', createTopic: false, baseTimestamp });
        assert.equal(produced.ok, true, produced.errors.join('\n'));
        const tiered = await waitFullyTiered(broker, topic, partitions, 3 * 60_000);

        const problems: string[] = [];
        const next = new Array<number>(partitions).fill(0);
        let outageStarted: Promise<void> | undefined;
        const consumers = Array.from({ length: partitions }, (_, p) =>
          kcatConsume({
            bootstrap: broker.bootstrap,
            topic,
            partition: p,
            offset: 0n,
            timeoutMs: 8 * 60_000,
            // librdkafka prefetches up to 64 MiB by default: keep it close to what it hands out.
            config: { 'queued.max.messages.kbytes': '1024', 'fetch.message.max.bytes': '131072' },
            onRecord: (r) => {
              if (r.offset !== next[p]) problems.push(`partition ${p}: offset ${r.offset}, expected ${next[p]}`);
              next[p] = r.offset + 1;
              const m = recordMismatch(r, partitions, baseTimestamp);
              if (m !== null) problems.push(m);
              // The store goes away once a consumer is 5% into the remote tier.
              if (outageStarted === undefined && r.offset > Number(tiered[p] ?? 0n) / 20) outageStarted = outage(mode);
            },
          }),
        );
        let exited = '';
        consumers.forEach((c, p) => void c.done.then((e) => (exited ||= `kcat partition ${p} exited (${e.code ?? e.signal}): ${e.stderr.slice(-1000)}`)));
        await waitFor(
          'the outage to start',
          () => {
            if (exited !== '' && outageStarted === undefined) throw new GiveUp(exited);
            return outageStarted !== undefined;
          },
          { timeoutMs: 120_000 },
        );
        await outageStarted;
        const atOutage = [...next];
        // Fetches of remote offsets far ahead of the consumers, beyond the 4 MiB chunk cache and its read-ahead.
        const answers: FetchAnswer[] = [];
        for (let p = 0; p < partitions; p++) {
          for (const fraction of [0.6, 0.75, 0.9]) {
            const offset = BigInt(Math.floor(Number(tiered[p] ?? 0n) * fraction));
            const a = await fetchOnce(broker.bootstrap, topic, p, offset);
            assertNoRemoteData(a, `partition ${p} Fetch at ${offset} (consumer at ${next[p]})`);
            answers.push(a);
          }
        }
        const codes = describeAnswers(answers);
        if (mode === 'killed') assert.ok(answers.some((a) => a.errorCode !== 0), `a refused store is reported as a retriable error (got ${codes})`);
        else assert.ok(answers.every((a) => a.elapsedMs < 10_000), `a frozen store does not hang the Fetch (got ${codes})`);
        report.push(`${mode} during remote reads: consumers at ${atOutage.join('/')}; remote Fetches answered ${codes}`);

        await restore(mode);
        const ends = await Promise.all(consumers.map((c) => c.done));
        ends.forEach((e, p) => assert.equal(e.code, 0, `kcat partition ${p}: exit ${e.code ?? e.signal}: ${e.stderr.slice(-2000)}`));
        assert.deepEqual(problems.slice(0, 10), [], `${problems.length} problems`);
        for (let p = 0; p < partitions; p++) assert.equal(next[p], partitionRecordCount(count, partitions, p), `partition ${p}: read to the end`);
        report.push(`${mode} during remote reads: consumers finished, ${consumers.reduce((n, c) => n + c.records, 0)} records checked`);
        assertNoBrokerErrors(broker.logs);
      } finally {
        if (mode === 'frozen') await minio.resume();
        else if (!(await minioAlive())) await minio.restart();
        await broker.close();
      }
    });
  });
}

async function minioAlive(): Promise<boolean> {
  try {
    const res = await fetch(`${minio.endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1000) });
    return res.status === 200;
  } catch {
    return false;
  }
}
