// The pure half of --reset-offsets: datetime and topic parsing, the clamping plan, assignment decoding.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeConsumerProtocolAssignment } from '../../../broker/protocol/messages/records/consumer-protocol-assignment.js';
import { Writer } from '../../../broker/protocol/writer.js';
import {
  decodeAssignment,
  parseDateTime,
  parseTopicSelection,
  planReset,
  type PartitionPosition,
} from '../../../broker/cli/reset-offsets.js';

test('parseDateTime: Z, offsets with and without colon, optional millis, local time without zone', () => {
  assert.equal(parseDateTime('2024-03-01T10:20:30.456Z'), Date.UTC(2024, 2, 1, 10, 20, 30, 456));
  assert.equal(parseDateTime('2024-03-01T10:20:30Z'), Date.UTC(2024, 2, 1, 10, 20, 30));
  assert.equal(parseDateTime('2024-03-01T10:20:30.5Z'), Date.UTC(2024, 2, 1, 10, 20, 30, 500));
  assert.equal(parseDateTime('2024-03-01T12:20:30.000+02:00'), Date.UTC(2024, 2, 1, 10, 20, 30));
  assert.equal(parseDateTime('2024-03-01T05:50:30.000-0430'), Date.UTC(2024, 2, 1, 10, 20, 30));
  assert.equal(parseDateTime('2024-03-01T10:20:30.000'), new Date(2024, 2, 1, 10, 20, 30).getTime());
  for (const bad of ['2024-02-31T00:00:00Z', '2024-03-01 10:20:30', '2024-03-01T25:00:00Z', '2024-03-01T10:61:00Z', 'now']) {
    assert.throws(() => parseDateTime(bad), /--to-datetime/, bad);
  }
});

test('parseTopicSelection: whole topic, listed partitions (deduplicated, sorted), bad input', () => {
  assert.deepEqual(parseTopicSelection('orders'), { topic: 'orders', partitions: null });
  assert.deepEqual(parseTopicSelection('orders:3,1,3'), { topic: 'orders', partitions: [1, 3] });
  assert.throws(() => parseTopicSelection(':1'), /no topic name/);
  assert.throws(() => parseTopicSelection('t:'), /integer/);
  assert.throws(() => parseTopicSelection('t:-1'), /between 0/);
});

const pos = (partition: number, earliest: bigint, latest: bigint, current: bigint | null, atTimestamp?: bigint): PartitionPosition => ({
  topic: 't', partition, earliest, latest, current, ...(atTimestamp === undefined ? {} : { atTimestamp }),
});

test('planReset: earliest and latest take the log bounds', () => {
  const ps = [pos(0, 5n, 20n, 10n), pos(1, 0n, 3n, null)];
  assert.deepEqual(planReset({ kind: 'earliest' }, ps).offsets.map((o) => o.offset), [5n, 0n]);
  assert.deepEqual(planReset({ kind: 'latest' }, ps).offsets.map((o) => o.offset), [20n, 3n]);
});

test('planReset: to-offset and shift-by clamp into the log with a warning', () => {
  const ps = [pos(0, 5n, 20n, 10n)];
  assert.deepEqual(planReset({ kind: 'offset', offset: 12n }, ps), { offsets: [{ topic: 't', partition: 0, offset: 12n }], warnings: [], errors: [] });
  const hi = planReset({ kind: 'offset', offset: 100n }, ps);
  assert.equal(hi.offsets[0]?.offset, 20n);
  assert.match(hi.warnings[0] ?? '', /higher than latest offset for t-0. Value will be set to 20/);
  const lo = planReset({ kind: 'shift', by: -8n }, ps);
  assert.equal(lo.offsets[0]?.offset, 5n);
  assert.match(lo.warnings[0] ?? '', /lower than earliest offset for t-0. Value will be set to 5/);
  assert.equal(planReset({ kind: 'shift', by: 3n }, ps).offsets[0]?.offset, 13n);
});

test('planReset: shift-by needs a committed offset', () => {
  const p = planReset({ kind: 'shift', by: 1n }, [pos(0, 0n, 5n, null), pos(1, 0n, 5n, 2n)]);
  assert.deepEqual(p.offsets, [{ topic: 't', partition: 1, offset: 3n }]);
  assert.match(p.errors[0] ?? '', /t-0: the group has no committed offset/);
});

test('planReset: datetime uses the timestamp answer, or the log end when there is no later record', () => {
  const p = planReset({ kind: 'datetime', timestamp: 1000n }, [pos(0, 0n, 9n, null, 4n), pos(1, 0n, 9n, 1n, -1n)]);
  assert.deepEqual(p.offsets.map((o) => o.offset), [4n, 9n]);
});

function assignmentBytes(version: number, tps: Array<[string, number[]]>, trailing = Buffer.alloc(0)): Buffer {
  const w = new Writer(64);
  w.writeInt16(version);
  encodeConsumerProtocolAssignment(w, Math.min(version, 3), {
    assignedPartitions: tps.map(([topic, partitions]) => ({ topic, partitions })),
    userData: null,
  });
  return Buffer.concat([w.toBuffer(), trailing]);
}

test('decodeAssignment: v0..v3, newer versions with appended fields, empty and garbage buffers', () => {
  const tps = [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 2 }, { topic: 'b', partition: 1 }];
  for (const v of [0, 1, 3]) assert.deepEqual(decodeAssignment(assignmentBytes(v, [['a', [0, 2]], ['b', [1]]])), tps);
  assert.deepEqual(decodeAssignment(assignmentBytes(7, [['a', [0, 2]], ['b', [1]]], Buffer.from([1, 2, 3]))), tps);
  assert.deepEqual(decodeAssignment(Buffer.alloc(0)), []);
  assert.deepEqual(decodeAssignment(Buffer.from([0, 0, 0x7f, 0xff])), []);
});
