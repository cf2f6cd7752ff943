// `__consumer_offsets` stays bounded: 100k OffsetCommit requests (six
// partitions each) for one group fill the group's offsets-topic partition with
// 1 MiB segments; the log cleaner compacts them, so the partition's bytes on
// disk stay far below what the commits wrote, while sampled during the run and
// after cleaning. Compaction keeps the latest value of every key: after a
// restart (the coordinator reloads from the cleaned log, gaps and all) the
// group's committed offsets are the last ones.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { partitionForGroup } from '../../broker/group/offsets-topic.js';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { committedOffsets, eventually, partitionLogBytes, partitionSegmentCount, range, Report, withAdmin } from './support.js';

const commits = Number(process.env['SEDIMENT_E2E_OFFSET_COMMITS'] ?? 100_000);
const offsetsPartitions = 5;
const segmentBytes = 1024 * 1024;
const topic = 'bounded-offsets';
const partitions = 6;
const group = 'g-bounded';
let broker: SedimentProcess;
const report = new Report();

before(async () => {
  broker = await startSediment({
    overrides: {
      'offsets.topic.num.partitions': String(offsetsPartitions),
      'offsets.topic.segment.bytes': String(segmentBytes),
      'log.cleaner.backoff.ms': '200',
    },
  });
  await createTopic(broker.bootstrap, topic, partitions);
});

after(async () => {
  await broker?.close();
  report.print('__consumer_offsets under 100k commits:');
});

test(`__consumer_offsets stays bounded under ${commits} commits (the cleaner compacts it)`, { timeout: 900_000 }, async () => {
  const t0 = Date.now();
  const offsetsPartition = partitionForGroup(group, offsetsPartitions);
  const bytes = (): number => partitionLogBytes(broker.dataDir, '__consumer_offsets', offsetsPartition);
  let maxBytes = 0;
  let written = 0;
  await withAdmin(broker.bootstrap, async (admin) => {
    // Every commit is its own request (and batch in the log); 64 in flight on the coordinator connection.
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < commits; i = next++) {
        const errors = await admin.offsetCommit(group, range(partitions).map((partition) => ({ topic, partition, offset: BigInt(i) })));
        if (!errors.every((e) => e.errorCode === ErrorCode.NONE)) throw new Error(`commit ${i}: ${JSON.stringify(errors)}`);
        written++;
        if (i % 2000 === 0) maxBytes = Math.max(maxBytes, bytes());
      }
    };
    await Promise.all(range(64).map(worker));
  });
  const commitMs = Date.now() - t0;
  assert.equal(written, commits);
  // The uncompacted size, from below: every commit is a batch (61-byte header)
  // of six records whose key alone (version, group, topic, partition) is over 30 bytes.
  const uncompactedAtLeast = commits * (61 + partitions * (30 + group.length + topic.length));
  const bound = Math.floor(uncompactedAtLeast / 10);
  let now = bytes();
  await eventually(
    `the cleaner to bring __consumer_offsets-${offsetsPartition} under ${bound} bytes`,
    () => (now = bytes()) < bound,
    300_000,
    () => `${now} bytes in ${partitionSegmentCount(broker.dataDir, '__consumer_offsets', offsetsPartition)} segments`,
  );
  const cleaned = bytes();
  report.add(`${commits} commits x ${partitions} partitions in ${commitMs} ms (${Math.round(commits / (commitMs / 1000))}/s)`);
  report.add(`__consumer_offsets-${offsetsPartition}: at least ${uncompactedAtLeast} bytes written; largest sampled during the commits ${maxBytes}; after cleaning ${cleaned} bytes in ${partitionSegmentCount(broker.dataDir, '__consumer_offsets', offsetsPartition)} segments (${Date.now() - t0} ms in all)`);
  assert.ok(maxBytes < uncompactedAtLeast / 2, `the partition grew to ${maxBytes} bytes while committing (no cleaning during the run?)`);
  const cleanerLines = broker.logs.lines.filter((l) => l['component'] === 'log-cleaner' && l['topic'] === '__consumer_offsets');
  assert.ok(cleanerLines.length > 0, 'the cleaner logged no round on __consumer_offsets');

  const expected = range(partitions).map(() => BigInt(commits - 1));
  // Commits run concurrently: the last one written for each partition is the highest (each request commits i everywhere).
  const committed = await withAdmin(broker.bootstrap, (a) => committedOffsets(a, group, topic, partitions));
  assert.ok(committed.every((o) => o >= BigInt(commits - 64)), `committed ${committed.join(',')}`);
  await withAdmin(broker.bootstrap, async (a) => {
    const errors = await a.offsetCommit(group, range(partitions).map((partition) => ({ topic, partition, offset: BigInt(commits - 1) })));
    assert.ok(errors.every((e) => e.errorCode === ErrorCode.NONE));
  });
  await broker.restart();
  assert.deepEqual(await withAdmin(broker.bootstrap, (a) => committedOffsets(a, group, topic, partitions)), expected, 'the latest commit after a restart on the cleaned log');
  for (const logs of [...broker.previousLogs, broker.logs]) assertNoBrokerErrors(logs);
});
