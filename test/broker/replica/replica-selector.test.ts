// KIP-392's preferred read replica as Kafka's leader chooses it (RackAwareReplicaSelector), case by case.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { preferredReadReplica, replicaSelectorKind, RACK_AWARE_REPLICA_SELECTOR, type ReplicaView } from '../../../broker/replica/replica-selector.js';

const view = (replicaId: number, rack: string | null, logEndOffset: bigint, inSync = true, logStartOffset = 0n): ReplicaView => ({ replicaId, rack, logStartOffset, logEndOffset, inSync });
// Leader 1 in rack a; followers 2 (b) and 3 (c), all caught up at 100.
const racks = [view(1, 'a', 100n), view(2, 'b', 100n), view(3, 'c', 100n)];
const ask = (clientRack: string, replicas: readonly ReplicaView[] = racks, fetchOffset = 50n, selector = 'rack-aware' as const) =>
  preferredReadReplica({ selector, leaderId: 1, replicas, clientRack, fetchOffset });

describe('replicaSelectorKind', () => {
  it('null (Kafka default) is leader only; the rack-aware class by its Kafka name; anything else unknown', () => {
    assert.equal(replicaSelectorKind(null), 'none');
    assert.equal(replicaSelectorKind(''), 'none');
    assert.equal(replicaSelectorKind(RACK_AWARE_REPLICA_SELECTOR), 'rack-aware');
    assert.equal(replicaSelectorKind('com.example.MySelector'), undefined);
  });
});

describe('preferredReadReplica', () => {
  it('the in-sync follower in the client rack', () => {
    assert.equal(ask('b'), 2);
    assert.equal(ask('c'), 3);
  });
  it('-1 when the leader is in the client rack, the client names no rack, or no replica is in it', () => {
    assert.equal(ask('a'), -1);
    assert.equal(ask(''), -1);
    assert.equal(ask('z'), -1);
  });
  it('-1 without a selector (replica.selector.class unset)', () => {
    assert.equal(preferredReadReplica({ selector: 'none', leaderId: 1, replicas: racks, clientRack: 'b', fetchOffset: 50n }), -1);
  });
  it('a follower out of the ISR is never chosen', () => {
    assert.equal(ask('b', [view(1, 'a', 100n), view(2, 'b', 100n, false)]), -1);
  });
  it('the follower log must hold the fetch offset: log start <= offset <= its log end', () => {
    const lagging = [view(1, 'a', 100n), view(2, 'b', 40n)];
    assert.equal(ask('b', lagging, 40n), 2);
    assert.equal(ask('b', lagging, 41n), -1);
    const truncated = [view(1, 'a', 100n), view(2, 'b', 100n, true, 60n)];
    assert.equal(ask('b', truncated, 59n), -1);
    assert.equal(ask('b', truncated, 60n), 2);
  });
  it('several followers in the rack: the one with the largest log end offset', () => {
    assert.equal(ask('b', [view(1, 'a', 100n), view(2, 'b', 90n), view(4, 'b', 95n), view(3, 'c', 100n)]), 4);
  });
});
