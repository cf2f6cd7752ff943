// The share-partition leader's way to its state in a cluster: Kafka's
// DefaultStatePersister and PersisterStateManager. Each share-partition
// "groupId:topicId:partition" has one share coordinator, the leader of its
// __share_group_state partition (FindCoordinator key type 2); the persister
// finds it, sends it ReadShareGroupState / WriteShareGroupState /
// DeleteShareGroupState / ReadShareGroupStateSummary, and on a retriable answer
// (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, or
// a broker it cannot reach) looks the coordinator up again and retries with
// exponential backoff until its deadline. A key this broker coordinates is
// served by the local share coordinator without the wire.
//
// Writes carry the state epoch the share-partition read when it loaded (its
// SharePartitionManager entry keeps it, as Kafka's SharePartition does; -1
// when the caller has none, never fenced) and the share-partition's leader
// epoch, so a coordinator fences the writes of a leader that was replaced
// (FENCED_LEADER_EPOCH) and of a copy loaded before an offsets reset
// re-initialised the state at a higher epoch (FENCED_STATE_EPOCH); neither
// is retried. No epoch is remembered here: a read for describe must not
// move the epoch a cached share-partition writes with.
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { Scheduler } from '../common/scheduler.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import type { PersistedShareState } from './share-partition.js';
import type { ShareStatePersister } from './share-partition-manager.js';
import { deliveryCompleteCount } from './share-coordinator.js';
import type { ShareStateChannel } from './share-state-service.js';

export interface PersisterRouting {
  /** The broker coordinating the share-partition key now, or null while none is known (the state topic may be being created). */
  coordinatorOf(key: string): number | null;
  /** Requests to that broker (the local service for this broker). */
  channel(nodeId: number): ShareStateChannel;
  /** Every share-partition that may hold state: the partitions of the topics that exist (partitionsOf asks their coordinators). */
  candidates(): readonly { readonly topicId: string; readonly partitionCount: number }[];
}

