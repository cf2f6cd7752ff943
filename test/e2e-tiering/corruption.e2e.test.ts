// A corrupted remote object is an error, never data. A fully tiered topic's
// remote objects are overwritten behind the broker's back (same size, a few
// bytes flipped) with the `minio` client, before anything was read (nothing
// cached): a Fetch of the damaged segment answers CORRUPT_MESSAGE with no
// records, a kcat consumer from offset 0 gets every record before the damage,
// each one right, and nothing from the damaged segment on (librdkafka passes
// the error to the application, kcat stops on it); once the original
// bytes are back the same reads succeed (nothing bad was cached).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runPythonRoundTrip } from '../clients/run-client.js';
import { defaultBaseTimestamp, partitionRecordCount } from '../clients/content.js';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { ErrorCode, errorName } from '../../broker/protocol/errors.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import type { SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import {
  createTopic,
  fetchOnce,
  groupSegments,
  kcatConsume,
  readAndVerify,
  recordMismatch,
  segmentObjects,
  startTieredBroker,
  tieredTopicConfigs,
  uniquePrefix,
  waitFullyTiered,
  type BucketSegment,
} from './support.js';

const count = Number(process.env['SEDIMENT_TIERING_CORRUPT_COUNT'] ?? 60_000);
const partitions = 1;
const segmentBytes = 1_048_576;

let minio: MinioServer;
const report: string[] = [];

before(async () => {
  requireTools(['python-confluent-kafka', 'kcat']);
  minio = await startMinio();
});
after(async () => {
  await minio?.stop();
  console.log(`\ncorrupted remote objects:\n  ${report.join('\n  ')}`);
});

async function getObject(key: string): Promise<Buffer> {
  const stream = await minio.client().getObject(minio.bucket, key);
  const parts: Buffer[] = [];
  for await (const b of stream as AsyncIterable<Buffer>) parts.push(b);
  return Buffer.concat(parts);
}

async function putObject(key: string, bytes: Buffer): Promise<void> {
  await minio.client().putObject(minio.bucket, key, bytes, bytes.length);
}

function flipped(bytes: Buffer, at: number, n = 8): Buffer {
  const out = Buffer.from(bytes);
  for (let k = at; k < Math.min(at + n, out.length); k++) out[k] = (out[k] as number) ^ 0xff;
  return out;
}

async function tieredTopic(
  prefix: string,
  topic: string,
): Promise<{ broker: SedimentProcess; segments: BucketSegment[]; baseTimestamp: number; dataKey: (s: BucketSegment, kind: string) => string; sizeOf: (s: BucketSegment, kind: string) => number }> {
  const broker = await startTieredBroker(minio, prefix);
  const baseTimestamp = defaultBaseTimestamp();
  await createTopic(broker.bootstrap, topic, partitions, tieredTopicConfigs(segmentBytes));
  // Small batches: every segment gets index entries however fast the producer runs.
  const produced = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'produce', createTopic: false, baseTimestamp, batchSize: 16_384 });
  assert.equal(produced.ok, true, produced.errors.join('\n'));
  await waitFullyTiered(broker, topic, partitions, 2 * 60_000);
  const objects = await segmentObjects(minio, prefix);
  const segments = groupSegments(objects, topic);
  assert.ok(segments.length >= 4, `several remote segments (${segments.length})`);
  const dataKey = (s: BucketSegment, kind: string): string => {
    const o = objects.find((x) => x.segmentId === s.segmentId && x.kind === kind);
    assert.ok(o !== undefined, `${kind} object of segment ${s.baseOffset}`);
    return o.key;
  };
  const sizeOf = (s: BucketSegment, kind: string): number => objects.find((x) => x.segmentId === s.segmentId && x.kind === kind)?.size ?? 0;
  return { broker, segments, baseTimestamp, dataKey, sizeOf };
}

