// Kafka's ShareCoordinatorService in the shape of its five inter-broker
// requests (InitializeShareGroupState 83, ReadShareGroupState 84,
// WriteShareGroupState 85, DeleteShareGroupState 86,
// ReadShareGroupStateSummary 87): each partition of a request is one key of
// the share coordinator, answered on its own with Kafka's error (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, FENCED_LEADER_EPOCH, FENCED_STATE_EPOCH, ...).
// The handlers call it for requests from other brokers; the persister calls
// it directly when this broker is the key's coordinator.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { DeleteShareGroupStateRequest, DeleteShareGroupStateResponse } from '../protocol/messages/delete-share-group-state.js';
import type { InitializeShareGroupStateRequest, InitializeShareGroupStateResponse } from '../protocol/messages/initialize-share-group-state.js';
import type { ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse } from '../protocol/messages/read-share-group-state-summary.js';
import type { ReadShareGroupStateRequest, ReadShareGroupStateResponse } from '../protocol/messages/read-share-group-state.js';
import type { WriteShareGroupStateRequest, WriteShareGroupStateResponse } from '../protocol/messages/write-share-group-state.js';
import type { ShareCoordinator } from './share-coordinator.js';

/** The five share-state requests, wherever they are served (this broker, or another over the wire). */
export interface ShareStateChannel {
  initialize(req: InitializeShareGroupStateRequest): Promise<InitializeShareGroupStateResponse>;
  read(req: ReadShareGroupStateRequest): Promise<ReadShareGroupStateResponse>;
  write(req: WriteShareGroupStateRequest): Promise<WriteShareGroupStateResponse>;
  delete(req: DeleteShareGroupStateRequest): Promise<DeleteShareGroupStateResponse>;
  summary(req: ReadShareGroupStateSummaryRequest): Promise<ReadShareGroupStateSummaryResponse>;
}

interface Outcome<T> {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly value: T | null;
}

async function attempt<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { errorCode: ErrorCode.NONE, errorMessage: null, value: await fn() };
  } catch (err) {
    if (err instanceof KafkaError) return { errorCode: err.code, errorMessage: err.message, value: null };
    return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: err instanceof Error ? err.message : String(err), value: null };
  }
}

/** Answers the requests from this broker's share coordinator. */
export function shareStateService(sc: ShareCoordinator): ShareStateChannel {
  return {
    async initialize(req) {
      return {
        results: await Promise.all(req.topics.map(async (t) => ({
          topicId: t.topicId,
          partitions: await Promise.all(t.partitions.map(async (p) => {
            const r = await attempt(() => sc.initializeState({ groupId: req.groupId, topicId: t.topicId, partition: p.partition }, p.stateEpoch, p.startOffset));
            return { partition: p.partition, errorCode: r.errorCode, errorMessage: r.errorMessage };
          })),
        }))),
      };
    },
    async read(req) {
      return {
        results: await Promise.all(req.topics.map(async (t) => ({
          topicId: t.topicId,
          partitions: await Promise.all(t.partitions.map(async (p) => {
            const r = await attempt(() => sc.readState({ groupId: req.groupId, topicId: t.topicId, partition: p.partition }, p.leaderEpoch));
            return {
              partition: p.partition,
              errorCode: r.errorCode,
              errorMessage: r.errorMessage,
              stateEpoch: r.value?.stateEpoch ?? 0,
              startOffset: r.value?.startOffset ?? -1n,
              stateBatches: (r.value?.stateBatches ?? []).map((b) => ({ firstOffset: b.firstOffset, lastOffset: b.lastOffset, deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })),
            };
          })),
        }))),
      };
    },
    async write(req) {
      return {
        results: await Promise.all(req.topics.map(async (t) => ({
          topicId: t.topicId,
          partitions: await Promise.all(t.partitions.map(async (p) => {
            const r = await attempt(() => sc.writeState({ groupId: req.groupId, topicId: t.topicId, partition: p.partition }, { stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch, startOffset: p.startOffset, stateBatches: p.stateBatches }));
            return { partition: p.partition, errorCode: r.errorCode, errorMessage: r.errorMessage };
          })),
        }))),
      };
    },
    async delete(req) {
      return {
        results: await Promise.all(req.topics.map(async (t) => ({
          topicId: t.topicId,
          partitions: await Promise.all(t.partitions.map(async (p) => {
            const r = await attempt(() => sc.deleteState({ groupId: req.groupId, topicId: t.topicId, partition: p.partition }));
            return { partition: p.partition, errorCode: r.errorCode, errorMessage: r.errorMessage };
          })),
        }))),
      };
    },
    async summary(req) {
      return {
        results: await Promise.all(req.topics.map(async (t) => ({
          topicId: t.topicId,
          partitions: await Promise.all(t.partitions.map(async (p) => {
            const r = await attempt(() => sc.readSummary({ groupId: req.groupId, topicId: t.topicId, partition: p.partition }, p.leaderEpoch));
            return {
              partition: p.partition,
              errorCode: r.errorCode,
              errorMessage: r.errorMessage,
              stateEpoch: r.value?.stateEpoch ?? 0,
              leaderEpoch: r.value?.leaderEpoch ?? -1,
              startOffset: r.value?.startOffset ?? -1n,
              deliveryCompleteCount: r.value?.deliveryCompleteCount ?? 0,
            };
          })),
        }))),
      };
    },
  };
}
