// Produce (key 0), versions 0-13 advertised; 3-13 served.
// librdkafka only enables compression when the advertised range contains 0,
// so 0-2 are advertised but answered with UNSUPPORTED_VERSION per partition
// (those versions carry message format v0/v1, which Sediment does not store).
// Batches are validated and appended verbatim by the partition log (offsets
// assigned in place), unless the topic's compression.type names another codec
// than the batch's (the log then rebuilds it in that codec); idempotent duplicates are acknowledged with their
// original offsets. As Kafka's ProduceRequest.validateRecords, a partition's
// records must hold exactly one whole batch (INVALID_RECORD) and zstd needs v7+
// (UNSUPPORTED_COMPRESSION_TYPE). Records refused one by one (a missing key on
// a compacted topic, a timestamp out of range) are listed in recordErrors with
// their batch index and message (KIP-467, v8+). acks must be 0, 1 or -1; acks=0 gets no
// response, and when any partition failed the connection is closed instead
// (Kafka does so the producer learns of the error). With one broker (or one
// replica), acks=-1 and acks=1 both mean "appended to the leader's log". A
// replicated partition (broker/replica/) answers acks=-1 once its high
// watermark covers the batch, REQUEST_TIMED_OUT after the request's timeout;
// with the ISR below min.insync.replicas it refuses with NOT_ENOUGH_REPLICAS
// before appending, or answers NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR
// shrank below it while the write waited (Kafka's ReplicaManager rules).
// In a cluster, a partition this broker does not lead is answered
// NOT_LEADER_OR_FOLLOWER with KIP-951's CurrentLeader and, at v10+, the
// leaders' NodeEndpoints, so the producer re-routes without a metadata round trip.
// A transactional batch is appended only when its producer's transaction is
// ongoing with the partition added (Kafka's produce-side verification):
// otherwise INVALID_TXN_STATE, or PRODUCER_FENCED for another epoch (what
// Kafka's verification through the coordinator answers).
// v13 names topics by id (KIP-516): an unknown id is UNKNOWN_TOPIC_ID, and the
// response carries the id back. v12 is v11 with KIP-890 part 2 (the produce
// adding its partition to the transaction) for transaction.version 2 clients;
// Sediment finalizes no transaction.version feature, so clients keep v11
// semantics for transactional batches (the Java client caps them at v11).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type {
  ProduceRequest,
  ProduceResponse,
  ProduceResponsePartitionProduceResponse,
} from '../protocol/messages/produce.js';
import { ErrorCode, KafkaError, RecordValidationError } from '../protocol/errors.js';
import { recordsBuffer } from '../protocol/record-parts.js';
import {
  LOG_OVERHEAD,
  OFFSET_ATTRIBUTES,
  OFFSET_BATCH_LENGTH,
  OFFSET_PRODUCER_EPOCH,
  OFFSET_PRODUCER_ID,
  ATTR_COMPRESSION_MASK,
  BATCH_HEADER_SIZE,
  isControl,
  isTransactional,
} from '../protocol/record-batch.js';
import { CloseConnectionError } from '../common/errors.js';
import { leaderEndpoints } from './leader-endpoints.js';
import { REMOTE_LOG_METADATA_TOPIC } from '../../metadata/remote-log-metadata/metadata-topic-log.js';

const ZSTD = 4;
/** The first version naming topics by id instead of by name (KIP-516). */
const TOPIC_IDS_VERSION = 13;

/**
 * Kafka's per-partition Produce v3+ framing rules, from the batch headers only:
 * zstd needs v7+, and a second whole batch after the first is refused. Bytes
 * that do not form a whole second batch are left for the log to trim; the
 * batches themselves are validated by the log.
 */
