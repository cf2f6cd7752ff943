import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupHash, TopicHashCache, topicHash } from '../../../../broker/group/consumer/metadata-hash.js';
import { metadataHashOf } from '../../../../broker/group/consumer/target.js';
import type { ConsumerTopicsView } from '../../../../broker/group/consumer/types.js';

// Expected values from hash4j 0.22.0 fed exactly as Kafka 4.3.1's Utils.computeTopicHash /
// computeGroupHash feed it (its bytecode: putByte(0), putLong(id msb), putLong(id lsb),
// putString(name), putInt(partitions), then per partition putInt(i) and, per sorted rack,
// putInt(rack.length()) and putString(rack); the group: putLong per topic hash by name).
const ID = 'ASNFZ4mrze_-3LqYdlQyEA'; // msb 0x0123456789abcdef, lsb 0xfedcba9876543210
const RACKED = -6712789376356719235n; // racks [rack-a, rack-b], [], [rack-a, rack-a]
const UNRACKED = -5338980155158852130n;
const GROUP = 1156577828822791756n; // a: RACKED, b: UNRACKED

const racks: readonly (readonly string[])[] = [['rack-b', 'rack-a'], [], ['rack-a', 'rack-a']];

test("topicHash is Kafka's, racks included (sorted, repeats kept)", () => {
  assert.equal(topicHash({ name: 't1', topicId: ID, partitionCount: 3, partitionRacks: (p) => racks[p] ?? [] }), RACKED);
  assert.equal(topicHash({ name: 't1', topicId: ID, partitionCount: 3, partitionRacks: () => [] }), UNRACKED);
  // One replica moved to another rack changes it.
  assert.notEqual(topicHash({ name: 't1', topicId: ID, partitionCount: 3, partitionRacks: (p) => (p === 2 ? ['rack-a', 'rack-c'] : (racks[p] ?? [])) }), RACKED);
});

test("groupHash is Kafka's: topic hashes in name order, 0 without topics", () => {
  assert.equal(groupHash(new Map([['b', UNRACKED], ['a', RACKED]])), GROUP);
  assert.equal(groupHash(new Map()), 0n);
});

test('metadataHashOf hashes the subscribed topics that exist, with their partition racks', () => {
  let currentRacks = racks;
  const view: ConsumerTopicsView = {
    byName: (n) => (n === 'a' ? { topicId: ID, partitionCount: 3 } : undefined),
    byId: () => undefined,
    names: () => ['a'],
    partitionRacks: (_n, p) => currentRacks[p] ?? [],
  };
  const expected = groupHash(new Map([['a', topicHash({ name: 'a', topicId: ID, partitionCount: 3, partitionRacks: (p) => racks[p] ?? [] })]]));
  assert.equal(metadataHashOf(['a', 'missing'], view), expected);
  assert.equal(metadataHashOf(['missing'], view), 0n);
  currentRacks = [['rack-a'], [], ['rack-a', 'rack-a']];
  assert.notEqual(metadataHashOf(['a'], view), expected, 'a rack change is a metadata change');
});

test('TopicHashCache answers the same hash, rehashes on any change, keeps at most maxEntries', () => {
  const cache = new TopicHashCache(2);
  const topic = (name: string, partitionRacks: (p: number) => readonly string[]) => ({ name, topicId: ID, partitionCount: 3, partitionRacks });
  assert.equal(cache.hash(topic('t1', (p) => racks[p] ?? [])), RACKED);
  assert.equal(cache.hash(topic('t1', (p) => racks[p] ?? [])), RACKED);
  assert.equal(cache.size, 1);
  assert.equal(cache.hash(topic('t1', () => [])), UNRACKED, 'racks are part of the key');
  assert.equal(cache.size, 2);
  cache.hash(topic('t2', () => []));
  assert.equal(cache.size, 2, 'the least recently used entry left');
  assert.equal(cache.hash(topic('t1', () => [])), UNRACKED);
});
