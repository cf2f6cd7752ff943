// offsets.commit.timeout.ms: in a cluster a group coordinator write waits for
// the ISR (as acks=all) at most this long; then the commit answers
// COORDINATOR_NOT_AVAILABLE (Kafka's coordinator runtime fails the write with a
// TimeoutException, REQUEST_TIMED_OUT, which handleOperationException remaps).
// The replication double keeps ReplicaManager.awaitReplication's contract: an
// unacknowledged wait answers REQUEST_TIMED_OUT once its timeout passes on the
// injected clock (replica-manager.test.ts tests the real one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, commitParams, settle, track } from './harness.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { BrokerConfig } from '../../../broker/config.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import { MemoryOffsetsTopicLog } from '../../../broker/group/offsets-topic.js';
import { coordinatorReplicationWait, type CoordinatorReplication } from '../../../broker/replica/coordinator-replication.js';
import { ConfigError } from '../../../metadata/config-schema.js';

const props = { 'node.id': '1', 'log.dirs': '/tmp/unused-commit-timeout' };

class PendingReplication implements CoordinatorReplication {
  readonly timeouts: number[] = [];
  private readonly acks: Array<() => void> = [];

  constructor(private readonly scheduler: ManualScheduler) {}

  appended(): void {}

  awaitReplication(_topic: string, _partition: number, _offset: bigint, timeoutMs: number): Promise<number> {
    this.timeouts.push(timeoutMs);
    return new Promise((resolve) => {
      const timer = this.scheduler.setTimeout(() => resolve(ErrorCode.REQUEST_TIMED_OUT), timeoutMs);
      this.acks.push(() => {
        this.scheduler.clearTimeout(timer);
        resolve(ErrorCode.NONE);
      });
    });
  }

  checkEnoughReplicas(): number {
    return ErrorCode.NONE;
  }

  /** The ISR caught up with every write waiting. */
  ackAll(): void {
    for (const a of this.acks.splice(0)) a();
  }
}

async function start(config: BrokerConfig): Promise<{ clock: ManualClock; replication: PendingReplication; coordinator: GroupCoordinator }> {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const replication = new PendingReplication(scheduler);
  const log = new MemoryOffsetsTopicLog();
  // As broker.ts wires the group coordinator in a cluster.
  const committed = coordinatorReplicationWait(
    { replication: () => replication, logEndOffset: (_t, p) => BigInt(log.records(p).length), notify: () => undefined },
    '__consumer_offsets',
    () => config.offsetCommitTimeoutMs,
  );
  const coordinator = new GroupCoordinator({ log, committed, clock, scheduler, config: { offsetsTopicNumPartitions: 1 } });
  await coordinator.start();
  return { clock, replication, coordinator };
}

const errorOf = (r: Awaited<ReturnType<GroupCoordinator['commitOffsets']>>): number | undefined => r.topics[0]?.partitions[0]?.errorCode;

test('offsets.commit.timeout.ms defaults to 5000 (Kafka\'s) and must be at least 1', () => {
  assert.equal(BrokerConfig.fromProperties(props).offsetCommitTimeoutMs, 5000);
  assert.equal(BrokerConfig.fromProperties({ ...props, 'offsets.commit.timeout.ms': '250' }).offsetCommitTimeoutMs, 250);
  assert.throws(() => BrokerConfig.fromProperties({ ...props, 'offsets.commit.timeout.ms': '0' }), ConfigError);
});

test('a commit the ISR does not acknowledge answers COORDINATOR_NOT_AVAILABLE after offsets.commit.timeout.ms, not before', async () => {
  const { clock, replication, coordinator } = await start(BrokerConfig.fromProperties({ ...props, 'offsets.commit.timeout.ms': '2000' }));
  const commit = track(coordinator.commitOffsets(commitParams(7n)));
  await settle();
  assert.deepEqual(replication.timeouts, [2000], 'the append waits for the ISR with the configured timeout');
  clock.advance(1999);
  await settle();
  assert.equal(commit.settled, false, 'still waiting for the ISR');
  clock.advance(1);
  await settle();
  assert.equal(commit.settled, true);
  assert.equal(errorOf(commit.value), ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const fetched = coordinator.fetchOffsets([{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] }]);
  assert.equal(fetched[0]?.topics[0]?.partitions[0]?.committedOffset, -1n, 'a timed-out commit is not applied');
});

test('a commit the ISR acknowledges within offsets.commit.timeout.ms succeeds (default 5000)', async () => {
  const { clock, replication, coordinator } = await start(BrokerConfig.fromProperties(props));
  const commit = track(coordinator.commitOffsets(commitParams(7n)));
  await settle();
  assert.deepEqual(replication.timeouts, [5000]);
  clock.advance(4999);
  replication.ackAll();
  await settle();
  assert.equal(errorOf(await commit.promise), ErrorCode.NONE);
  const fetched = coordinator.fetchOffsets([{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] }]);
  assert.equal(fetched[0]?.topics[0]?.partitions[0]?.committedOffset, 7n);
});
