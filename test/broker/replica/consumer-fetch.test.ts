// Who serves a consumer's Fetch (KIP-392), as Kafka's readFromLog and
// Partition.localLogWithEpochOrThrow decide it, case by case.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { consumerFetchDecision, type ConsumerFetchInput } from '../../../broker/replica/consumer-fetch.js';

function decide(over: Partial<ConsumerFetchInput>, preferred = -1): { decision: ReturnType<typeof consumerFetchDecision>; asked: number } {
  let asked = 0;
  const decision = consumerFetchDecision({
    standing: 'leader',
    leaderEpoch: 3,
    currentLeaderEpoch: 3,
    apiVersion: 12,
    preferredReadReplica: () => {
      asked++;
      return preferred;
    },
    ...over,
  });
  return { decision, asked };
}

describe('consumerFetchDecision', () => {
  it('the leader reads when its selector prefers itself, and redirects to the replica it prefers', () => {
    assert.deepEqual(decide({}).decision, { kind: 'read' });
    assert.deepEqual(decide({}, 2).decision, { kind: 'redirect', preferredReadReplica: 2 });
  });

  it('before v11 (no rack_id) the leader reads without asking its selector', () => {
    const r = decide({ apiVersion: 10 }, 2);
    assert.deepEqual(r.decision, { kind: 'read' });
    assert.equal(r.asked, 0);
  });

  it('a follower serves v11+ consumer fetches and refuses older ones with NOT_LEADER_OR_FOLLOWER; it never asks a selector', () => {
    const v11 = decide({ standing: 'follower', apiVersion: 11 }, 2);
    assert.deepEqual(v11.decision, { kind: 'read' });
    assert.equal(v11.asked, 0);
    assert.deepEqual(decide({ standing: 'follower', apiVersion: 10 }).decision, { kind: 'error', errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
  });

  it('a broker that is not a replica (or whose partition is offline) answers NOT_LEADER_OR_FOLLOWER, whatever the epoch', () => {
    assert.deepEqual(decide({ standing: 'not-replica' }).decision, { kind: 'error', errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
    assert.deepEqual(decide({ standing: 'not-replica', currentLeaderEpoch: 1 }).decision, { kind: 'error', errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
  });

  it('an older current_leader_epoch is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, on a leader and a follower alike', () => {
    for (const standing of ['leader', 'follower'] as const) {
      assert.deepEqual(decide({ standing, currentLeaderEpoch: 2 }, 2).decision, { kind: 'error', errorCode: ErrorCode.FENCED_LEADER_EPOCH }, standing);
      assert.deepEqual(decide({ standing, currentLeaderEpoch: 4 }, 2).decision, { kind: 'error', errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH }, standing);
      // The epoch is checked before the version: an old client on a follower is fenced first, as Kafka's getLocalLog.
      assert.deepEqual(decide({ standing, currentLeaderEpoch: 2, apiVersion: 10 }).decision, { kind: 'error', errorCode: ErrorCode.FENCED_LEADER_EPOCH }, standing);
    }
  });

  it('no current_leader_epoch (-1) is never fenced', () => {
    assert.deepEqual(decide({ currentLeaderEpoch: -1, leaderEpoch: 9 }).decision, { kind: 'read' });
    assert.deepEqual(decide({ standing: 'follower', currentLeaderEpoch: -1, leaderEpoch: 9 }).decision, { kind: 'read' });
  });
});
