// AddPartitionsToTxn (key 24), versions 0-3 (v4+ is broker-to-broker
// verification, not served). A partition of an unknown topic fails the whole
// request: it gets UNKNOWN_TOPIC_OR_PARTITION and the others
// OPERATION_NOT_ATTEMPTED, as Kafka answers. Otherwise every partition carries
// the coordinator's answer.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type {
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResponse,
  AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
} from '../protocol/messages/add-partitions-to-txn.js';
import { ErrorCode } from '../protocol/errors.js';
import { fencedForVersion } from './txn-errors.js';

function results(req: AddPartitionsToTxnRequest, code: (topic: string, partition: number) => number): AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult[] {
  return req.v3AndBelowTopics.map((t) => ({
    name: t.name,
    resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: code(t.name, p) })),
  }));
}

export const handler: ApiHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, BrokerContext> = {
  apiKey: 24,
  minVersion: 0,
  maxVersion: 3,
  async handle(broker, req, ctx) {
    // The store knows every topic of a cluster, also partitions led by other brokers (the coordinator is not their leader).
    const unknown = (topic: string, partition: number): boolean => {
      const t = broker.topics.store.get(topic);
      return t === undefined || partition < 0 || partition >= t.partitionCount;
    };
    const anyUnknown = req.v3AndBelowTopics.some((t) => t.partitions.some((p) => unknown(t.name, p)));
    let topics: AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult[];
    if (anyUnknown) {
      topics = results(req, (t, p) => (unknown(t, p) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED));
    } else {
      const partitions = req.v3AndBelowTopics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
      const code = await broker.txns.addPartitions(req.v3AndBelowTransactionalId, req.v3AndBelowProducerId, req.v3AndBelowProducerEpoch, partitions);
      const answer = fencedForVersion(code, ctx.apiVersion, 2);
      topics = results(req, () => answer);
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction: [], resultsByTopicV3AndBelow: topics };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, errorCode, resultsByTransaction: [], resultsByTopicV3AndBelow: results(req, () => errorCode) };
  },
};
