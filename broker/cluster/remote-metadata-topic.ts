// The remote log metadata topic of a cluster (Kafka's TopicBasedRemoteLogMetadataManager
// with its producer and consumer): `__remote_log_metadata` is a cluster topic,
// its partitions spread and replicated over the brokers like __consumer_offsets.
// Every broker that holds a replica of a tiered partition reads that
// partition's metadata partition (RemoteLogMetadataTopicPartitioner's hash of
// the topic-id-partition) from the metadata partition's leader, as a consumer
// does (Fetch up to the high watermark), and the user partition's leader
// writes its segment state changes there with a Produce, acks=all. So every
// replica sees the same remote segments, whichever broker uploaded them.
//
// The topic is created on the first write, as Kafka's TBRLMM creates it at
// start: remote.log.metadata.topic.num.partitions partitions and
// remote.log.metadata.topic.replication.factor replicas, capped at the
// registered brokers. Until it exists there is nothing remote: reads are empty.
// A partition without a leader, or a leader that cannot be reached, fails the
// read or write with a retriable error; the RemoteLogManager retries on its
// next run. Requests go over the network even when this broker leads the
// metadata partition (as Kafka's clients do): the leader's produce path
// replicates and its fetch path bounds reads by the high watermark.
import type { Logger } from 'pino';
import type { MetadataTopicLog, MetadataTopicRecord } from '../../metadata/remote-log-metadata/metadata-topic-log.js';
import { REMOTE_LOG_METADATA_TOPIC } from '../../metadata/remote-log-metadata/metadata-topic-log.js';
import { InterBrokerConnections } from './inter-broker-connections.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { apis } from '../protocol/messages/index.js';
import { recordsBuffer } from '../protocol/record-parts.js';
import { buildRecordBatch, decodeRecordBatch, isControl, iterateBatches } from '../protocol/record-batch.js';
import type { InternalTopicSpec } from './coordinators.js';
import type { ClusterView } from './cluster-view.js';

const FETCH_MAX_BYTES = 1 << 20;

export interface ClusterMetadataTopicOptions {
  readonly view: ClusterView;
  /** remote.log.metadata.topic.num.partitions (must match the topic's, if it exists). */
  readonly spec: InternalTopicSpec;
  /** Creates the topic (ClusterTopics.createInternalTopic); TOPIC_ALREADY_EXISTS is fine. */
  readonly createTopic: (spec: InternalTopicSpec) => Promise<void>;
  /** Bound of one Produce or Fetch round trip. */
  readonly requestTimeoutMs: number;
  readonly log: Logger;
}

/** The replication factor to create the topic with: the configured one, capped at the registered brokers (at least 1). */
export function metadataTopicReplicationFactor(configured: number, registeredBrokers: number): number {
  return Math.max(1, Math.min(configured, registeredBrokers));
}

export class ClusterMetadataTopicLog implements MetadataTopicLog {
  readonly partitionCount: number;
  private readonly connections: InterBrokerConnections;
  private creating: Promise<void> | null = null;

  constructor(private readonly o: ClusterMetadataTopicOptions) {
    this.partitionCount = o.spec.numPartitions;
    this.connections = new InterBrokerConnections({
      endpoint: (nodeId) => o.view.endpoint(nodeId),
      clientId: `sediment-rlmm-${o.view.nodeId}`,
      timeoutMs: o.requestTimeoutMs,
      codes: { stopping: ErrorCode.NOT_LEADER_OR_FOLLOWER, unreachable: ErrorCode.LEADER_NOT_AVAILABLE },
    });
  }

