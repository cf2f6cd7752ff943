// The broker killed (SIGKILL) in the middle of an upload, on a real MinIO.
//
// Records are produced while the copy task is idle (a one-hour task interval),
// the broker is restarted with a one-second interval, and as soon as the first
// objects of a copy appear in the bucket MinIO is frozen (so the upload cannot
// finish), the broker is killed with SIGKILL and MinIO thawed: the bucket then
// holds an incomplete segment (no manifest) whose COPY_SEGMENT_STARTED record
// has no end. After a restart the broker must delete that attempt through the
// metadata (DELETE_SEGMENT_STARTED/FINISHED), copy every segment exactly once
// to COPY_SEGMENT_FINISHED, and leave no object of the dead attempt behind;
// every record then reads back byte-identical from offset 0.
//
// Orphan grace: the sweeper's grace period (RemoteLogManagerConfig.orphanGraceMs,
// default 10 minutes) has no broker key yet, so this test relies on the
// metadata path (a STARTED record with no copy running is cleaned up at once),
// which is the path a crash takes since STARTED is written before any upload.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runPythonRoundTrip } from '../clients/run-client.js';
import { defaultBaseTimestamp } from '../clients/content.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import { startSediment, tempDataDir, type LogLine, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import {
  brokerState,
  createTopic,
  groupSegments,
  readRemoteLogMetadata,
  segmentHistories,
  segmentObjects,
  tieredOverrides,
  tieredTopicConfigs,
  uniquePrefix,
  waitFor,
  waitFullyTiered,
} from './support.js';

const count = Number(process.env['SEDIMENT_TIERING_CRASH_COUNT'] ?? 400_000);
const partitions = 1;
// Large enough that uploading one takes a while: multipart, one 5 MiB part at a time.
const segmentBytes = 16 * 1_048_576;
const topic = 'crash';

let minio: MinioServer;
const report: string[] = [];

before(async () => {
  requireTools(['python-confluent-kafka']);
  minio = await startMinio();
});
after(async () => {
  await minio?.stop();
  console.log(`\nbroker killed mid-upload:\n  ${report.join('\n  ')}`);
});

/** Multipart uploads in progress for `key` (MinIO lists them for an exact object key only). */
async function incompleteUploads(key: string): Promise<string[]> {
  const out: string[] = [];
  const stream = minio.client().listIncompleteUploads(minio.bucket, key, true);
  for await (const u of stream as AsyncIterable<{ key?: string; uploadId?: string }>) if (u.key === key) out.push(u.uploadId ?? '?');
  return out;
}

