// The wait after a coordinator's append to its internal topic
// (__consumer_offsets, __transaction_state, __share_group_state) in a cluster:
// the write is answered once the ISR holds it, as Kafka's coordinator runtime
// holds a write until the high watermark passes it. The wait is bounded by the
// coordinator's own write timeout (offsets.commit.timeout.ms for the group
// coordinator); past it the write fails REQUEST_TIMED_OUT, which the
// coordinator maps to its client error (COORDINATOR_NOT_AVAILABLE,
// appendErrorCode). Nothing is awaited before replication starts, nor for a
// partition this broker has no log of.
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';

export interface CoordinatorReplication {
  appended(topic: string, partition: number): void;
  /** NONE, or the acks=all failure (REQUEST_TIMED_OUT after timeoutMs, NOT_LEADER_OR_FOLLOWER...). */
  awaitReplication(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<number>;
  checkEnoughReplicas(topic: string, partition: number): number;
}

export interface CoordinatorReplicationDeps {
  /** Null until replication has started. */
  readonly replication: () => CoordinatorReplication | null;
  /** The partition's log end offset; undefined: no log here. */
  readonly logEndOffset: (topic: string, partition: number) => bigint | undefined;
  /** Wakes the fetches parked on the partition (the followers' among them). */
  readonly notify: (topic: string, partition: number) => void;
}

/** The `committed` wait of a coordinator writing to `topic`, each bounded by `timeoutMs()` (read per write). */
export function coordinatorReplicationWait(d: CoordinatorReplicationDeps, topic: string, timeoutMs: () => number): (partition: number) => Promise<void> {
  return async (p) => {
    const replication = d.replication();
    const end = d.logEndOffset(topic, p);
    if (replication === null || end === undefined) return;
    replication.appended(topic, p);
    d.notify(topic, p);
    const code = await replication.awaitReplication(topic, p, end, timeoutMs());
    if (code !== ErrorCode.NONE) throw new KafkaError(code, `${topic}-${p} not replicated: ${errorName(code)}`);
    // As an acks=all append: replicated to an ISR below min.insync.replicas is not enough.
    if (replication.checkEnoughReplicas(topic, p) !== ErrorCode.NONE) {
      throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, `the ISR of ${topic}-${p} is below min.insync.replicas`);
    }
  };
}
