import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeCoordinatorRecord,
  encodeCoordinatorRecord,
  subscribedTopicsOf,
  type CoordinatorRecord,
} from '../../../broker/group/group-records.js';
import { subscription } from './harness.js';

// Bytes written by Apache Kafka 4.1.1's generated record classes
// (MessageUtil.toVersionPrefixedBytes), i.e. what a Kafka broker puts in
// __consumer_offsets for the same data.
const KAFKA = {
  offsetKeyV1: '000100036772700005746f70696300000002',
  offsetValueV3: '000300000000000000630000000700036d39390000018bcfe56800',
  offsetValueV1: '00010000000000000005000000000000000003e80000000000001770',
  offsetValueV4: '00040000000000000005ffffffff027800000000000003e800',
  groupKeyV2: '00020003677270',
  groupValue: [
    '00000008636f6e73756d657200000003000572616e676500036d2d310000000100036d2d310003636964000a2f3132372e302e302e31000027100000000400000000000000020102',
    '00010008636f6e73756d657200000003000572616e676500036d2d310000000100036d2d310003636964000a2f3132372e302e302e3100007530000027100000000400000000000000020102',
    '00020008636f6e73756d657200000003000572616e676500036d2d310000018bcfe568000000000100036d2d310003636964000a2f3132372e302e302e3100007530000027100000000400000000000000020102',
    '00030008636f6e73756d657200000003000572616e676500036d2d310000018bcfe568000000000100036d2d310003692d310003636964000a2f3132372e302e302e3100007530000027100000000400000000000000020102',
    '000409636f6e73756d6572000000030672616e6765046d2d310000018bcfe5680002046d2d3104692d31046369640b2f3132372e302e302e31000075300000271005000000000301020000',
  ],
  emptyGroupValueV3: '0003000000000000ffffffff00000000000004d200000000',
};
const hex = (s: string): Buffer => Buffer.from(s, 'hex');

test('offset commit records are byte-identical to Kafka (key v1, value v3; v1 with an expire timestamp)', () => {
  const record: CoordinatorRecord = {
    type: 'offsetCommit',
    groupId: 'grp',
    topic: 'topic',
    partition: 2,
    value: { committedOffset: 99n, leaderEpoch: 7, metadata: 'm99', commitTimestampMs: 1_700_000_000_000, expireTimestampMs: null },
  };
  const encoded = encodeCoordinatorRecord(record);
  assert.equal(encoded.key.toString('hex'), KAFKA.offsetKeyV1);
  assert.equal(encoded.value?.toString('hex'), KAFKA.offsetValueV3);
  assert.deepEqual(decodeCoordinatorRecord(encoded), record);

  const withExpiry = encodeCoordinatorRecord({
    ...record,
    value: { committedOffset: 5n, leaderEpoch: -1, metadata: '', commitTimestampMs: 1_000, expireTimestampMs: 6_000 },
  });
  assert.equal(withExpiry.value?.toString('hex'), KAFKA.offsetValueV1);

  const tombstone = encodeCoordinatorRecord({ ...record, value: null });
  assert.equal(tombstone.value, null);
  assert.deepEqual(decodeCoordinatorRecord(tombstone), { ...record, value: null });
});

test('offset commit values of every version decode', () => {
  const key = hex(KAFKA.offsetKeyV1);
  const v1 = decodeCoordinatorRecord({ key, value: hex(KAFKA.offsetValueV1) });
  assert.ok(v1.type === 'offsetCommit');
  assert.deepEqual(v1.value, { committedOffset: 5n, leaderEpoch: -1, metadata: '', commitTimestampMs: 1_000, expireTimestampMs: 6_000 });
  const v4 = decodeCoordinatorRecord({ key, value: hex(KAFKA.offsetValueV4) });
  assert.ok(v4.type === 'offsetCommit');
  assert.deepEqual(v4.value, { committedOffset: 5n, leaderEpoch: -1, metadata: 'x', commitTimestampMs: 1_000, expireTimestampMs: null });
});

test('group metadata records are byte-identical to Kafka (key v2, value v3) and every value version decodes', () => {
  const member = {
    memberId: 'm-1',
    groupInstanceId: 'i-1',
    clientId: 'cid',
    clientHost: '/127.0.0.1',
    rebalanceTimeoutMs: 30_000,
    sessionTimeoutMs: 10_000,
    subscription: Buffer.from([0, 0, 0, 0]),
    assignment: Buffer.from([1, 2]),
  };
  const record: CoordinatorRecord = {
    type: 'groupMetadata',
    groupId: 'grp',
    value: {
      protocolType: 'consumer',
      generationId: 3,
      protocolName: 'range',
      leaderId: 'm-1',
      currentStateTimestampMs: 1_700_000_000_000,
      members: [member],
    },
  };
  const encoded = encodeCoordinatorRecord(record);
  assert.equal(encoded.key.toString('hex'), KAFKA.groupKeyV2);
  assert.equal(encoded.value?.toString('hex'), KAFKA.groupValue[3]);

  for (const [version, bytes] of KAFKA.groupValue.entries()) {
    const decoded = decodeCoordinatorRecord({ key: encoded.key, value: hex(bytes) });
    assert.ok(decoded.type === 'groupMetadata' && decoded.value !== null, `v${version}`);
    assert.equal(decoded.value.generationId, 3);
    assert.equal(decoded.value.leaderId, 'm-1');
    assert.equal(decoded.value.currentStateTimestampMs, version >= 2 ? 1_700_000_000_000 : null);
    assert.deepEqual(decoded.value.members, [
      {
        ...member,
        groupInstanceId: version >= 3 ? 'i-1' : null,
        // v0 has no rebalance timeout: the session timeout stands in, as in Kafka.
        rebalanceTimeoutMs: version === 0 ? 10_000 : 30_000,
      },
    ]);
  }

  const empty = encodeCoordinatorRecord({
    type: 'groupMetadata',
    groupId: 'grp',
    value: { protocolType: '', generationId: 0, protocolName: null, leaderId: null, currentStateTimestampMs: 1234, members: [] },
  });
  assert.equal(empty.value?.toString('hex'), KAFKA.emptyGroupValueV3);
  assert.deepEqual(decodeCoordinatorRecord({ key: encoded.key, value: null }), { type: 'groupMetadata', groupId: 'grp', value: null });
});

test('records of other group types are reported as unknown', () => {
  assert.deepEqual(decodeCoordinatorRecord({ key: hex('0003000167'), value: null }), { type: 'unknown', keyVersion: 3 });
});

test('subscribed topics parse from any consumer protocol subscription version', () => {
  assert.deepEqual(subscribedTopicsOf(subscription(['a', 'b'], 'user-data')), ['a', 'b']);
  // Version 3 (owned partitions, generation, rack) shares the v0 prefix.
  const v3 = Buffer.concat([hex('0003'), subscription(['x']).subarray(2), hex('00000000ffffffffffff')]);
  assert.deepEqual(subscribedTopicsOf(v3), ['x']);
  assert.equal(subscribedTopicsOf(Buffer.from([0, 0, 0])), null);
});
