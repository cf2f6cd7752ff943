// The broker keys Sediment accepts in server.properties, with Kafka's names,
// types, defaults and meanings (KafkaConfig, ServerLogConfigs, RemoteLogManagerConfig,
// GroupCoordinatorConfig). Where Sediment's default differs from Kafka's, the doc
// says so. Keys Kafka has but that change nothing on a single node are accepted
// so that an existing server.properties still starts, and documented as such.
import {
  atLeast,
  between,
  compressionTypeValidator,
  gzipLevelValidator,
  LONG_MAX_NUMBER,
  INT_MAX,
  listOf,
  nonDuplicateList,
  oneOf,
  validator,
  type BrokerConfigDef,
  type ConfigType,
  type ConfigValue,
  type Importance,
  type Validator,
} from './config-schema.js';
import { parseEtcdConnect } from './cluster/etcd-connect.js';
import { SHARE_CONFIG_DEFS } from './share-config-defs.js';

const HOUR_MS = 3_600_000;
const WEEK_HOURS = 168;

function broker(
  name: string,
  type: ConfigType,
  defaultValue: ConfigValue,
  importance: Importance,
  doc: string,
  options: { validator?: Validator; defaultDoc?: string } = {},
): BrokerConfigDef {
  const def: BrokerConfigDef = { name, type, default: defaultValue, importance, doc, scope: 'broker' };
  return { ...def, ...(options.validator ? { validator: options.validator } : {}), ...(options.defaultDoc ? { defaultDoc: options.defaultDoc } : {}) };
}

const NO_EFFECT = ' Accepted for compatibility with Kafka configuration files; it has no effect in Sediment.';

const plaintextListeners = validator('list of PLAINTEXT://host:port', (value) => {
  if (!Array.isArray(value)) return undefined;
  for (const item of value) {
    const problem = listenerProblem(item, 'PLAINTEXT');
    if (problem) return problem;
  }
  return undefined;
});

const httpListeners = validator('list of http://host:port', (value) => {
  if (!Array.isArray(value)) return undefined;
  for (const item of value) {
    const problem = listenerProblem(item, 'http');
    if (problem) return problem;
  }
  return undefined;
});

/** `NAME://host:port`: host may be empty (all interfaces) or a bracketed IPv6 literal; port 0..65535. */
export function listenerProblem(listener: string, expectedScheme: string): string | undefined {
  const m = /^([A-Za-z0-9_]+):\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]*):(\d+)$/.exec(listener);
  if (!m) return `Listener '${listener}' is not of the form ${expectedScheme}://host:port`;
  const [, scheme, , port] = m;
  if (expectedScheme === 'http' ? scheme !== 'http' : scheme?.toUpperCase() !== expectedScheme) {
    return expectedScheme === 'PLAINTEXT'
      ? `Listener '${listener}': Sediment only supports the PLAINTEXT security protocol`
      : `Listener '${listener}': the scheme must be ${expectedScheme}`;
  }
  if (Number(port) > 65535) return `Listener '${listener}': port ${port} is out of range`;
  return undefined;
}

/** Kafka's rack-aware ReplicaSelector (KIP-392), the one replica.selector.class Sediment accepts. */
export const RACK_AWARE_REPLICA_SELECTOR = 'org.apache.kafka.common.replica.RackAwareReplicaSelector';

