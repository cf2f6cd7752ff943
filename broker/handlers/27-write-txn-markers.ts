// WriteTxnMarkers (key 27), version 1 (v2 carries transaction.version 2,
// which Sediment does not finalize). Sent by a transaction coordinator to the
// leader of each partition of a transaction, as between Kafka brokers: every
// partition named gets the COMMIT or ABORT control batch of the producer,
// appended as a broker write at the partition's leader epoch. A partition this
// broker does not lead answers NOT_LEADER_OR_FOLLOWER, one it does not have
// UNKNOWN_TOPIC_OR_PARTITION (the coordinator retries, or drops a deleted
// partition). For a __consumer_offsets partition the group coordinator then
// makes the transaction's pending offsets committed (or drops them), as
// Kafka's GroupCoordinator.onTransactionCompleted.
// A marker whose coordinator epoch is below the last one the partition saw
// for that producer (producer state) answers TRANSACTION_COORDINATOR_FENCED:
// it comes from a deposed coordinator.
// Not implemented: CLUSTER_ACTION authorization (there are no ACLs).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../protocol/messages/write-txn-markers.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

const OFFSETS_TOPIC = '__consumer_offsets';

export const handler: ApiHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponse, BrokerContext> = {
  apiKey: 27,
  minVersion: 1,
  maxVersion: 1,
  async handle(broker, req) {
    const markers = [];
    for (const m of req.markers) {
      const marker = { producerId: m.producerId, producerEpoch: m.producerEpoch, type: m.transactionResult ? 'COMMIT' : 'ABORT', coordinatorEpoch: m.coordinatorEpoch } as const;
      let offsetsWritten = false;
      const topics = [];
      for (const t of m.topics) {
        const partitions = [];
        for (const partitionIndex of t.partitionIndexes) {
          const notLeader = broker.cluster?.notLeader(t.name, partitionIndex) ?? null;
          let errorCode: number = notLeader?.errorCode ?? ErrorCode.NONE;
          if (errorCode === ErrorCode.NONE) {
            try {
              if (broker.writeLocalTxnMarker === undefined) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'this broker writes no markers for others');
              await broker.writeLocalTxnMarker({ topic: t.name, partition: partitionIndex }, marker);
              if (t.name === OFFSETS_TOPIC) offsetsWritten = true;
            } catch (err) {
              errorCode = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
              broker.log.warn({ err, topic: t.name, partition: partitionIndex, producerId: String(m.producerId) }, 'could not write a transaction marker');
            }
          }
          partitions.push({ partitionIndex, errorCode });
        }
        topics.push({ name: t.name, partitions });
      }
      if (offsetsWritten) await broker.groups.completeTxnOffsets(m.producerId, m.transactionResult);
      markers.push({ producerId: m.producerId, topics });
    }
    return { markers };
  },
  errorResponse(req, errorCode) {
    return {
      markers: req.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode })) })),
      })),
    };
  },
};