function produceRecordsError(records: Buffer, version: number): KafkaError | null {
  if (records.length < LOG_OVERHEAD) return null;
  const first = records.readInt32BE(OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
  if (first < BATCH_HEADER_SIZE || first > records.length) return null;
  if (version < 7 && (records.readInt16BE(OFFSET_ATTRIBUTES) & ATTR_COMPRESSION_MASK) === ZSTD) {
    return new KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `Produce requests with version ${version} are not allowed to use ZStandard compression`);
  }
  const rest = records.length - first;
  if (rest >= LOG_OVERHEAD) {
    const second = records.readInt32BE(first + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (second >= BATCH_HEADER_SIZE && second <= rest) {
      return new KafkaError(ErrorCode.INVALID_RECORD, `Produce requests with version ${version} are only allowed to contain exactly one record batch per partition`);
    }
  }
  return null;
}

function partitionResponse(index: number, errorCode: number, errorMessage: string | null = null): ProduceResponsePartitionProduceResponse {
  return { index, errorCode, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage };
}

export const handler: ApiHandler<ProduceRequest, ProduceResponse, BrokerContext> = {
  apiKey: 0,
  minVersion: 0,
  maxVersion: 13,
  async handle(broker, req, ctx) {
    const unsupported = ctx.apiVersion < 3;
    const byId = ctx.apiVersion >= TOPIC_IDS_VERSION;
    const badAcks = req.acks !== 0 && req.acks !== 1 && req.acks !== -1;
    const leaders = new Set<number>();
    const responses = await Promise.all(
      req.topicData.map(async (t) => {
        // v13+: the id names the topic; the response echoes it (its name field is gone).
        const name = byId ? broker.topics.store.getById(t.topicId)?.name : t.name;
        return {
        name: t.name,
        topicId: t.topicId,
        partitionResponses: await Promise.all(
          t.partitionData.map(async (p): Promise<ProduceResponsePartitionProduceResponse> => {
            if (unsupported) return partitionResponse(p.index, ErrorCode.UNSUPPORTED_VERSION);
            if (badAcks) return partitionResponse(p.index, ErrorCode.INVALID_REQUIRED_ACKS);
            if (name === undefined) return partitionResponse(p.index, ErrorCode.UNKNOWN_TOPIC_ID);
            const notLeader = broker.cluster?.notLeader(name, p.index) ?? null;
            if (notLeader !== null) {
              leaders.add(notLeader.leaderId);
              return { ...partitionResponse(p.index, notLeader.errorCode), currentLeader: { leaderId: notLeader.leaderId, leaderEpoch: notLeader.leaderEpoch } };
            }
            const partition = broker.topics.partition(name, p.index);
            if (partition === undefined) return partitionResponse(p.index, broker.cluster?.notHostedError(name) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            // As in Kafka, __remote_log_metadata is written by Produce (TopicBasedRemoteLogMetadataManager's producer; in a cluster every broker's).
            if (broker.topics.isInternal(name) && name !== REMOTE_LOG_METADATA_TOPIC) return partitionResponse(p.index, ErrorCode.INVALID_TOPIC_EXCEPTION, `cannot produce to internal topic ${name}`);
            if (p.records === null || p.records.length === 0) return partitionResponse(p.index, ErrorCode.CORRUPT_MESSAGE, 'no records');
            // Decoded from the request frame, so a Buffer: recordsBuffer returns it as is (no copy).
            const records = recordsBuffer(p.records);
            const framing = produceRecordsError(records, ctx.apiVersion);
            if (framing !== null) return partitionResponse(p.index, framing.code, framing.message);
            if (records.length >= BATCH_HEADER_SIZE) {
              const attributes = records.readInt16BE(OFFSET_ATTRIBUTES);
              if (isTransactional(attributes) && !isControl(attributes)) {
                const code = broker.txns.verifyProduce(records.readBigInt64BE(OFFSET_PRODUCER_ID), records.readInt16BE(OFFSET_PRODUCER_EPOCH), name, p.index);
                if (code !== ErrorCode.NONE) return partitionResponse(p.index, code, 'the partition is not part of an ongoing transaction of this producer');
              }
            }
            const replication = broker.replication ?? null;
            if (req.acks === -1 && replication !== null) {
              const code = replication.checkEnoughReplicas(name, p.index);
              if (code !== ErrorCode.NONE) return partitionResponse(p.index, code, `the ISR of ${name}-${p.index} is below min.insync.replicas`);
            }
            try {
              const r = await partition.append(records);
              if (!r.duplicate) {
                replication?.appended(name, p.index);
                broker.waiters.notify(name, p.index);
              }
              if (req.acks === -1 && replication !== null) {
                const code = await replication.awaitReplication(name, p.index, r.lastOffset + 1n, req.timeoutMs);
                if (code !== ErrorCode.NONE) return partitionResponse(p.index, code, code === ErrorCode.REQUEST_TIMED_OUT ? `not replicated to the ISR within ${req.timeoutMs} ms` : null);
              }
              return { index: p.index, errorCode: 0, baseOffset: r.baseOffset, logAppendTimeMs: r.logAppendTime, logStartOffset: r.logStartOffset, recordErrors: [], errorMessage: null };
            } catch (err) {
              if (err instanceof RecordValidationError) {
                // KIP-467, as Kafka's ReplicaManager answers a RecordValidationException: the bad records, the message, the log start.
                return {
                  ...partitionResponse(p.index, err.code, err.message),
                  logStartOffset: partition.logStartOffset,
                  recordErrors: err.recordErrors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message })),
                };
              }
              if (err instanceof KafkaError) return partitionResponse(p.index, err.code, err.message);
              ctx.log.error({ err, topic: name, partition: p.index }, 'append failed');
              return partitionResponse(p.index, ErrorCode.KAFKA_STORAGE_ERROR, (err as Error).message);
            }
          }),
        ),
        };
      }),
    );
    if (req.acks === 0) {
      const failed = responses.flatMap((t) => t.partitionResponses.filter((p) => p.errorCode !== 0).map((p) => `${t.name}-${p.index}: ${p.errorCode}`));
      if (failed.length > 0) throw new CloseConnectionError(`acks=0 produce failed (${failed.join(', ')})`);
      return null;
    }
    const nodeEndpoints = leaderEndpoints(broker, leaders);
    return { responses, throttleTimeMs: 0, ...(nodeEndpoints.length === 0 ? {} : { nodeEndpoints }) };
  },
  errorResponse(req, errorCode) {
    // acks=0 expects no response: close the connection as for any failed acks=0 produce.
    if (req.acks === 0) throw new CloseConnectionError(`acks=0 produce failed with error ${errorCode}`);
    return {
      responses: req.topicData.map((t) => ({ name: t.name, topicId: t.topicId, partitionResponses: t.partitionData.map((p) => partitionResponse(p.index, errorCode)) })),
      throttleTimeMs: 0,
    };
  },
};