export interface RoutedPersisterOptions {
  readonly routing: PersisterRouting;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  /** How long one operation may keep retrying. */
  readonly timeoutMs: number;
  /** First retry backoff; doubles up to maxBackoffMs. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

const RETRIABLE = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);

/** A summary of a key with state: a start offset, or initialised by the group coordinator (at start offset -1 and its group epoch, never 0). */
function hasState(p: { readonly startOffset: bigint; readonly stateEpoch: number }): boolean {
  return p.startOffset >= 0n || p.stateEpoch > 0;
}

export function shareCoordinatorKey(groupId: string, topicId: string, partition: number): string {
  return `${groupId}:${topicId}:${partition}`;
}

type Answer<T> = { readonly errorCode: number; readonly errorMessage: string | null; readonly value?: T };

export class RoutedStatePersister implements ShareStatePersister {
  constructor(private readonly o: RoutedPersisterOptions) {}

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.o.scheduler.setTimeout(resolve, ms));
  }

  /** Runs `op` against the key's coordinator until it answers something not retriable, or the deadline passes. */
  private async call<T>(key: string, what: string, op: (channel: ShareStateChannel) => Promise<Answer<T>>): Promise<T | undefined> {
    const deadline = this.o.clock.now() + this.o.timeoutMs;
    let backoff = this.o.backoffMs;
    let last = 'no coordinator known';
    let lastCode: number = ErrorCode.COORDINATOR_NOT_AVAILABLE;
    for (;;) {
      const node = this.o.routing.coordinatorOf(key);
      if (node !== null) {
        let a: Answer<T> | null = null;
        try {
          a = await op(this.o.routing.channel(node));
        } catch (err) {
          // A broker that cannot be reached is retried (the channel reports it as COORDINATOR_NOT_AVAILABLE); anything else fails.
          if (err instanceof KafkaError && !RETRIABLE.has(err.code) && !err.retriable) throw err;
          last = `node ${node}: ${err instanceof Error ? err.message : String(err)}`;
          lastCode = ErrorCode.COORDINATOR_NOT_AVAILABLE;
        }
        if (a !== null) {
          if (a.errorCode === ErrorCode.NONE) return a.value;
          if (!RETRIABLE.has(a.errorCode)) throw new KafkaError(a.errorCode, `${what} of ${key} at node ${node}: ${a.errorMessage ?? errorName(a.errorCode)}`);
          last = `node ${node}: ${errorName(a.errorCode)}`;
          lastCode = a.errorCode;
        }
      }
      const now = this.o.clock.now();
      if (now >= deadline) throw new KafkaError(lastCode === ErrorCode.NOT_COORDINATOR ? ErrorCode.COORDINATOR_NOT_AVAILABLE : lastCode, `${what} of ${key} did not succeed within ${this.o.timeoutMs} ms (${last})`);
      this.o.log.debug({ key, what, last, backoffMs: backoff }, 'share coordinator not reachable yet; retrying');
      await this.sleep(Math.min(backoff, deadline - now));
      backoff = Math.min(backoff * 2, this.o.maxBackoffMs);
    }
  }

  async read(groupId: string, topicId: string, partition: number, leaderEpoch = -1): Promise<PersistedShareState | null> {
    return (await this.readWithStateEpoch(groupId, topicId, partition, leaderEpoch)).state;
  }

  async readWithStateEpoch(groupId: string, topicId: string, partition: number, leaderEpoch = -1): Promise<{ state: PersistedShareState | null; stateEpoch: number }> {
    const key = shareCoordinatorKey(groupId, topicId, partition);
    const r = await this.call(key, 'ReadShareGroupState', async (ch) => {
      const res = await ch.read({ groupId, topics: [{ topicId, partitions: [{ partition, leaderEpoch }] }] });
      const p = res.results.find((t) => t.topicId === topicId)?.partitions.find((x) => x.partition === partition);
      if (p === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'no answer for the partition' };
      return { errorCode: p.errorCode, errorMessage: p.errorMessage, value: p };
    });
    if (r === undefined || r.startOffset < 0n) return { state: null, stateEpoch: r?.stateEpoch ?? 0 };
    return { state: { startOffset: r.startOffset, stateBatches: r.stateBatches.map((b) => ({ firstOffset: b.firstOffset, lastOffset: b.lastOffset, deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })) }, stateEpoch: r.stateEpoch };
  }

  async write(groupId: string, topicId: string, partition: number, state: PersistedShareState, leaderEpoch = -1, stateEpoch = -1): Promise<void> {
    const key = shareCoordinatorKey(groupId, topicId, partition);
    const stateBatches = state.stateBatches.map((b) => ({ firstOffset: b.firstOffset, lastOffset: b.lastOffset, deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));
    await this.call(key, 'WriteShareGroupState', async (ch) => {
      const res = await ch.write({ groupId, topics: [{ topicId, partitions: [{ partition, stateEpoch, leaderEpoch, startOffset: state.startOffset, deliveryCompleteCount: deliveryCompleteCount(stateBatches), stateBatches }] }] });
      const p = res.results.find((t) => t.topicId === topicId)?.partitions.find((x) => x.partition === partition);
      return p === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'no answer for the partition' } : p;
    });
  }

  async delete(groupId: string, topicId: string, partition: number): Promise<void> {
    const key = shareCoordinatorKey(groupId, topicId, partition);
    await this.call(key, 'DeleteShareGroupState', async (ch) => {
      const res = await ch.delete({ groupId, topics: [{ topicId, partitions: [{ partition }] }] });
      const p = res.results.find((t) => t.topicId === topicId)?.partitions.find((x) => x.partition === partition);
      return p === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'no answer for the partition' } : p;
    });
  }

  async initialize(groupId: string, topicId: string, partition: number, stateEpoch: number, startOffset: bigint): Promise<void> {
    const key = shareCoordinatorKey(groupId, topicId, partition);
    await this.call(key, 'InitializeShareGroupState', async (ch) => {
      const res = await ch.initialize({ groupId, topics: [{ topicId, partitions: [{ partition, stateEpoch, startOffset }] }] });
      const p = res.results.find((t) => t.topicId === topicId)?.partitions.find((x) => x.partition === partition);
      return p === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'no answer for the partition' } : p;
    });
  }

  /** The share-partitions of the group that have state: a ReadShareGroupStateSummary of every candidate, one request per coordinator. */
  async partitionsOf(groupId: string): Promise<{ topicId: string; partition: number }[]> {
    const byNode = new Map<number, { topicId: string; partition: number }[]>();
    const unrouted: { topicId: string; partition: number }[] = [];
    for (const t of this.o.routing.candidates()) {
      for (let partition = 0; partition < t.partitionCount; partition++) {
        const node = this.o.routing.coordinatorOf(shareCoordinatorKey(groupId, t.topicId, partition));
        if (node === null) unrouted.push({ topicId: t.topicId, partition });
        else byNode.set(node, [...(byNode.get(node) ?? []), { topicId: t.topicId, partition }]);
      }
    }
    const out: { topicId: string; partition: number }[] = [];
    const retry: { topicId: string; partition: number }[] = [...unrouted];
    await Promise.all([...byNode].map(async ([node, keys]) => {
      const topics = new Map<string, number[]>();
      for (const k of keys) topics.set(k.topicId, [...(topics.get(k.topicId) ?? []), k.partition]);
      try {
        const res = await this.o.routing.channel(node).summary({ groupId, topics: [...topics].map(([topicId, ps]) => ({ topicId, partitions: ps.map((partition) => ({ partition, leaderEpoch: -1 })) })) });
        for (const t of res.results) {
          for (const p of t.partitions) {
            if (p.errorCode === ErrorCode.NONE) {
              if (hasState(p)) out.push({ topicId: t.topicId, partition: p.partition });
            } else if (RETRIABLE.has(p.errorCode)) retry.push({ topicId: t.topicId, partition: p.partition });
          }
        }
      } catch {
        retry.push(...keys);
      }
    }));
    // What could not be asked in one go (a coordinator moving) is asked key by key, with the retries of `call`.
    for (const k of retry) {
      const p = await this.call(shareCoordinatorKey(groupId, k.topicId, k.partition), 'ReadShareGroupStateSummary', async (ch) => {
        const res = await ch.summary({ groupId, topics: [{ topicId: k.topicId, partitions: [{ partition: k.partition, leaderEpoch: -1 }] }] });
        const x = res.results[0]?.partitions[0];
        return x === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'no answer for the partition' } : { errorCode: x.errorCode, errorMessage: x.errorMessage, value: x };
      });
      if (p !== undefined && hasState(p)) out.push(k);
    }
    return out;
  }
}
