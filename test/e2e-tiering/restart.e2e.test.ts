// After a restart, clean (SIGTERM) and crash (SIGKILL), the tiered state comes
// back exactly: ListOffsets -2 (log start, moved by remote expiration under
// retention.bytes), -4, -5 and -1, offset-for-timestamp answers on both tiers,
// the segment histories in `__remote_log_metadata`, the bucket's keys (nothing
// re-copied, nothing deleted), the out-of-range boundary below the log start,
// and every record from the log start on, read with kcat and checked.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runPythonRoundTrip } from '../clients/run-client.js';
import { defaultBaseTimestamp } from '../clients/content.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import type { SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import {
  createTopic,
  fetchOnce,
  groupSegments,
  listBucket,
  listOffsets,
  localSegments,
  readAndVerify,
  readRemoteLogMetadata,
  segmentHistories,
  segmentObjects,
  startTieredBroker,
  tierOffsets,
  tieredTopicConfigs,
  uniquePrefix,
  waitFor,
  waitFullyTiered,
  TIERING_EVENTS,
} from './support.js';

const count = Number(process.env['SEDIMENT_TIERING_RESTART_COUNT'] ?? 200_000);
const partitions = 2;
const segmentBytes = 1_048_576;
const retentionBytes = 6 * 1_048_576;
const topic = 'restart';

let minio: MinioServer;
let broker: SedimentProcess;
const prefix = uniquePrefix('restart');
const baseTimestamp = defaultBaseTimestamp();
const report: string[] = [];

before(async () => {
  requireTools(['python-confluent-kafka', 'kcat', 'kafkajs']);
  minio = await startMinio();
  broker = await startTieredBroker(minio, prefix);
});
after(async () => {
  await broker?.close();
  await minio?.stop();
  console.log(`\nrestart:\n  ${report.join('\n  ')}`);
});

interface Snapshot {
  readonly offsets: Awaited<ReturnType<typeof tierOffsets>>;
  readonly timestamps: string[];
  readonly keys: string[];
  readonly histories: string[];
  readonly belowStart: number[];
  readonly records: number[];
}

/** Everything a client (and the bucket) can see of the tiered state. */
async function snapshot(): Promise<Snapshot> {
  // Right after a start the metadata may still be replaying: retriable errors until then.
  const offsets = await waitFor('ListOffsets to answer', () => tierOffsets(broker.bootstrap, topic, partitions), { timeoutMs: 60_000, intervalMs: 200 });
  const timestamps: string[] = [];
  for (const i of [0, 1000, Math.floor(count / 3), Math.floor(count / 2), count - 10, count - 1]) {
    for (const a of await listOffsets(broker.bootstrap, topic, partitions, BigInt(baseTimestamp + i))) timestamps.push(`${i}/${a.partition}: ${a.offset}@${a.timestamp}`);
  }
  const histories = [...segmentHistories(await readRemoteLogMetadata(broker.bootstrap), topic)]
    .map(([id, h]) => `${h.partition}/${h.startOffset}-${h.endOffset} ${id}: ${h.states.join('>')}`)
    .sort();
  const belowStart: number[] = [];
  const records: number[] = [];
  for (let p = 0; p < partitions; p++) {
    const start = offsets.earliest[p] ?? 0n;
    belowStart.push((await fetchOnce(broker.bootstrap, topic, p, start - 1n)).errorCode);
    records.push(await readAndVerify({ bootstrap: broker.bootstrap, topic, partition: p, offset: start, partitions, baseTimestamp, timeoutMs: 120_000 }));
  }
  // Last, seconds after a start: the restarted broker's first task runs (every second) are over by then.
  const keys = (await listBucket(minio, prefix)).map((o) => `${o.key} ${o.size}`).sort();
  return { offsets, timestamps, keys, histories, belowStart, records };
}

/** Total retention is done: deleting the oldest remote segment would take the partition under retention.bytes. */
async function expirationSettled(): Promise<boolean> {
  const segments = groupSegments(await segmentObjects(minio, prefix), topic);
  for (let p = 0; p < partitions; p++) {
    const remote = segments.filter((s) => s.partition === p);
    const oldest = remote[0];
    if (oldest === undefined || oldest.baseOffset === 0n) return false;
    const local = localSegments(broker.dataDir, topic, p).reduce((n, s) => n + s.size, 0);
    const total = remote.reduce((n, s) => n + s.dataSize, 0) + local;
    if (total - retentionBytes >= oldest.dataSize) return false;
  }
  return true;
}

function tieringLines(): string[] {
  return broker.logs.lines.filter((l) => l.msg !== undefined && (TIERING_EVENTS as readonly string[]).concat(['remote segment copy started', 'remote segment delete started', 'orphaned remote segment objects deleted']).includes(l.msg)).map((l) => String(l.msg));
}

test(`tiered state after a clean restart and after kill -9 is exactly as before (${count} records, retention.bytes ${retentionBytes})`, { timeout: 10 * 60_000 }, async () => {
  await createTopic(broker.bootstrap, topic, partitions, tieredTopicConfigs(segmentBytes, { 'retention.bytes': String(retentionBytes) }));
  const produced = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'produce', createTopic: false, baseTimestamp });
  assert.equal(produced.ok, true, produced.errors.join('\n'));
  await waitFullyTiered(broker, topic, partitions, 3 * 60_000);
  await waitFor('remote expiration under retention.bytes to settle', expirationSettled, { timeoutMs: 60_000, intervalMs: 500, broker, wakeOn: TIERING_EVENTS });

  const before = await snapshot();
  for (let p = 0; p < partitions; p++) assert.ok((before.offsets.earliest[p] ?? 0n) > 0n, `partition ${p}: remote expiration moved the log start`);
  assert.deepEqual(before.belowStart, [ErrorCode.OFFSET_OUT_OF_RANGE, ErrorCode.OFFSET_OUT_OF_RANGE], 'below the log start is out of range');
  report.push(
    `before: -2 ${before.offsets.earliest.join('/')}, -4 ${before.offsets.earliestLocal.join('/')}, -5 ${before.offsets.latestTiered.join('/')}, -1 ${before.offsets.latest.join('/')}; ` +
      `${before.keys.length} objects, ${before.histories.length} segment histories, ${before.records.join('+')} records readable`,
  );
  assertNoBrokerErrors(broker.logs);

  for (const how of ['SIGTERM', 'SIGKILL'] as const) {
    if (how === 'SIGTERM') await broker.restart();
    else {
      await broker.kill();
      await broker.start();
    }
    const t = performance.now();
    const after = await snapshot();
    report.push(`after ${how}: state read back in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    assert.deepEqual(after.offsets, before.offsets, `${how}: -2/-4/-5/-1`);
    assert.deepEqual(after.timestamps, before.timestamps, `${how}: offsets for timestamps`);
    assert.deepEqual(after.histories, before.histories, `${how}: remote log metadata`);
    assert.deepEqual(after.belowStart, before.belowStart, `${how}: out of range below the log start`);
    assert.deepEqual(after.records, before.records, `${how}: records from the log start`);
    assert.deepEqual(after.keys, before.keys, `${how}: the bucket (nothing copied again, nothing deleted)`);
    assert.deepEqual(tieringLines(), [], `${how}: the restarted broker copied or deleted nothing`);
    assertNoBrokerErrors(broker.logs, `broker after ${how}`);
  }
});
