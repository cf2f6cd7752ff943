import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendErrorCode,
  javaStringHashCode,
  MemoryOffsetsTopicLog,
  OffsetsTopicWriter,
  partitionForGroup,
  type OffsetsTopicLog,
  type OffsetsTopicRecord,
} from '../../../broker/group/offsets-topic.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { GatedLog } from './harness.js';

test("javaStringHashCode matches Java's String.hashCode", () => {
  // Values printed by Java 17's String.hashCode().
  const cases: [string, number][] = [
    ['', 0],
    ['a', 97],
    ['abc', 96354],
    ['console-consumer-12345', 158455506],
    ['polygenelubricants', -2147483648],
    ['\u00e9t\u00e9', 227742],
    ['\u{1F600}', 1772899],
  ];
  for (const [s, h] of cases) assert.equal(javaStringHashCode(s), h, JSON.stringify(s));
});

test('partitionForGroup is abs(hashCode) % n, with Integer.MIN_VALUE mapped to 0', () => {
  assert.equal(partitionForGroup('abc', 50), 96354 % 50);
  assert.equal(partitionForGroup('console-consumer-12345', 50), 158455506 % 50);
  assert.equal(partitionForGroup('polygenelubricants', 50), 0);
  for (let i = 0; i < 200; i++) {
    const p = partitionForGroup(`group-${i}`, 7);
    assert.ok(p >= 0 && p < 7);
  }
});

const rec = (k: string): OffsetsTopicRecord[] => [{ key: Buffer.from(k), value: Buffer.from(`v-${k}`) }];
const keys = (log: GatedLog, p: number): string[] => log.inner.records(p).map((r) => r.key.toString());

test('OffsetsTopicWriter keeps appends to a partition in call order whatever the log latency', async () => {
  let calls = 0;
  const inner = new MemoryOffsetsTopicLog();
  const log: OffsetsTopicLog = {
    async append(p, records) {
      const n = calls++;
      // Later calls finish faster: appends that overlapped would land out of order.
      await new Promise((r) => setTimeout(r, Math.max(0, 12 - n * 4)));
      await inner.append(p, records);
    },
    readAll: (p) => inner.readAll(p),
  };
  const writer = new OffsetsTopicWriter(log);
  const all: Promise<void>[] = [];
  for (let i = 0; i < 20; i++) {
    all.push(writer.append(0, rec(`k${i}`)));
    // Spread the writes over several appends.
    if (i % 3 === 0) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(all);
  assert.deepEqual(inner.records(0).map((r) => r.key.toString()), Array.from({ length: 20 }, (_, i) => `k${i}`));
  assert.ok(calls > 1 && calls < 20, `${calls} appends`);
});

test('writes issued while an append is in flight go out together as one append, in call order', async () => {
  const log = new GatedLog();
  const writer = new OffsetsTopicWriter(log);
  const settled: string[] = [];
  const write = (k: string, p = 0): Promise<void> => writer.append(p, rec(k)).then(() => void settled.push(k));
  const first = write('a');
  await log.started(1);
  const rest = ['b', 'c', 'd', 'e'].map((k) => write(k));
  const other = write('x', 1);
  await log.started(2);
  assert.deepEqual(log.appends, [['a'], ['x']], 'another partition does not wait');
  log.release();
  await first;
  await log.started(3);
  assert.deepEqual(log.appends[2], ['b', 'c', 'd', 'e']);
  log.release(); // x
  await other;
  log.release();
  await Promise.all(rest);
  assert.deepEqual(settled, ['a', 'x', 'b', 'c', 'd', 'e']);
  assert.deepEqual(keys(log, 0), ['a', 'b', 'c', 'd', 'e']);
  await writer.barrier(0);
});

test('writes issued in the same tick share the first append', async () => {
  const log = new GatedLog();
  const writer = new OffsetsTopicWriter(log);
  const all = Array.from({ length: 64 }, (_, i) => writer.append(2, rec(`k${i}`)));
  await log.started(1);
  log.release();
  await Promise.all(all);
  assert.equal(log.appends.length, 1);
  assert.equal(keys(log, 2).length, 64);
});

test('a failed append fails exactly the writes it carried; later writes still go through', async () => {
  const log = new GatedLog();
  const writer = new OffsetsTopicWriter(log);
  const a = writer.append(0, rec('a'));
  await log.started(1);
  const b = writer.append(0, rec('b'));
  const c = writer.append(0, rec('c'));
  log.release();
  await a;
  await log.started(2);
  const d = writer.append(0, rec('d'));
  const err = new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, 'moved');
  log.release(err);
  for (const p of [b, c]) {
    await assert.rejects(p, (e: unknown) => {
      assert.equal(e, err);
      assert.equal(appendErrorCode(e), ErrorCode.NOT_COORDINATOR);
      return true;
    });
  }
  await log.started(3);
  assert.deepEqual(log.appends[2], ['d']);
  log.release();
  await d;
  const barrier = writer.barrier(0);
  await barrier;
  assert.deepEqual(keys(log, 0), ['a', 'd']);
});

