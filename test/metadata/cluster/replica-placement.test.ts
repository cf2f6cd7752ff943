import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { assignReplicas, orderedForPlacement, startIndexForNewPartitions } from '../../../metadata/cluster/replica-placement.js';

const plain = (n: number) => Array.from({ length: n }, (_, i) => ({ nodeId: i, rack: null }));

describe('replica placement (Kafka AdminUtils)', () => {
  it('rack-unaware with a fixed start: the leaders go round-robin and the followers shift after each lap', () => {
    // Kafka's AdminUtils example: 5 brokers, 10 partitions, RF 3, start index 0, shift 0.
    const a = assignReplicas({ brokers: plain(5), partitions: 10, replicationFactor: 3, fixedStartIndex: 0, seed: 'x' });
    assert.deepEqual(a, [
      [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1],
      [0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2],
    ]);
  });

  it('spreads leaders evenly over live brokers and is reproducible from its seed', () => {
    const brokers = [{ nodeId: 7, rack: null }, { nodeId: 3, rack: null }, { nodeId: 5, rack: null }];
    const a = assignReplicas({ brokers, partitions: 6, replicationFactor: 1, seed: 'orders' });
    const b = assignReplicas({ brokers, partitions: 6, replicationFactor: 1, seed: 'orders' });
    assert.deepEqual(a, b);
    const counts = new Map<number, number>();
    for (const r of a) counts.set(r[0]!, (counts.get(r[0]!) ?? 0) + 1);
    assert.deepEqual([...counts.entries()].sort(), [[3, 2], [5, 2], [7, 2]]);
    // Different seeds start at different brokers (for at least one of a few names).
    const firsts = new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((s) => assignReplicas({ brokers, partitions: 1, replicationFactor: 1, seed: s })[0]![0]));
    assert.ok(firsts.size > 1, `seeds gave one start broker only: ${[...firsts].join(',')}`);
  });

  it('every partition has distinct replicas for every RF up to the broker count', () => {
    for (let rf = 1; rf <= 4; rf++) {
      for (const r of assignReplicas({ brokers: plain(4), partitions: 13, replicationFactor: rf, seed: `rf${rf}` })) {
        assert.equal(r.length, rf);
        assert.equal(new Set(r).size, rf);
      }
    }
  });

  it('rack-aware: replicas of a partition go to distinct racks, and the broker list alternates racks', () => {
    const brokers = [
      { nodeId: 0, rack: 'a' }, { nodeId: 1, rack: 'a' }, { nodeId: 2, rack: 'b' },
      { nodeId: 3, rack: 'b' }, { nodeId: 4, rack: 'c' }, { nodeId: 5, rack: 'c' },
    ];
    assert.deepEqual(orderedForPlacement(brokers), [0, 2, 4, 1, 3, 5]);
    const rackOf = new Map(brokers.map((b) => [b.nodeId, b.rack]));
    const a = assignReplicas({ brokers, partitions: 12, replicationFactor: 3, seed: 'racks' });
    for (const r of a) assert.equal(new Set(r.map((b) => rackOf.get(b))).size, 3, `replicas ${r} share a rack`);
    const leaders = new Map<number, number>();
    for (const r of a) leaders.set(r[0]!, (leaders.get(r[0]!) ?? 0) + 1);
    assert.deepEqual([...leaders.values()], [2, 2, 2, 2, 2, 2]);
  });

  it('a mix of racked and unracked brokers is placed rack-unaware', () => {
    const a = assignReplicas({ brokers: [{ nodeId: 0, rack: 'a' }, { nodeId: 1, rack: null }], partitions: 2, replicationFactor: 2, fixedStartIndex: 0, seed: 'x' });
    assert.deepEqual(a, [[0, 1], [1, 0]]);
  });

  it('new partitions continue from the partition id and the first replica of partition 0', () => {
    const brokers = plain(3);
    const start = startIndexForNewPartitions(brokers, [1]);
    assert.equal(start, 1);
    const added = assignReplicas({ brokers, partitions: 2, replicationFactor: 1, startPartitionId: 3, fixedStartIndex: start, seed: 'x' });
    // Partitions 0..2 started at broker 1 ([1],[2],[0]); 3 and 4 continue the rotation.
    assert.deepEqual(added, [[1], [2]]);
  });

  it('refuses a replication factor above the broker count, and no partitions, with Kafka errors', () => {
    assert.throws(
      () => assignReplicas({ brokers: plain(2), partitions: 1, replicationFactor: 3, seed: 'x' }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR && /larger than available brokers: 2/.test(e.message),
    );
    assert.throws(() => assignReplicas({ brokers: plain(2), partitions: 0, replicationFactor: 1, seed: 'x' }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_PARTITIONS);
    assert.throws(() => assignReplicas({ brokers: [], partitions: 1, replicationFactor: 1, seed: 'x' }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR);
  });
});
