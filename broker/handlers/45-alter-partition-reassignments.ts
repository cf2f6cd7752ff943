// AlterPartitionReassignments (key 45), versions 0-1 (KIP-455; v1 adds
// AllowReplicationFactorChange, KIP-860).
// Each partition's target replicas start (or replace) its reassignment; null
// replicas cancel the one in progress. Any broker accepts it: in a cluster the
// receiving broker writes the change to the metadata store and the controller
// completes it once the target replicas are in the ISR
// (broker/cluster/cluster-reassignments.ts, metadata/cluster/reassignment.ts).
// Per-partition errors as Kafka's: UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REPLICA_ASSIGNMENT (empty, duplicate or unregistered brokers, or a
// cancel that needs an unclean election), INVALID_REPLICATION_FACTOR (v1,
// AllowReplicationFactorChange=false), NO_REASSIGNMENT_IN_PROGRESS (cancel
// of none). Partitions are changed one by one, not atomically as one batch.
// TimeoutMs is not used: an answer waits at most for this broker to see its change.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse } from '../protocol/messages/alter-partition-reassignments.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { toErrorPair } from './admin-errors.js';

export const handler: ApiHandler<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, BrokerContext> = {
  apiKey: 45,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const reassignments = broker.reassignments;
    if (reassignments === undefined || reassignments === null) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'Partition reassignment is not served here');
    const allow = ctx.apiVersion >= 1 ? req.allowReplicationFactorChange : true;
    const responses = [];
    for (const t of req.topics) {
      const partitions = [];
      for (const p of t.partitions) {
        try {
          await reassignments.alter(t.name, p.partitionIndex, p.replicas, allow);
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null });
        } catch (err) {
          partitions.push({ partitionIndex: p.partitionIndex, ...toErrorPair(err, ctx.log) });
        }
      }
      responses.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, allowReplicationFactorChange: allow, errorCode: ErrorCode.NONE, errorMessage: null, responses };
  },
  errorResponse(req, errorCode, ctx) {
    return {
      throttleTimeMs: 0,
      allowReplicationFactorChange: ctx.apiVersion >= 1 ? req.allowReplicationFactorChange : true,
      errorCode,
      errorMessage: null,
      responses: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage: null })) })),
    };
  },
};
