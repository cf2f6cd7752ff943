// Produce (key 0), versions 0-11 advertised; 3-11 served.
// librdkafka only enables compression when the advertised range contains 0,
// so 0-2 are advertised but answered with UNSUPPORTED_VERSION per partition
// (those versions carry message format v0/v1, which Sediment does not store).
// Batches are validated and appended verbatim by the partition log (offsets
// assigned in place); idempotent duplicates are acknowledged with their
// original offsets. acks must be 0, 1 or -1; acks=0 gets no response. With
// one broker, acks=-1 and acks=1 both mean "appended to the leader's log".
// Not implemented: transactional batches are appended, but no transaction
// coordinator exists yet (AddPartitionsToTxn is not advertised).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type {
  ProduceRequest,
  ProduceResponse,
  ProduceResponsePartitionProduceResponse,
} from '../protocol/messages/produce.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

function partitionResponse(index: number, errorCode: number, errorMessage: string | null = null): ProduceResponsePartitionProduceResponse {
  return { index, errorCode, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage };
}

export const handler: ApiHandler<ProduceRequest, ProduceResponse, BrokerContext> = {
  apiKey: 0,
  minVersion: 0,
  maxVersion: 11,
  async handle(broker, req, ctx) {
    const unsupported = ctx.apiVersion < 3;
    const badAcks = req.acks !== 0 && req.acks !== 1 && req.acks !== -1;
    const responses = await Promise.all(
      req.topicData.map(async (t) => ({
        name: t.name,
        partitionResponses: await Promise.all(
          t.partitionData.map(async (p): Promise<ProduceResponsePartitionProduceResponse> => {
            if (unsupported) return partitionResponse(p.index, ErrorCode.UNSUPPORTED_VERSION);
            if (badAcks) return partitionResponse(p.index, ErrorCode.INVALID_REQUIRED_ACKS);
            const partition = broker.topics.partition(t.name, p.index);
            if (partition === undefined) return partitionResponse(p.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            if (broker.topics.isInternal(t.name)) return partitionResponse(p.index, ErrorCode.INVALID_TOPIC_EXCEPTION, `cannot produce to internal topic ${t.name}`);
            if (p.records === null || p.records.length === 0) return partitionResponse(p.index, ErrorCode.CORRUPT_MESSAGE, 'no records');
            try {
              const r = await partition.append(p.records);
              if (!r.duplicate) broker.waiters.notify(t.name, p.index);
              return { index: p.index, errorCode: 0, baseOffset: r.baseOffset, logAppendTimeMs: r.logAppendTime, logStartOffset: r.logStartOffset, recordErrors: [], errorMessage: null };
            } catch (err) {
              if (err instanceof KafkaError) return partitionResponse(p.index, err.code, err.message);
              ctx.log.error({ err, topic: t.name, partition: p.index }, 'append failed');
              return partitionResponse(p.index, ErrorCode.KAFKA_STORAGE_ERROR, (err as Error).message);
            }
          }),
        ),
      })),
    );
    if (req.acks === 0) return null;
    return { responses, throttleTimeMs: 0 };
  },
  errorResponse(req, errorCode) {
    if (req.acks === 0) return { responses: [], throttleTimeMs: 0 };
    return {
      responses: req.topicData.map((t) => ({ name: t.name, partitionResponses: t.partitionData.map((p) => partitionResponse(p.index, errorCode)) })),
      throttleTimeMs: 0,
    };
  },
};