test('a transactional write goes out alone and keeps its place; limits split a run', async () => {
  const log = new GatedLog();
  const writer = new OffsetsTopicWriter(log, { maxRecordsPerAppend: 3 });
  const producer = { producerId: 7n, producerEpoch: 1 };
  const all = [writer.append(0, rec('a'))];
  await log.started(1);
  all.push(writer.append(0, rec('b')), writer.appendTransactional(0, rec('t1'), producer), writer.appendTransactional(0, rec('t2'), producer));
  for (const k of ['c', 'd', 'e', 'f']) all.push(writer.append(0, rec(k)));
  for (let i = 1; i <= 6; i++) {
    log.release();
    if (i < 6) await log.started(i + 1);
  }
  await Promise.all(all);
  assert.deepEqual(log.appends, [['a'], ['b'], ['txn:t1'], ['txn:t2'], ['c', 'd', 'e'], ['f']]);
  assert.deepEqual(keys(log, 0), ['a', 'b', 't1', 't2', 'c', 'd', 'e', 'f']);
  assert.deepEqual(log.inner.records(0).filter((r) => r.producerId === 7n).map((r) => r.key.toString()), ['t1', 't2']);
});

test('a single write larger than the byte limit still goes out (alone)', async () => {
  const log = new GatedLog();
  const writer = new OffsetsTopicWriter(log, { maxBytesPerAppend: 10 });
  const all = [writer.append(0, rec('a'))];
  await log.started(1);
  all.push(writer.append(0, [{ key: Buffer.from('big'), value: Buffer.alloc(100) }]), writer.append(0, rec('b')));
  for (let i = 1; i <= 3; i++) {
    log.release();
    if (i < 3) await log.started(i + 1);
  }
  await Promise.all(all);
  assert.deepEqual(log.appends, [['a'], ['big'], ['b']]);
});

test('barrier waits for every write issued so far, queued ones included', async () => {
  const log = new GatedLog();
  const writer = new OffsetsTopicWriter(log);
  const a = writer.append(0, rec('a'));
  await log.started(1);
  const b = writer.append(0, rec('b')).catch(() => undefined);
  let passed = false;
  const barrier = writer.barrier(0).then(() => (passed = true));
  log.release();
  await a;
  await log.started(2);
  assert.equal(passed, false);
  log.release(new Error('boom'));
  await b;
  await barrier;
  assert.equal(passed, true);
});

test('append errors map to the coordinator errors Kafka returns', () => {
  const code = (c: number) => appendErrorCode(new KafkaError(c, 'x'));
  assert.equal(code(ErrorCode.NOT_LEADER_OR_FOLLOWER), ErrorCode.NOT_COORDINATOR);
  assert.equal(code(ErrorCode.KAFKA_STORAGE_ERROR), ErrorCode.NOT_COORDINATOR);
  assert.equal(code(ErrorCode.REQUEST_TIMED_OUT), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(code(ErrorCode.NOT_ENOUGH_REPLICAS), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(code(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(code(ErrorCode.MESSAGE_TOO_LARGE), ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal(appendErrorCode(new Error('plain')), ErrorCode.UNKNOWN_SERVER_ERROR);
});

test('with a committed wait, an append settles only once its partition is replicated, and fails as the wait fails', async () => {
  const log = new MemoryOffsetsTopicLog();
  const waits: { partition: number; release: () => void; fail: (err: unknown) => void }[] = [];
  let notify: (() => void) | null = null;
  const writer = new OffsetsTopicWriter(log, {}, (partition) =>
    new Promise<void>((release, fail) => {
      waits.push({ partition, release, fail });
      notify?.();
    }),
  );
  const waited = async (n: number): Promise<void> => {
    while (waits.length < n) await new Promise<void>((r) => (notify = r));
  };
  let settled = false;
  const a = writer.append(3, rec('a')).then(() => (settled = true));
  await waited(1);
  // In the log, not yet answered.
  assert.deepEqual(log.records(3).map((r) => r.key.toString()), ['a']);
  assert.equal(waits[0]!.partition, 3);
  assert.equal(settled, false);
  // The next write queues behind the unreplicated one.
  const b = writer.appendTransactional(3, rec('b'), { producerId: 7n, producerEpoch: 0 });
  waits[0]!.release();
  await a;
  await waited(2);
  waits[1]!.fail(new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 'isr shrank'));
  await assert.rejects(b, (err: unknown) => appendErrorCode(err) === ErrorCode.COORDINATOR_NOT_AVAILABLE);
});