test('a corrupted data object is CORRUPT_MESSAGE, never records; consumers stop before it; restored bytes read again', { timeout: 8 * 60_000 }, async () => {
  const prefix = uniquePrefix('corrupt-data');
  const topic = 'corrupt-data';
  const { broker, segments, baseTimestamp, dataKey } = await tieredTopic(prefix, topic);
  try {
    const victim = segments[2] as BucketSegment;
    const next = segments[3] as BucketSegment;
    const key = dataKey(victim, 'log');
    const original = await getObject(key);
    assert.equal(original.length, victim.dataSize);
    // Flip bytes in the middle of the object: inside some record batch's records.
    await putObject(key, flipped(original, Math.floor(original.length / 2)));

    // Below the damage: served. At the damaged segment: CORRUPT_MESSAGE and no bytes, at any offset of it.
    const before = await fetchOnce(broker.bootstrap, topic, 0, 0n);
    assert.equal(before.errorCode, 0);
    assert.ok(before.recordBytes > 0, 'the segment before the damage is served');
    const answers = [];
    for (const offset of [victim.baseOffset, (victim.baseOffset + next.baseOffset) / 2n, next.baseOffset - 1n]) {
      const a = await fetchOnce(broker.bootstrap, topic, 0, offset);
      answers.push(`${offset}: ${errorName(a.errorCode)}`);
      assert.equal(a.recordBytes, 0, `Fetch at ${offset}: no records from a damaged segment`);
      // The whole 1 MiB chunk fails its CRC (the segment is one chunk), so every offset in it does.
      assert.equal(a.errorCode, ErrorCode.CORRUPT_MESSAGE, `Fetch at ${offset}: ${errorName(a.errorCode)}`);
    }
    report.push(`data object of segment ${victim.baseOffset} flipped mid-object: Fetch answers ${answers.join(', ')}`);

    // A real consumer from offset 0: every record it gets is right, and it gets nothing past the damage.
    const problems: string[] = [];
    let last = -1;
    const c = kcatConsume({
      bootstrap: broker.bootstrap,
      topic,
      partition: 0,
      offset: 0n,
      timeoutMs: 60_000,
      onRecord: (r) => {
        const m = recordMismatch(r, partitions, baseTimestamp);
        if (m !== null) problems.push(m);
        if (r.offset !== last + 1) problems.push(`offset ${r.offset} after ${last}`);
        last = r.offset;
      },
    });
    // librdkafka reports the broker's CORRUPT_MESSAGE to the application ("Invalid message"), and kcat stops on it.
    const end = await c.done;
    assert.notEqual(end.code, 0, 'kcat ends with an error');
    assert.match(end.stderr, /Invalid message/, `the consumer is told why: ${end.stderr.slice(-500)}`);
    assert.deepEqual(problems.slice(0, 5), [], `${problems.length} bad records`);
    assert.ok(last < Number(victim.baseOffset), `nothing from the damaged segment on (last offset ${last})`);
    report.push(`kcat from 0: ${c.records} right records (last offset ${last}, damaged segment starts at ${victim.baseOffset}), then "${end.stderr.trim().split('\n').at(-1) ?? ''}"`);

    // Original bytes back: every record reads (nothing bad was cached).
    await putObject(key, original);
    const n = await readAndVerify({ bootstrap: broker.bootstrap, topic, partition: 0, offset: 0n, partitions, baseTimestamp, timeoutMs: 120_000 });
    assert.equal(n, partitionRecordCount(count, partitions, 0));
  } finally {
    await broker.close();
  }
});

test('corrupted offset and time indexes are errors too, never a wrong position or answer', { timeout: 8 * 60_000 }, async () => {
  const prefix = uniquePrefix('corrupt-index');
  const topic = 'corrupt-index';
  const { broker, segments, baseTimestamp, dataKey, sizeOf } = await tieredTopic(prefix, topic);
  try {
    // A segment whose indexes have entries (a segment of a few large batches may have none: nothing to damage).
    const victim = segments.slice(0, -1).find((s) => sizeOf(s, 'index') >= 16 && sizeOf(s, 'timeindex') >= 24);
    assert.ok(victim !== undefined, `a remote segment with index entries: ${segments.map((s) => `${s.baseOffset}:${sizeOf(s, 'index')}/${sizeOf(s, 'timeindex')}`).join(' ')}`);
    const indexKey = dataKey(victim, 'index');
    const timeKey = dataKey(victim, 'timeindex');
    const index = await getObject(indexKey);
    const time = await getObject(timeKey);
    await putObject(indexKey, flipped(index, 0, index.length));
    await putObject(timeKey, flipped(time, 0, time.length));

    const a = await fetchOnce(broker.bootstrap, topic, 0, victim.baseOffset + 10n);
    assert.equal(a.recordBytes, 0, 'no records positioned by a damaged offset index');
    assert.equal(a.errorCode, ErrorCode.CORRUPT_MESSAGE, `Fetch: ${errorName(a.errorCode)}`);
    // Offset for a timestamp inside the damaged segment: an error, never a wrong offset.
    const i = Number(victim.baseOffset) + 5;
    const answer = await listOffsetsRaw(broker.bootstrap, topic, BigInt(baseTimestamp + i));
    assert.notEqual(answer.errorCode, 0, `ListOffsets by time in a segment with a damaged time index: an error (got offset ${answer.offset})`);
    report.push(`offset + time index of segment ${victim.baseOffset} damaged: Fetch ${errorName(a.errorCode)}, ListOffsets(ts) ${errorName(answer.errorCode)}`);

    await putObject(indexKey, index);
    await putObject(timeKey, time);
    const n = await readAndVerify({ bootstrap: broker.bootstrap, topic, partition: 0, offset: 0n, partitions, baseTimestamp, timeoutMs: 120_000 });
    assert.equal(n, partitionRecordCount(count, partitions, 0));
  } finally {
    await broker.close();
  }
});

/** ListOffsets by time for partition 0, error code included (support.listOffsets fails on errors). */
async function listOffsetsRaw(bootstrap: string, topic: string, timestamp: bigint): Promise<{ errorCode: number; offset: bigint }> {
  const admin = await AdminClient.connect(bootstrap, { clientId: 'tiering-e2e' });
  try {
    const [a] = await admin.listOffsets([{ topic, partition: 0, timestamp }]);
    assert.ok(a !== undefined);
    return { errorCode: a.errorCode, offset: a.offset };
  } finally {
    admin.close();
  }
}
