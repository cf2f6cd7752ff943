// A user topic with cleanup.policy=compact (remote.storage.enable=false: a
// compacted topic is never tiered) and small segments: keyed updates over many
// rounds, tombstones for some keys, a few deleted keys written again. While the
// cleaner works, every read from offset 0 (kcat) rebuilds exactly the latest
// value of every live key and no deleted key; once it is done, the log holds
// one record per live key and no tombstone (delete.retention.ms=0), offsets
// keep their numbers (gaps, strictly increasing), and a fetch at a removed
// offset starts at the next retained one; a restart reads back the same log.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { kcatPath, requireTools } from '../support/tools.js';
import { runProcess } from '../clients/common.js';
import { eventually, listOffsets, partitionLogBytes, partitionSegmentCount, range, Report, withAdmin } from './support.js';
import { OffsetSpec } from '../../broker/cli/admin-client.js';

const topic = 'compacted-users';
const partitions = 3;
const keys = 2000;
const rounds = 30;
let broker: SedimentProcess;
const report = new Report();

before(async () => {
  requireTools(['kcat', 'kafkajs']);
  broker = await startSediment({ overrides: { 'log.cleaner.backoff.ms': '200' } });
});

after(async () => {
  await broker?.close();
  report.print('compacted user topic:');
});

interface ReadRecord {
  readonly partition: number;
  readonly offset: bigint;
  readonly key: string;
  readonly value: string | null;
}

/** Everything from offset 0 (or `from`) to the end, with kcat; by partition, then offset. */
async function readAll(from: string = 'beginning', extra: readonly string[] = []): Promise<ReadRecord[]> {
  const r = await runProcess(kcatPath, ['-C', '-b', broker.bootstrap, '-t', topic, '-o', from, '-e', '-J', '-q', ...extra], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const e = JSON.parse(l) as { partition: number; offset: number; key: string | null; payload: string | null };
      return { partition: e.partition, offset: BigInt(e.offset), key: e.key ?? '', value: e.payload };
    })
    .sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
}

/** The state a consumer from offset 0 builds: latest value per key, a tombstone deletes. */
function rebuild(records: readonly ReadRecord[]): Map<string, string> {
  const state = new Map<string, string>();
  for (const r of records) {
    if (r.value === null) state.delete(r.key);
    else state.set(r.key, r.value);
  }
  return state;
}

const sorted = (m: ReadonlyMap<string, string>): Array<[string, string]> => [...m].sort(([a], [b]) => a.localeCompare(b));