  async append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint> {
    if (!this.topicExists()) {
      await this.createTopic();
      throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${REMOTE_LOG_METADATA_TOPIC} is being created`);
    }
    const leader = this.leaderOf(partition);
    const conn = await this.connections.get(leader);
    const records = buildRecordBatch({ records: [{ key, value, timestamp: Date.now() }] });
    let body;
    try {
      ({ body } = await conn.send(
        apis.Produce,
        () => ({ transactionalId: null, acks: -1, timeoutMs: this.o.requestTimeoutMs, topicData: [{ name: REMOTE_LOG_METADATA_TOPIC, topicId: '', partitionData: [{ index: partition, records }] }] }),
        { min: 3, max: 12 },
      ));
    } catch (err) {
      this.connections.drop(leader, conn);
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `Produce to ${REMOTE_LOG_METADATA_TOPIC}-${partition} at node ${leader} failed: ${message(err)}`, { cause: err });
    }
    const answer = body.responses[0]?.partitionResponses[0];
    const code = answer?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    if (code !== ErrorCode.NONE) throw new KafkaError(code, `node ${leader} refused the write to ${REMOTE_LOG_METADATA_TOPIC}-${partition}: ${errorName(code)}`);
    return (answer as { baseOffset: bigint }).baseOffset;
  }

  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    if (!this.topicExists()) return;
    const leader = this.leaderOf(partition);
    let offset = fromOffset < 0n ? 0n : fromOffset;
    // The end as it is when the iteration starts: the first answer's high watermark.
    let end: bigint | undefined;
    for (;;) {
      const conn = await this.connections.get(leader);
      let body;
      try {
        ({ body } = await conn.send(
          apis.Fetch,
          () => ({
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 0,
            maxBytes: FETCH_MAX_BYTES,
            isolationLevel: 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [{ topic: REMOTE_LOG_METADATA_TOPIC, topicId: '', partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: FETCH_MAX_BYTES }] }],
            forgottenTopicsData: [],
            rackId: '',
          }),
          { min: 4, max: 12 },
        ));
      } catch (err) {
        this.connections.drop(leader, conn);
        throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `Fetch of ${REMOTE_LOG_METADATA_TOPIC}-${partition} from node ${leader} failed: ${message(err)}`, { cause: err });
      }
      const d = body.responses[0]?.partitions[0];
      const code = d === undefined ? body.errorCode || ErrorCode.UNKNOWN_SERVER_ERROR : d.errorCode;
      if (d === undefined || (code !== ErrorCode.NONE && code !== ErrorCode.OFFSET_OUT_OF_RANGE)) {
        throw new KafkaError(code, `node ${leader} refused the read of ${REMOTE_LOG_METADATA_TOPIC}-${partition} at ${offset}: ${errorName(code)}`);
      }
      end ??= d.highWatermark;
      if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
        // Below the log start (retention removed old records): continue there; above the end: nothing more.
        if (d.logStartOffset > offset) {
          offset = d.logStartOffset;
          continue;
        }
        return;
      }
      if (offset >= end) return;
      const buf = d.records === null ? null : recordsBuffer(d.records);
      if (buf === null || buf.length === 0) return;
      let next = offset;
      for (const b of iterateBatches(buf)) {
        next = b.header.baseOffset + BigInt(b.header.lastOffsetDelta) + 1n;
        if (isControl(b.header.attributes)) continue;
        for (const r of decodeRecordBatch(buf, b.position).records) {
          if (r.offset < offset || r.offset >= end || r.value === null) continue;
          yield { offset: r.offset, key: r.key, value: r.value };
        }
      }
      if (next <= offset) return;
      offset = next;
      if (offset >= end) return;
    }
  }

  close(): void {
    this.connections.close();
  }

  private topicExists(): boolean {
    const count = this.o.view.partitionCount(REMOTE_LOG_METADATA_TOPIC);
    if (count === undefined) return false;
    if (count !== this.partitionCount) {
      // The partitioner maps over this broker's count: reading another count would look in the wrong partitions.
      throw new KafkaError(
        ErrorCode.INVALID_CONFIG,
        `${REMOTE_LOG_METADATA_TOPIC} has ${count} partitions but remote.log.metadata.topic.num.partitions is ${this.partitionCount} on this broker`,
      );
    }
    return true;
  }

  private createTopic(): Promise<void> {
    this.creating ??= (async () => {
      const spec = { ...this.o.spec, replicationFactor: metadataTopicReplicationFactor(this.o.spec.replicationFactor, this.o.view.brokers().length) };
      this.o.log.info({ topic: spec.name, partitions: spec.numPartitions, replicationFactor: spec.replicationFactor }, 'creating the remote log metadata topic');
      try {
        await this.o.createTopic(spec);
      } catch (err) {
        if (!(err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) {
          this.o.log.warn({ err: message(err) }, 'could not create the remote log metadata topic yet; the next write tries again');
        }
      }
    })().finally(() => {
      this.creating = null;
    });
    return this.creating;
  }

  private leaderOf(partition: number): number {
    const state = this.o.view.partition(REMOTE_LOG_METADATA_TOPIC, partition);
    if (state === undefined || state.leader < 0) {
      throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${REMOTE_LOG_METADATA_TOPIC}-${partition} has no leader`);
    }
    return state.leader;
  }

}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
