// ListPartitionReassignments (key 46), version 0 (KIP-455).
// The reassignments in progress, from this broker's view of the cluster
// metadata: each partition's replicas (target and removing ones), adding and
// removing replicas. Null topics: every topic. Unknown topics and partitions
// without a reassignment are left out, as Kafka does. A single broker never
// has one.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse } from '../protocol/messages/list-partition-reassignments.js';
import { ErrorCode } from '../protocol/errors.js';

export const handler: ApiHandler<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, BrokerContext> = {
  apiKey: 46,
  minVersion: 0,
  maxVersion: 0,
  handle(broker, req) {
    const ongoing = broker.reassignments?.list(req.topics) ?? [];
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      topics: ongoing.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, replicas: [...p.replicas], addingReplicas: [...p.addingReplicas], removingReplicas: [...p.removingReplicas] })),
      })),
    };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, topics: [] };
  },
};