test('compacted topic: latest value per live key, no resurrected deletes, offsets kept with gaps', { timeout: 900_000 }, async () => {
  const t0 = Date.now();
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'compaction-test', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{
      topic,
      numPartitions: partitions,
      replicationFactor: 1,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'remote.storage.enable', value: 'false' },
        { name: 'internal.segment.bytes', value: '16384' },
        { name: 'segment.ms', value: '1000' },
        { name: 'min.cleanable.dirty.ratio', value: '0.01' },
        { name: 'delete.retention.ms', value: '0' },
        { name: 'min.compaction.lag.ms', value: '0' },
      ],
    }],
  });
  await admin.disconnect();

  // Round r writes every key, except keys k%5==0 after round 5 (their latest values
  // stay early in the log, so the cleaned log has gaps inside it); keys k%7==0 are
  // deleted in round 10, and k%21==0 written again from round 15.
  const expected = new Map<string, string>();
  const deleted = new Set<string>();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  let produced = 0;
  for (let r = 0; r < rounds; r++) {
    const messages: Array<{ key: string; value: string | null }> = [];
    for (let k = 0; k < keys; k++) {
      const key = `user-${k}`;
      if (k % 7 === 0 && r >= 10 && !(k % 21 === 0 && r >= 15)) {
        if (r === 10) messages.push({ key, value: null });
        continue;
      }
      if (k % 5 === 0 && r > 5) continue;
      messages.push({ key, value: `${key}@${r}` });
    }
    for (const m of messages) {
      if (m.value === null) {
        expected.delete(m.key);
        deleted.add(m.key);
      } else {
        expected.set(m.key, m.value);
        deleted.delete(m.key);
      }
    }
    for (let i = 0; i < messages.length; i += 500) await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 500) });
    produced += messages.length;
  }
  await producer.disconnect();
  const liveKeys = expected.size;
  assert.ok(deleted.size > 50);
  const ends = await withAdmin(broker.bootstrap, (a) => listOffsets(a, topic, partitions, OffsetSpec.latest));
  assert.equal(ends.reduce((x, y) => x + y, 0n), BigInt(produced));
  const bytesBefore = range(partitions).reduce((x, p) => x + partitionLogBytes(broker.dataDir, topic, p), 0);

  // Every read while the cleaner works rebuilds the same state; wait until the log is fully compacted.
  let reads = 0;
  let last: ReadRecord[] = [];
  await eventually(
    'the cleaner to leave one record per live key and no tombstone',
    async () => {
      last = await readAll();
      reads++;
      assert.deepEqual(sorted(rebuild(last)), sorted(expected), `read ${reads}: a consumer from offset 0 rebuilt another state`);
      return last.length === liveKeys;
    },
    300_000,
    () => `${last.length} records read (${last.filter((r) => r.value === null).length} tombstones), ${liveKeys} live keys`,
  );
  const cleanedMs = Date.now() - t0;

  for (const key of deleted) assert.ok(!last.some((r) => r.key === key), `deleted key ${key} is still in the log`);
  const byKey = new Map(last.map((r) => [r.key, r]));
  assert.equal(byKey.size, liveKeys, 'one record per live key');
  for (const p of range(partitions)) {
    const offsets = last.filter((r) => r.partition === p).map((r) => r.offset);
    for (let i = 1; i < offsets.length; i++) assert.ok((offsets[i] as bigint) > (offsets[i - 1] as bigint), `partition ${p}: offsets out of order`);
    assert.ok(offsets.length > 0);
    const gaps = offsets.some((o, i) => i > 0 && o !== (offsets[i - 1] as bigint) + 1n) || offsets[0] !== 0n;
    assert.ok(gaps, `partition ${p}: no gap in offsets after compaction`);
    // The last record of each partition keeps its offset, so the log end is unchanged.
    assert.ok((offsets[offsets.length - 1] as bigint) < (ends[p] as bigint));
  }
  assert.deepEqual(await withAdmin(broker.bootstrap, (a) => listOffsets(a, topic, partitions, OffsetSpec.latest)), ends, 'the log end offsets changed');
  assert.deepEqual(await withAdmin(broker.bootstrap, (a) => listOffsets(a, topic, partitions, OffsetSpec.earliest)), range(partitions).map(() => 0n), 'compaction moved the log start');

  // A fetch at a removed offset starts at the next retained one.
  const p0 = last.filter((r) => r.partition === 0).map((r) => r.offset);
  const gapAt = p0.findIndex((o, i) => i > 0 && o > (p0[i - 1] as bigint) + 1n);
  assert.ok(gapAt > 0, 'partition 0 has a gap between retained records');
  for (const [removed, next] of [[(p0[gapAt - 1] as bigint) + 1n, p0[gapAt]], [0n, p0[0]]] as const) {
    const fromRemoved = await readAll(String(removed), ['-p', '0', '-c', '1']);
    assert.deepEqual(fromRemoved.map((r) => r.offset), [next], `a fetch at offset ${removed} (removed unless it is ${next})`);
  }

  // The cleaned segments load again after a restart: the same records at the same offsets.
  await broker.restart();
  assert.deepEqual(await readAll(), last, 'the compacted log read after a restart');

  const bytesAfter = range(partitions).reduce((x, p) => x + partitionLogBytes(broker.dataDir, topic, p), 0);
  const segments = range(partitions).reduce((x, p) => x + partitionSegmentCount(broker.dataDir, topic, p), 0);
  report.add(`${produced} records (${keys} keys x ${rounds} rounds, ${deleted.size} deleted, some re-created) -> ${last.length} records, ${liveKeys} live keys`);
  report.add(`bytes on disk ${bytesBefore} -> ${bytesAfter} in ${segments} segments; ${reads} reads from offset 0 all rebuilt the same state; compacted ${cleanedMs} ms after the start`);
  assert.ok(bytesAfter < bytesBefore / 5, `only ${bytesBefore} -> ${bytesAfter} bytes`);
  for (const logs of [...broker.previousLogs, broker.logs]) assertNoBrokerErrors(logs);
});