export const BROKER_CONFIG_DEFS: readonly BrokerConfigDef[] = [
  // ---- identity and network ----
  broker('node.id', 'int', 1, 'high',
    'The node ID of this broker. Sediment default: 1 (Kafka requires it to be set). It is recorded in meta.properties in every log directory and must match it on later starts.',
    { validator: atLeast(0) }),
  broker('broker.id', 'int', -1, 'high',
    'Legacy name of the broker ID. If set, it must equal node.id; if node.id is not set, its value is used as node.id.',
    { validator: atLeast(-1) }),
  broker('cluster.id', 'string', null, 'high',
    'The cluster ID. Sediment generates one the first time it formats a log directory and stores it in meta.properties, as kafka-storage format does; if set here, it must match the stored one.',
    { defaultDoc: 'generated on first start, stored in meta.properties' }),
  broker('listeners', 'list', ['PLAINTEXT://127.0.0.1:9092'], 'high',
    'Comma-separated list of URIs the broker listens on for the Kafka protocol, as NAME://host:port. Sediment supports PLAINTEXT only. An empty host binds all interfaces; port 0 picks a free port. Sediment default: PLAINTEXT://127.0.0.1:9092 (Kafka: PLAINTEXT://:9092).',
    { validator: plaintextListeners }),
  broker('advertised.listeners', 'list', null, 'high',
    'Listeners published to clients in Metadata responses, if different from listeners. If not set, the value of listeners is used. Unlike listeners, 0.0.0.0 is not a valid advertised host.',
    { validator: plaintextListeners, defaultDoc: 'the value of listeners' }),
  broker('listener.security.protocol.map', 'string', 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL', 'low',
    'Map between listener names and security protocols.' + NO_EFFECT + ' Only PLAINTEXT listeners can be declared.'),
  broker('http.listeners', 'list', ['http://127.0.0.1:9644'], 'medium',
    'Sediment: comma-separated list of http://host:port addresses serving Prometheus metrics and the admin/health endpoints. An empty list disables the HTTP server.',
    { validator: httpListeners }),
  broker('socket.request.max.bytes', 'int', 104857600, 'high',
    'The maximum number of bytes in a socket request. A larger size prefix is refused before the body is read and the connection is closed.',
    { validator: atLeast(1) }),
  broker('max.request.partition.size.limit', 'int', 2000, 'low',
    'The maximum number of partitions served in one request: DescribeTopicPartitions answers at most this many (or the request\'s ResponsePartitionLimit, if smaller) and returns a cursor to the rest.',
    { validator: atLeast(1) }),
  broker('socket.send.buffer.bytes', 'int', 102400, 'high',
    'The SO_SNDBUF buffer of the socket server sockets. If the value is -1, the OS default will be used.'),
  broker('socket.receive.buffer.bytes', 'int', 102400, 'high',
    'The SO_RCVBUF buffer of the socket server sockets. If the value is -1, the OS default will be used.'),
  broker('num.network.threads', 'int', 3, 'high',
    'The number of threads that the server uses for receiving requests from the network and sending responses to the network.' + NO_EFFECT,
    { validator: atLeast(1) }),
  broker('num.io.threads', 'int', 8, 'high',
    'The number of threads that the server uses for processing requests.' + NO_EFFECT,
    { validator: atLeast(1) }),
  broker('max.incremental.fetch.session.cache.slots', 'int', 1000, 'medium',
    'The maximum number of incremental fetch sessions (KIP-227) the broker keeps. When all slots are taken, a new session may evict one unused for over 2 minutes, or the smallest one older than 2 minutes if the new session has more partitions; otherwise the fetch is answered without a session. 0 disables fetch sessions: every fetch is answered sessionless.',
    { validator: atLeast(0) }),

  // ---- log directories and topics ----
  broker('log.dir', 'string', './sediment-data', 'high',
    'The directory in which the log data is kept (supplemental for log.dirs). Sediment default: ./sediment-data (Kafka: /tmp/kafka-logs).'),
  broker('log.dirs', 'list', null, 'high',
    'A comma-separated list of the directories where the log data is stored. If not set, the value in log.dir is used. Broker metadata (topics, topic ids, configs) lives in the first one.',
    { validator: nonDuplicateList(false), defaultDoc: 'the value of log.dir' }),
  broker('num.partitions', 'int', 1, 'medium',
    'The default number of log partitions per topic, used when a topic is auto-created or created with -1 partitions.',
    { validator: atLeast(1) }),
  broker('default.replication.factor', 'int', 1, 'medium',
    'The default replication factor for topics created without one (CreateTopics with -1, auto-creation). A single broker can only hold 1; in a cluster (etcd.connect) up to the live brokers.',
    { validator: atLeast(1) }),
  broker('auto.create.topics.enable', 'boolean', true, 'high',
    'Enable auto creation of a topic on the server when a client asks Metadata for a topic that does not exist.'),
  broker('delete.topic.enable', 'boolean', true, 'high',
    'Enables deleting topics. Deleting a topic through DeleteTopics has no effect if this is off (TOPIC_DELETION_DISABLED).'),
  broker('num.recovery.threads.per.data.dir', 'int', 2, 'high',
    'The number of threads per data directory to be used for log recovery at startup and flushing at shutdown.' + NO_EFFECT,
    { validator: atLeast(1) }),

  // ---- log segments, retention, flush (topic defaults) ----
  broker('log.segment.bytes', 'int', 1073741824, 'high',
    'The maximum size of a single log segment file. Default for the topic config segment.bytes.',
    { validator: atLeast(1024 * 1024) }),
  broker('log.roll.ms', 'long', null, 'high',
    'The maximum time before a new log segment is rolled out (in milliseconds). If not set, the value in log.roll.hours is used. Default for segment.ms.',
    { validator: atLeast(1), defaultDoc: 'log.roll.hours' }),
  broker('log.roll.hours', 'int', WEEK_HOURS, 'high',
    'The maximum time before a new log segment is rolled out (in hours), secondary to log.roll.ms.',
    { validator: atLeast(1) }),
  broker('log.roll.jitter.ms', 'long', null, 'high',
    'The maximum jitter to subtract from the roll time (in milliseconds). If not set, the value in log.roll.jitter.hours is used. Default for segment.jitter.ms.',
    { validator: atLeast(0), defaultDoc: 'log.roll.jitter.hours' }),
  broker('log.roll.jitter.hours', 'int', 0, 'high',
    'The maximum jitter to subtract from the roll time (in hours), secondary to log.roll.jitter.ms.',
    { validator: atLeast(0) }),
  broker('log.retention.ms', 'long', null, 'high',
    'The number of milliseconds to keep a log segment before deleting it. If not set, log.retention.minutes is used. If set to -1 (or any negative value), no time limit is applied. Default for retention.ms.',
    { defaultDoc: 'log.retention.minutes' }),
  broker('log.retention.minutes', 'int', null, 'high',
    'The number of minutes to keep a log segment before deleting it, secondary to log.retention.ms. If not set, log.retention.hours is used.',
    { defaultDoc: 'log.retention.hours' }),
  broker('log.retention.hours', 'int', WEEK_HOURS, 'high',
    'The number of hours to keep a log segment before deleting it, tertiary to log.retention.ms.'),
  broker('log.retention.bytes', 'long', -1, 'high',
    'The maximum size of a partition (local and remote tiers together) before old segments are deleted; -1 means no size limit. Default for retention.bytes.'),
  broker('log.retention.check.interval.ms', 'long', 300000, 'medium',
    'The frequency in milliseconds with which the retention task checks whether any log is eligible for deletion.',
    { validator: atLeast(1) }),
  broker('log.cleanup.policy', 'list', ['delete'], 'medium',
    'The default cleanup policy for segments beyond the retention window, a comma separated list of delete and compact. Default for cleanup.policy.',
    { validator: listOf('compact', 'delete') }),
  broker('log.index.size.max.bytes', 'int', 10485760, 'medium',
    'The maximum size in bytes of the offset index of a segment. Default for segment.index.bytes.',
    { validator: atLeast(4) }),
  broker('log.index.interval.bytes', 'int', 4096, 'medium',
    'The interval in bytes of log data with which an entry is added to the offset and time indexes. Default for index.interval.bytes.',
    { validator: atLeast(0) }),
  broker('log.flush.interval.messages', 'long', LONG_MAX_NUMBER, 'high',
    'The number of messages accumulated on a log partition before the log is fsynced. Default for flush.messages.',
    { validator: atLeast(1) }),
  broker('log.flush.interval.ms', 'long', null, 'high',
    'The maximum time in ms that a message in any topic is kept unflushed before an fsync. If not set, log.flush.scheduler.interval.ms is used. Default for flush.ms.',
    { defaultDoc: 'log.flush.scheduler.interval.ms' }),
  broker('log.flush.scheduler.interval.ms', 'long', LONG_MAX_NUMBER, 'high',
    'The frequency in ms with which the log flusher checks whether any log needs to be flushed to disk.'),
  broker('log.flush.offset.checkpoint.interval.ms', 'int', 60000, 'high',
    'The frequency with which the recovery-point checkpoint (the last flushed offset of each partition) is written.',
    { validator: atLeast(0) }),
  broker('log.flush.start.offset.checkpoint.interval.ms', 'int', 60000, 'high',
    'The frequency with which the log-start-offset checkpoint is written.',
    { validator: atLeast(0) }),
  broker('log.segment.delete.delay.ms', 'long', 60000, 'high',
    'The amount of time to wait before deleting a file from the filesystem. Default for file.delete.delay.ms.',
    { validator: atLeast(0) }),
  broker('log.preallocate', 'boolean', false, 'medium',
    'Whether to preallocate the file when a new segment is created. Default for preallocate.' + NO_EFFECT),
  broker('log.message.timestamp.type', 'string', 'CreateTime', 'medium',
    'Whether the timestamp in a record is the producer\'s create time or the broker\'s log append time: CreateTime or LogAppendTime. Default for message.timestamp.type.',
    { validator: oneOf('CreateTime', 'LogAppendTime') }),
  broker('log.message.timestamp.before.max.ms', 'long', LONG_MAX_NUMBER, 'medium',
    'How far in the past (relative to the broker clock) a record timestamp may be when message.timestamp.type=CreateTime; a batch beyond it is refused. Default for message.timestamp.before.max.ms.',
    { validator: atLeast(0) }),
  broker('log.message.timestamp.after.max.ms', 'long', 3600000, 'medium',
    'How far in the future (relative to the broker clock) a record timestamp may be when message.timestamp.type=CreateTime; a batch beyond it is refused. Default for message.timestamp.after.max.ms.',
    { validator: atLeast(0) }),
  broker('message.max.bytes', 'int', 1048588, 'high',
    'The largest record batch size allowed, after compression. Default for the topic config max.message.bytes.',
    { validator: atLeast(0) }),
  broker('min.insync.replicas', 'int', 1, 'high',
    'The minimum number of replicas that must acknowledge an acks=all write. Default for min.insync.replicas; on a single broker only 1 can be satisfied.',
    { validator: atLeast(1) }),
  broker('unclean.leader.election.enable', 'boolean', false, 'high',
    'Whether replicas not in the ISR may be elected leader as a last resort (in a cluster, etcd.connect; a single broker always leads).'),
  // ---- replication (a cluster, etcd.connect; docs/replication.md) ----
  broker('num.replica.fetchers', 'int', 1, 'high',
    'Fetchers per source broker: each follower partition is fetched by one of them (chosen by a hash of the partition), over one connection each.',
    { validator: atLeast(1) }),
  broker('replica.selector.class', 'string', null, 'medium',
    'The ReplicaSelector a leader uses to send a consumer to its closest replica (KIP-392, by the Fetch v11+ rack_id, the client.rack of the client): the leader answers preferred_read_replica and the client fetches from that follower, which serves it up to its own high watermark. Unset: the leader serves every consumer (followers still serve v11+ consumer fetches sent to them). Accepted: org.apache.kafka.common.replica.RackAwareReplicaSelector (the leader if it is in the client rack, else the in-sync replica there whose log holds the fetch offset, largest log end offset first). See docs/replication.md.',
    { validator: validator(`null or ${RACK_AWARE_REPLICA_SELECTOR}`, (value) =>
      value === null || value === '' || value === RACK_AWARE_REPLICA_SELECTOR ? undefined : `Class ${String(value)} cannot be found`) }),
  broker('replica.fetch.max.bytes', 'int', 1048576, 'medium',
    'Bytes a replica fetch asks per partition (at least one batch is returned even when larger).',
    { validator: atLeast(0) }),
  broker('replica.fetch.response.max.bytes', 'int', 10485760, 'medium',
    'Bytes a replica fetch asks in total (at least one batch is returned even when larger).',
    { validator: atLeast(0) }),
  broker('replica.fetch.wait.max.ms', 'int', 500, 'medium',
    'How long the leader holds a replica fetch that has fewer than replica.fetch.min.bytes to return.',
    { validator: atLeast(0) }),
  broker('replica.fetch.min.bytes', 'int', 1, 'medium',
    'Bytes a replica fetch waits for (up to replica.fetch.wait.max.ms).',
    { validator: atLeast(1) }),
  broker('replica.fetch.backoff.ms', 'int', 1000, 'medium',
    'How long a follower waits after a failed replica fetch (connection or partition error) before fetching again.',
    { validator: atLeast(0) }),
  broker('follower.fetch.last.tiered.offset.enable', 'boolean', false, 'medium',
    'KIP-1023: a follower whose log of a tiered (remote.storage.enable), non-compacted topic is empty starts at the leader\'s earliest offset not yet uploaded (ListOffsets -6), with its leader-epoch history and producer state from the remote tier, instead of copying the leader\'s whole local log. Dynamic (per broker or cluster default): a change applies to the next empty replica a fetcher takes on, not to one already placed.'),
  broker('replica.lag.time.max.ms', 'long', 30000, 'high',
    'A follower that has not caught up to the leader\'s log end for this long leaves the ISR; the leader checks every half of it.',
    { validator: atLeast(1) }),
  broker('replica.high.watermark.checkpoint.interval.ms', 'long', 5000, 'high',
    'How often each log dir\'s replication-offset-checkpoint (the high watermarks of its replicated partitions) is written; also at shutdown.',
    { validator: atLeast(1) }),
  broker('replica.socket.timeout.ms', 'int', 30000, 'high',
    'Timeout of a replica fetch request on its broker-to-broker connection (and of connecting); must exceed replica.fetch.wait.max.ms.',
    { validator: atLeast(1) }),
  broker('compression.type', 'string', 'producer', 'high',
    'The default final compression type of topics (topic config compression.type): uncompressed, gzip, snappy, lz4, zstd, or producer to keep the codec each producer chose. A batch in another codec is rebuilt in this one on append; a batch already in it is stored as it came.',
    { validator: compressionTypeValidator }),
  broker('compression.gzip.level', 'int', -1, 'medium',
    'The compression level to use if compression.type is set to gzip (-1: the zlib default, 6). Default for the topic config compression.gzip.level.',
    { validator: gzipLevelValidator }),
  broker('compression.lz4.level', 'int', 9, 'medium',
    'The compression level to use if compression.type is set to lz4. Accepted and validated as in Kafka; Sediment\'s LZ4 encoder has one level, so it has no effect.',
    { validator: between(1, 17) }),
  broker('compression.zstd.level', 'int', 3, 'medium',
    'The compression level to use if compression.type is set to zstd. Default for the topic config compression.zstd.level.',
    { validator: between(-131072, 22) }),

  // ---- log cleaner (compaction) ----
  broker('log.cleaner.enable', 'boolean', true, 'medium',
    'Enable the log cleaner process for topics with cleanup.policy=compact.'),
  broker('log.cleaner.threads', 'int', 1, 'medium',
    'The number of background threads to use for log cleaning.' + NO_EFFECT,
    { validator: atLeast(0) }),
  broker('log.cleaner.backoff.ms', 'long', 15000, 'medium',
    'The amount of time to sleep when there are no logs to clean.',
    { validator: atLeast(0) }),
  broker('log.cleaner.dedupe.buffer.size', 'long', 134217728, 'medium',
    'The total memory used for log deduplication across all cleaner threads.'),
  broker('log.cleaner.io.buffer.size', 'int', 524288, 'medium',
    'The total memory used for log cleaner I/O buffers across all cleaner threads.',
    { validator: atLeast(0) }),
  broker('log.cleaner.delete.retention.ms', 'long', 86400000, 'medium',
    'The amount of time to retain tombstone markers for log compacted topics. Default for delete.retention.ms.',
    { validator: atLeast(0) }),
  broker('log.cleaner.min.compaction.lag.ms', 'long', 0, 'medium',
    'The minimum time a record will remain uncompacted in the log. Default for min.compaction.lag.ms.',
    { validator: atLeast(0) }),
  broker('log.cleaner.max.compaction.lag.ms', 'long', LONG_MAX_NUMBER, 'medium',
    'The maximum time a record will remain ineligible for compaction in the log. Default for max.compaction.lag.ms.',
    { validator: atLeast(1) }),
  broker('log.cleaner.min.cleanable.ratio', 'double', 0.5, 'medium',
    'The minimum ratio of dirty log to total log for a log to be eligible for cleaning. Default for min.cleanable.dirty.ratio.',
    { validator: between(0, 1) }),

  // ---- internal topics and groups ----
  broker('offsets.topic.num.partitions', 'int', 50, 'high',
    'The number of partitions of the offset commit topic __consumer_offsets (should not change after the first start).',
    { validator: atLeast(1) }),
  broker('offsets.topic.replication.factor', 'short', 3, 'high',
    'The replication factor of the offsets topic in a cluster; Sediment creates it with at most as many replicas as there are registered brokers (Kafka refuses to create it with fewer brokers). A single broker keeps one copy.',
    { validator: atLeast(1) }),
  broker('offsets.topic.segment.bytes', 'int', 104857600, 'high',
    'The segment size of the offsets topic, kept small for faster log compaction and cache loads.',
    { validator: atLeast(1) }),
  broker('offsets.retention.minutes', 'int', 10080, 'high',
    'For subscribed consumers, committed offsets are deleted after the group loses all its consumers and this period elapses; for standalone consumers (manual assignment), after this period since the last commit.',
    { validator: atLeast(1) }),
  broker('offsets.retention.check.interval.ms', 'long', 600000, 'high',
    'The frequency at which to check for stale offsets.',
    { validator: atLeast(1) }),
  broker('offsets.commit.timeout.ms', 'int', 5000, 'high',
    'In a cluster, a write of the group coordinator to __consumer_offsets (an offset commit, a join, a sync...) is answered once every replica in the ISR has it (as acks=all), or after this timeout with COORDINATOR_NOT_AVAILABLE, as Kafka remaps the write\'s REQUEST_TIMED_OUT. A single broker answers once the append is on its log.',
    { validator: atLeast(1) }),
  broker('group.initial.rebalance.delay.ms', 'int', 3000, 'medium',
    'The time the group coordinator waits for more consumers to join a new group before performing the first rebalance.'),
  broker('group.min.session.timeout.ms', 'int', 6000, 'medium',
    'The minimum allowed session timeout for registered consumers.'),
  broker('group.max.session.timeout.ms', 'int', 1800000, 'medium',
    'The maximum allowed session timeout for registered consumers.'),
  broker('group.max.size', 'int', INT_MAX, 'medium',
    'The maximum number of consumers that a single consumer group can accommodate.',
    { validator: atLeast(1) }),
  broker('group.consumer.session.timeout.ms', 'int', 45000, 'medium',
    'The timeout to detect client failures when using the consumer group protocol (KIP-848).',
    { validator: atLeast(1) }),
  broker('group.consumer.min.session.timeout.ms', 'int', 45000, 'medium',
    'The minimum allowed session timeout for consumer group protocol members.',
    { validator: atLeast(1) }),
  broker('group.consumer.max.session.timeout.ms', 'int', 60000, 'medium',
    'The maximum allowed session timeout for consumer group protocol members.',
    { validator: atLeast(1) }),
  broker('group.consumer.heartbeat.interval.ms', 'int', 5000, 'medium',
    'The heartbeat interval given to the members of a consumer group.',
    { validator: atLeast(1) }),
  broker('group.consumer.min.heartbeat.interval.ms', 'int', 5000, 'medium',
    'The minimum heartbeat interval for consumer group protocol members.',
    { validator: atLeast(1) }),
  broker('group.consumer.max.heartbeat.interval.ms', 'int', 15000, 'medium',
    'The maximum heartbeat interval for consumer group protocol members.',
    { validator: atLeast(1) }),
  broker('group.consumer.assignors', 'list', ['uniform', 'range'], 'medium',
    'The server-side assignors, by name (uniform, range) or Kafka class name; the first is the default of groups whose members name none.'),
  broker('group.consumer.max.size', 'int', INT_MAX, 'medium',
    'The maximum number of members a consumer group (KIP-848) can accommodate.',
    { validator: atLeast(1) }),
  broker('group.consumer.migration.policy', 'string', 'bidirectional', 'medium',
    'Whether groups with members may convert online between the classic and the consumer protocol: bidirectional (both), upgrade (classic to consumer only), downgrade (consumer to classic only) or disabled. Empty groups convert either way whatever the policy.',
    { validator: oneOf('bidirectional', 'upgrade', 'downgrade', 'disabled') }),
  broker('transaction.state.log.num.partitions', 'int', 50, 'high',
    'The number of partitions of the transaction topic __transaction_state.',
    { validator: atLeast(1) }),
  broker('transaction.state.log.replication.factor', 'short', 3, 'high',
    'The replication factor of the transaction topic in a cluster; Sediment creates it with at most as many replicas as there are registered brokers (Kafka refuses to create it with fewer brokers). A single broker keeps one copy.',
    { validator: atLeast(1) }),
  broker('transaction.state.log.min.isr', 'int', 2, 'high',
    'The min.insync.replicas of the transaction topic (at most its replication factor when that is capped).',
    { validator: atLeast(1) }),
  broker('transaction.max.timeout.ms', 'int', 900000, 'high',
    'The maximum allowed transaction timeout; a longer timeout in InitProducerId is refused.',
    { validator: atLeast(1) }),
  broker('transactional.id.expiration.ms', 'int', 604800000, 'high',
    'The time the transaction coordinator waits without a transaction status update before expiring a transactional id.',
    { validator: atLeast(1) }),
  broker('transaction.abort.timed.out.transaction.cleanup.interval.ms', 'int', 10000, 'low',
    'The interval at which to roll back transactions that have timed out.',
    { validator: atLeast(1) }),
  broker('transaction.remove.expired.transaction.cleanup.interval.ms', 'int', 3600000, 'low',
    'The interval at which to remove transactions that have expired due to transactional.id.expiration.ms passing.',
    { validator: atLeast(1) }),
  broker('transaction.state.log.segment.bytes', 'int', 104857600, 'high',
    'The transaction topic segment bytes should be kept relatively small in order to facilitate faster log compaction and cache loads.',
    { validator: atLeast(1) }),
  broker('producer.id.expiration.ms', 'int', 86400000, 'low',
    'The time a partition leader waits before expiring producer ids that have had no activity.',
    { validator: atLeast(1) }),

  // ---- tiered storage ----
  broker('remote.log.storage.system.enable', 'boolean', true, 'medium',
    'Whether tiered storage is enabled on the broker. Sediment default: true (Kafka: false); new topics then default to remote.storage.enable=true.'),
  broker('remote.log.storage.url', 'string', null, 'medium',
    'Sediment: where remote segments go: file:///path (a directory as the object store), s3://bucket/prefix (S3 or MinIO, tuned with rsm.config.* keys) or memory:// (tests).',
    { defaultDoc: 'file://<first log dir>/remote', validator: validator('file://, s3:// or memory:// URL', storageUrlProblem) }),
  broker('remote.log.manager.task.interval.ms', 'long', 30000, 'medium',
    'Interval at which the remote log manager runs its copy and expiration tasks.',
    { validator: atLeast(1) }),
  broker('remote.log.manager.copy.max.bytes.per.second', 'long', LONG_MAX_NUMBER, 'medium',
    'The maximum number of bytes per second copied from local storage to remote storage.',
    { validator: atLeast(1) }),
  broker('remote.log.manager.fetch.max.bytes.per.second', 'long', LONG_MAX_NUMBER, 'medium',
    'The maximum number of bytes per second read from remote storage to serve fetches.',
    { validator: atLeast(1) }),
  broker('remote.fetch.max.wait.ms', 'int', 500, 'medium',
    'The maximum time a fetch waits for a remote read; a partition whose remote read takes longer is answered empty while the others answer.',
    { validator: atLeast(1) }),
  broker('remote.log.index.file.cache.total.size.bytes', 'long', 1073741824, 'low',
    'The total size of the space allocated to the cache of remote segment indexes.',
    { validator: atLeast(1) }),
  broker('remote.log.reader.threads', 'int', 10, 'medium',
    'Maximum number of remote reads in progress at once.',
    { validator: atLeast(1) }),
  broker('remote.log.reader.max.pending.tasks', 'int', 100, 'medium',
    'Maximum number of remote reads queued; beyond it a fetch gets a retriable error for the partition.',
    { validator: atLeast(1) }),
  broker('log.local.retention.ms', 'long', -2, 'medium',
    'The time a local log segment is kept once it is in remote storage; -2 means the value of log.retention.ms, -1 means unlimited. Default for local.retention.ms.',
    { validator: atLeast(-2) }),
  broker('log.local.retention.bytes', 'long', -2, 'medium',
    'The local tier size bound of a partition once its segments are in remote storage; -2 means the value of log.retention.bytes, -1 means unlimited. Default for local.retention.bytes.',
    { validator: atLeast(-2) }),
  broker('remote.log.metadata.topic.num.partitions', 'int', 50, 'medium',
    'The number of partitions of the __remote_log_metadata topic (Kafka key: rlmm.config.remote.log.metadata.topic.num.partitions, also accepted).',
    { validator: atLeast(1) }),
  broker('remote.log.metadata.topic.replication.factor', 'short', 3, 'medium',
    'The replication factor of the __remote_log_metadata topic of a cluster (etcd.connect), capped at the registered brokers when the topic is created. A single broker keeps its own topic with 1 replica.',
    { validator: atLeast(1) }),
  broker('remote.log.metadata.topic.retention.ms', 'long', -1, 'medium',
    'The retention of the __remote_log_metadata topic; -1 (unlimited) keeps every state change so the index can be rebuilt.'),

  // ---- cluster metadata in etcd (docs/cluster-metadata.md) ----
  broker('broker.rack', 'string', null, 'medium',
    'Rack of the broker, registered in the cluster metadata (etcd.connect) for rack-aware replica placement and the rack-aware replica selector (replica.selector.class).'),
  broker('etcd.connect', 'string', null, 'high',
    'Sediment: the etcd cluster that holds the cluster metadata, as host:port[,host:port...][/prefix] (the zookeeper.connect convention; the prefix defaults to /sediment, / is the root). Unset: a single broker with its metadata in its log dirs.',
    { validator: validator('host:port[,host:port...][/prefix]', etcdConnectProblem) }),
  broker('etcd.connection.timeout.ms', 'int', 18000, 'high',
    'Sediment: how long start-up keeps retrying an unreachable etcd (logging the endpoints) before the broker exits with an error (after zookeeper.connection.timeout.ms).',
    { validator: atLeast(1) }),
  broker('etcd.request.timeout.ms', 'int', 5000, 'medium',
    'Sediment: the deadline of each etcd call; a call that misses it fails with a retriable error (REQUEST_TIMED_OUT).',
    { validator: atLeast(1) }),
  broker('etcd.ssl.client.enable', 'boolean', false, 'medium',
    'Sediment: connect to etcd over TLS (https endpoints), as zookeeper.ssl.client.enable.'),
  broker('etcd.ssl.truststore.location', 'string', null, 'medium',
    'Sediment: PEM file of the CA certificates that sign the etcd servers\' certificates (Kafka\'s ssl.truststore.type=PEM). Needed with etcd.ssl.client.enable=true.'),
  broker('etcd.ssl.keystore.location', 'string', null, 'medium',
    'Sediment: PEM file holding this broker\'s client private key (unencrypted) and certificate chain, for etcd servers that require client certificates (--client-cert-auth).'),
  broker('etcd.username', 'string', null, 'medium',
    'Sediment: the etcd user (etcd authentication); with etcd.password.'),
  broker('etcd.password', 'password', null, 'medium',
    'Sediment: the password of etcd.username.'),
  broker('broker.session.timeout.ms', 'int', 9000, 'medium',
    'The length of time a broker keeps its registration without a heartbeat: the time to live of its etcd lease (rounded up to whole seconds at etcd). A broker that cannot renew it within this time counts its session as lost (the event on which it stops acting as leader or coordinator) before etcd can expire it.',
    { validator: atLeast(1000) }),
  broker('broker.heartbeat.interval.ms', 'int', 2000, 'medium',
    'The length of time between broker heartbeats: how often the broker renews its etcd lease.',
    { validator: atLeast(1) }),
  broker('auto.leader.rebalance.enable', 'boolean', true, 'high',
    'Enables auto leader balancing: the controller moves leadership back to the preferred (first) replica of each partition when it is live and in sync, every leader.imbalance.check.interval.seconds (in a cluster, etcd.connect).'),
  broker('leader.imbalance.check.interval.seconds', 'long', 300, 'high',
    'The frequency with which the partition rebalance check is triggered by the controller.',
    { validator: atLeast(1) }),
  broker('controlled.shutdown.enable', 'boolean', true, 'medium',
    'Enables controlled shutdown (in a cluster, etcd.connect): on SIGTERM the broker marks its registration as shutting down, the controller moves leadership of its partitions to other in-sync replicas where there are any and removes it from ISRs, and the broker waits for that before it stops.'),
  broker('controlled.shutdown.max.retries', 'int', 3, 'medium',
    'How many times the broker waits controlled.shutdown.retry.backoff.ms for the controller to move its leadership before stopping anyway.',
    { validator: atLeast(1) }),
  broker('controlled.shutdown.retry.backoff.ms', 'long', 5000, 'medium',
    'How long each controlled shutdown attempt waits for the controller.',
    { validator: atLeast(0) }),
  ...SHARE_CONFIG_DEFS,
];

function etcdConnectProblem(value: ConfigValue): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    parseEtcdConnect(value);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

function storageUrlProblem(value: ConfigValue): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (/^memory:\/\/.*$/.test(value)) return undefined;
  if (/^file:\/\/\/?.+/.test(value)) return undefined;
  if (/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(value)) return undefined;
  return 'expected file:///path, s3://bucket[/prefix] or memory://';
}

/** Prefix of the pass-through keys handed to the remote storage backend. */
export const RSM_CONFIG_PREFIX = 'rsm.config.';
/** Kafka's prefix for remote log metadata manager keys; stripped to Sediment's plain names. */
export const RLMM_CONFIG_PREFIX = 'rlmm.config.';

export const HOURS_TO_MS = HOUR_MS;