test('SIGKILL during an upload: after restart the dead attempt is cleaned up, each segment copied exactly once, nothing lost', { timeout: 10 * 60_000 }, async () => {
  const prefix = uniquePrefix('crash');
  const dataDir = tempDataDir('sediment-tiering-crash-');
  const upload = { 'rsm.config.s3.multipart.threshold.bytes': String(5 * 1_048_576), 'rsm.config.s3.part.size.bytes': String(5 * 1_048_576), 'rsm.config.s3.upload.concurrency': '1' };
  const start = (port: number, interval: string): Promise<SedimentProcess> =>
    startSediment({ dataDir, port, overrides: tieredOverrides(minio, prefix, { ...upload, 'remote.log.manager.task.interval.ms': interval }) });
  const baseTimestamp = defaultBaseTimestamp();
  let broker: SedimentProcess | undefined;
  const runs: LogLine[][] = [];
  try {
    // 1. Records on disk, nothing copied yet.
    broker = await start(0, '3600000');
    const port = broker.port;
    await createTopic(broker.bootstrap, topic, partitions, tieredTopicConfigs(segmentBytes));
    const produced = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'produce', createTopic: false, baseTimestamp });
    assert.equal(produced.ok, true, produced.errors.join('\n'));
    await broker.stop();
    runs.push([...broker.logs.lines]);
    assert.equal((await segmentObjects(minio, prefix)).length, 0, 'nothing copied before the kill run');

    // 2. Copying starts; SIGKILL while the first segment's objects are going up.
    broker = await start(port, '1000');
    const copyStarted = await broker.logs.next((l) => l.msg === 'remote segment copy started');
    const deadId = String(copyStarted['segmentId']);
    // Wait for the data object's multipart upload to be under way (its small index objects are already up then).
    const dataKey = await waitFor(
      'the copy\'s data upload under way',
      async () => {
        const first = (await segmentObjects(minio, prefix)).find((o) => o.segmentId === deadId);
        if (first === undefined) return undefined;
        const key = first.key.slice(0, first.key.lastIndexOf('.')) + '.log';
        return (await incompleteUploads(key)).length > 0 ? key : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 5 },
    );
    await minio.pause();
    await broker.kill();
    runs.push([...broker.logs.lines]);
    await minio.resume();
    const afterKill = groupSegments(await segmentObjects(minio, prefix), topic);
    const dead = afterKill.find((s) => s.segmentId === deadId);
    assert.ok(dead !== undefined, 'the killed attempt left objects');
    assert.equal(dead.complete, false, `killed mid-upload: no manifest yet (objects: ${[...dead.kinds].join(', ')})`);
    const pendingUploads = await incompleteUploads(dataKey);
    report.push(`at the kill: segment ${dead.baseOffset} (${deadId}) had ${[...dead.kinds].join(', ')}; ${pendingUploads.length} multipart upload(s) in progress`);

    // 3. Restart: the dead attempt is cleaned up, copying completes.
    broker = await start(port, '1000');
    const t = performance.now();
    await waitFullyTiered(broker, topic, partitions, 3 * 60_000);
    report.push(`after restart: fully tiered in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const segments = groupSegments(await segmentObjects(minio, prefix), topic);
    assert.ok(segments.length >= 2, `several segments copied (${segments.length})`);
    assert.equal(segments.find((s) => s.segmentId === deadId), undefined, 'no object of the killed attempt remains');
    assert.ok(segments.every((s) => s.complete), 'every segment in the bucket is complete');
    assert.equal(new Set(segments.map((s) => s.baseOffset)).size, segments.length, 'one copy per segment in the bucket');

    // The metadata tells the same story.
    const histories = segmentHistories(await readRemoteLogMetadata(broker.bootstrap), topic);
    assert.deepEqual(histories.get(deadId)?.states, ['COPY_SEGMENT_STARTED', 'DELETE_SEGMENT_STARTED', 'DELETE_SEGMENT_FINISHED'], 'the killed attempt is recorded as deleted');
    const finishedByStart = new Map<bigint, number>();
    for (const [id, h] of histories) {
      if (h.states.includes('COPY_SEGMENT_FINISHED')) finishedByStart.set(h.startOffset, (finishedByStart.get(h.startOffset) ?? 0) + 1);
      else assert.equal(h.states.at(-1), 'DELETE_SEGMENT_FINISHED', `unfinished attempt ${id} at ${h.startOffset} is deleted: ${h.states.join(' -> ')}`);
    }
    for (const s of segments) assert.equal(finishedByStart.get(s.baseOffset), 1, `segment ${s.baseOffset}: exactly one COPY_SEGMENT_FINISHED`);
    assert.equal(finishedByStart.size, segments.length, 'every finished segment is in the bucket');
    runs.push([...broker.logs.lines]);
    const finishedLines = runs.flat().filter((l) => l.msg === 'remote segment copy finished');
    assert.equal(finishedLines.length, segments.length, 'each segment copied once over all runs');
    report.push(`metadata: ${histories.size} segment ids for ${segments.length} segments; the killed one STARTED -> DELETE_SEGMENT_STARTED -> DELETE_SEGMENT_FINISHED`);

    const leftUploads = await incompleteUploads(dataKey);
    report.push(`multipart uploads of the killed attempt left after recovery: ${leftUploads.length}`);

    const consumed = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'consume', createTopic: false, baseTimestamp, timeoutMs: 5 * 60_000 });
    assert.equal(consumed.ok, true, `${consumed.errors.join('\n')}\n${brokerState(broker)}`);
    assert.equal(consumed.consumed, count);
    assert.deepEqual(leftUploads, [], 'no multipart upload of the killed attempt lingers (invisible parts still cost storage)');
  } finally {
    await minio.resume();
    await broker?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
