import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendErrorCode,
  javaStringHashCode,
  MemoryOffsetsTopicLog,
  OffsetsTopicWriter,
  partitionForGroup,
  type OffsetsTopicRecord,
} from '../../../broker/group/offsets-topic.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';

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

test('OffsetsTopicWriter keeps appends to a partition in call order whatever the log latency', async () => {
  const order: string[] = [];
  let calls = 0;
  const log = {
    async append(_p: number, records: readonly OffsetsTopicRecord[]) {
      const n = calls++;
      // Later calls finish faster: without the writer they would land out of order.
      await new Promise((r) => setTimeout(r, 10 - n * 3));
      order.push(records[0]?.key.toString() ?? '');
    },
    readAll: new MemoryOffsetsTopicLog().readAll,
  };
  const writer = new OffsetsTopicWriter(log);
  const rec = (k: string): OffsetsTopicRecord[] => [{ key: Buffer.from(k), value: null }];
  await Promise.all([writer.append(0, rec('a')), writer.append(0, rec('b')), writer.append(0, rec('c'))]);
  assert.deepEqual(order, ['a', 'b', 'c']);
});

test('a failed append does not block later ones; barrier waits for everything issued', async () => {
  let fail = true;
  const inner = new MemoryOffsetsTopicLog();
  const writer = new OffsetsTopicWriter({
    async append(p, records) {
      if (fail) {
        fail = false;
        throw new Error('boom');
      }
      await inner.append(p, records);
    },
    readAll: (p) => inner.readAll(p),
  });
  const first = writer.append(1, [{ key: Buffer.from('x'), value: null }]);
  const second = writer.append(1, [{ key: Buffer.from('y'), value: Buffer.from('v') }]);
  await assert.rejects(first, /boom/);
  await writer.barrier(1);
  await second;
  assert.deepEqual(inner.records(1).map((r) => r.key.toString()), ['y']);
});

test('append errors map to the coordinator errors Kafka returns', () => {
  const code = (c: number) => appendErrorCode(new KafkaError(c, 'x'));
  assert.equal(code(ErrorCode.NOT_LEADER_OR_FOLLOWER), ErrorCode.NOT_COORDINATOR);
  assert.equal(code(ErrorCode.KAFKA_STORAGE_ERROR), ErrorCode.NOT_COORDINATOR);
  assert.equal(code(ErrorCode.REQUEST_TIMED_OUT), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(code(ErrorCode.MESSAGE_TOO_LARGE), ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal(appendErrorCode(new Error('plain')), ErrorCode.UNKNOWN_SERVER_ERROR);
});
