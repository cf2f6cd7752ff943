// The "Kafka 4.3 protocol versions" section of docs/compatibility.md: which API
// versions of Apache Kafka 4.3.1's definitions Sediment advertises, and why the
// rest are not. Static text (it changes with the handlers, not with a run); the
// matrix renders it into the page after the results. Keep it in step with
// broker/handlers/ (the registry there is the one source of ApiVersions).
// kafka43NotAdvertised and kafka43Differences are checked against the ApiVersions
// answer captured from a real Kafka 4.3.1 broker
// (test/broker/protocol/golden/kafka-parity.test.ts).

export interface NotServedApi {
  readonly apiKey: number;
  readonly name: string;
  /** Kafka 4.3.1's advertised range. */
  readonly kafka: string;
  readonly why: string;
}

/** APIs a Kafka 4.3.1 broker advertises (as captured) that Sediment does not. */
export const kafka43NotAdvertised: readonly NotServedApi[] = [
  { apiKey: 17, name: 'SaslHandshake', kafka: '0-1', why: 'no SASL: listeners are PLAINTEXT only (no SSL either).' },
  { apiKey: 36, name: 'SaslAuthenticate', kafka: '0-2', why: 'no SASL, as above.' },
  { apiKey: 29, name: 'DescribeAcls', kafka: '1-3', why: 'no authorizer: every client may do everything; authorized-operations fields answer what Kafka answers without an authorizer.' },
  { apiKey: 30, name: 'CreateAcls', kafka: '1-3', why: 'no authorizer, as above.' },
  { apiKey: 31, name: 'DeleteAcls', kafka: '1-3', why: 'no authorizer, as above.' },
  { apiKey: 34, name: 'AlterReplicaLogDirs', kafka: '1-2', why: 'one log directory per broker: nothing to move a replica between (DescribeLogDirs is served).' },
  { apiKey: 38, name: 'CreateDelegationToken', kafka: '1-3', why: 'delegation tokens authenticate over SASL, which is not served.' },
  { apiKey: 39, name: 'RenewDelegationToken', kafka: '1-2', why: 'delegation tokens, as above.' },
  { apiKey: 40, name: 'ExpireDelegationToken', kafka: '1-2', why: 'delegation tokens, as above.' },
  { apiKey: 41, name: 'DescribeDelegationToken', kafka: '1-3', why: 'delegation tokens, as above.' },
  { apiKey: 43, name: 'ElectLeaders', kafka: '0-2', why: "the cluster controller elects leaders itself (from the ISR, or unclean when the topic allows it, replication.md); preferred or unclean election on request (`kafka-leader-election.sh`) is not served." },
  { apiKey: 48, name: 'DescribeClientQuotas', kafka: '0-1', why: 'no client quotas: throttleTimeMs is always 0 (replication throttles are topic/broker configs, replication.md).' },
  { apiKey: 49, name: 'AlterClientQuotas', kafka: '0-1', why: 'no client quotas, as above.' },
  { apiKey: 50, name: 'DescribeUserScramCredentials', kafka: '0', why: 'SCRAM credentials are for SASL, which is not served.' },
  { apiKey: 51, name: 'AlterUserScramCredentials', kafka: '0', why: 'SCRAM credentials, as above.' },
  { apiKey: 55, name: 'DescribeQuorum', kafka: '0-2', why: 'no KRaft quorum: cluster metadata is kept in etcd (cluster-metadata.md).' },
  { apiKey: 57, name: 'UpdateFeatures', kafka: '0-2', why: 'no feature flags: Sediment finalizes none (below), so there is nothing to upgrade or downgrade.' },
  { apiKey: 64, name: 'UnregisterBroker', kafka: '0', why: "a broker's registration is an etcd lease that ends with the broker (cluster-metadata.md)." },
  { apiKey: 74, name: 'ListConfigResources', kafka: '0-1', why: '(ListClientMetricsResources before 4.1) no client-metrics resources (client telemetry is not served); topics, brokers and groups are found with Metadata, DescribeCluster and ListGroups.' },
  { apiKey: 80, name: 'AddRaftVoter', kafka: '0-1', why: 'no KRaft quorum, as DescribeQuorum.' },
  { apiKey: 81, name: 'RemoveRaftVoter', kafka: '0', why: 'no KRaft quorum, as DescribeQuorum.' },
  { apiKey: 88, name: 'StreamsGroupHeartbeat', kafka: '0', why: 'Kafka Streams groups (KIP-1071, `group.protocol=streams`): not served; Streams applications use the classic protocol, which is.' },
  { apiKey: 89, name: 'StreamsGroupDescribe', kafka: '0', why: 'Streams groups, as above.' },
];

export interface VersionDifference {
  readonly apiKey: number;
  readonly name: string;
  /** Kafka 4.3.1's advertised range ('-': not advertised). */
  readonly kafka: string;
  readonly sediment: string;
}

/** APIs both advertise with different ranges (the table above says why). */
export const kafka43Differences: readonly VersionDifference[] = [
  { apiKey: 24, name: 'AddPartitionsToTxn', kafka: '0-5', sediment: '0-3' },
  { apiKey: 26, name: 'EndTxn', kafka: '0-5', sediment: '0-4' },
  { apiKey: 27, name: 'WriteTxnMarkers', kafka: '1-2', sediment: '1-1' },
  { apiKey: 28, name: 'TxnOffsetCommit', kafka: '0-5', sediment: '0-4' },
  { apiKey: 66, name: 'ListTransactions', kafka: '0-2', sediment: '0-1' },
];

/** The "Kafka 4.3 features not served" section, from the data above. */
function notServedSection(): string[] {
  return [
    '## Kafka 4.3 features not served',
    '',
    "Compared with the ApiVersions answer of a real Apache Kafka 4.3.1 broker (single node, KRaft, the reference configuration; `test/golden/kafka-responses/api-versions-v4.bin`, checked by `test/broker/protocol/golden/kafka-parity.test.ts`). APIs Kafka 4.3.1 advertises and Sediment does not:",
    '',
    '| API (key) | Kafka 4.3.1 | why not |',
    '|---|---|---|',
    ...kafka43NotAdvertised.map((a) => `| ${a.name} (${a.apiKey}) | ${a.kafka} | ${a.why} |`),
    '',
    'APIs both serve, Sediment with a lower maximum (see the versions table above):',
    '',
    ...kafka43Differences.map((d) => `- ${d.name} (${d.apiKey}): Kafka ${d.kafka}, Sediment ${d.sediment}.`),
    '',
    'Features Kafka 4.3.1 finalizes and Sediment does not (its ApiVersions answer lists no supported or finalized features, so clients take each at level 0):',
    '',
    '- `transaction.version` 2 (KIP-890 part 2: the producer epoch bumped by every EndTxn, Produce v12 adding its own partitions, EndTxn/TxnOffsetCommit/WriteTxnMarkers v5/v5/v2). Transactions run at version 0/1 semantics, which the Java 4.3.1 client falls back to.',
    "- `group.version` 1 (the KIP-848 consumer protocol): not finalized, yet ConsumerGroupHeartbeat/ConsumerGroupDescribe are served and the Java 4.3.1 consumer with `group.protocol=consumer` works with Sediment (`test/e2e-groups/`).",
    '- `share.version` 1 (KIP-932): likewise not finalized; share groups are served and the Java 4.3.1 share consumer works with Sediment (`test/e2e-share/`).',
    '- `streams.version` 1: Streams groups are not served (above).',
    '- `eligible.leader.replicas.version` 1 (KIP-966, ELR): no eligible leader replicas; DescribeTopicPartitions answers empty EligibleLeaderReplicas and LastKnownElr.',
    '- `metadata.version` and `kraft.version`: KRaft-only; cluster metadata is in etcd.',
    '',
    'Not advertised by Kafka 4.3.1 in its default configuration either, and not served: GetTelemetrySubscriptions (71) and PushTelemetry (72) (client telemetry, KIP-714: Kafka advertises them only with a metrics reporter that receives telemetry), InitProducerId v6 (two-phase commit, KIP-939: unstable in 4.3.1), and the inter-broker and controller APIs a KRaft broker answers only on its controller listener.',
    '',
    '### Answers compared with Kafka 4.3.1',
    '',
    "`test/broker/protocol/golden/kafka-parity.test.ts` sends the requests captured from real clients talking to Kafka 4.3.1 (`test/golden/kafka-responses/`: kcat, confluent-kafka-python, kafkajs, the Java 4.3.1 client and CLI tools) to Sediment, holding the same topics, records and groups, and compares the answers field by field, but for what legitimately differs (cluster id, hosts, ports, topic and member ids, producer ids, throttle time, list order). Compared: ApiVersions 2-4, CreateTopics 3/4/7, Produce 7/13, Fetch 11/18 (record bytes included), ListOffsets 2/3/11, Metadata 4/6/13, DescribeTopicPartitions 0, ListPartitionReassignments 0, DescribeCluster 2, FindCoordinator 2/6, InitProducerId 1/4/5, IncrementalAlterConfigs 1 (a group), DeleteRecords 2, JoinGroup 5/9, SyncGroup 3/5, Heartbeat 3, LeaveGroup 1/3/5, OffsetCommit 5/7/9/10, OffsetFetch 4/7/9/10, DescribeGroups 6, ListGroups 5, ConsumerGroupHeartbeat 1, ConsumerGroupDescribe 1, ShareGroupHeartbeat 1, ShareFetch 2, ShareAcknowledge 2, ShareGroupDescribe 1. Not compared: DescribeShareGroupOffsets 1 (the share-partition state of a moment of the capture run) and DescribeConfigs 4 of a broker (Sediment's broker configs are its own, configuration.md). The differences that remain:",
    '',
    '- A new consumer or share group: Kafka 4.3.1 gives its first member epoch 2, Sediment 1; every later change adds one on both (seen on the real broker with two console consumers: 2, then 3). Clients only echo epochs.',
    '- CreateTopics v5+ (and DescribeConfigs of a topic) also list `message.downconversion.enable`, which Kafka 4.0 removed and Sediment accepts for old configuration files (configuration.md).',
    "- A topic's `min.insync.replicas` is reported from DYNAMIC_DEFAULT_BROKER_CONFIG (3) by Kafka 4.3.1, whose storage format writes a cluster-wide value for ELR (KIP-966), from DEFAULT_CONFIG (5) by Sediment.",
    '- `remote.storage.enable` defaults to true on Sediment while tiered storage is on (its default, configuration.md); compared with it off, as Kafka runs by default.',
    '',
    "Found by the comparison and fixed: FindCoordinator's error message for a found coordinator (`NONE` in v1-3, empty per key in v4+, was null); OffsetForLeaderEpoch v2, which librdkafka sends, was not advertised; ShareGroupDescribe's assignment epoch after a member left (Kafka computes the target assignment at the next heartbeat, Sediment computed it at the leave); ShareFetch answered share-partitions with nothing to say (Kafka leaves out a partition with no records acquired, no error and no acknowledgement, even on a session's first fetch); ShareFetch and ShareAcknowledge named the leader in CurrentLeader of every partition (Kafka fills it only for NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH, zeros otherwise).",
    '',
  ];
}

export const protocolVersionsSection: readonly string[] = [
  '## Kafka 4.3 protocol versions',
  '',
  "The wire codecs are generated from Apache Kafka 4.3.1's message definitions (`npm run codegen`). Sediment advertises a version only where it serves what that version means; a client meeting a lower maximum uses the highest version both sides support, so none of the versions below is needed by a client that works with Kafka 4.x.",
  '',
  '| API (key) | Kafka 4.3.1 | Sediment | the newer versions |',
  '|---|---|---|---|',
  '| Produce (0) | 3-13, 0-2 listed | 0-13 | v13 names topics by id (KIP-516): an unknown id is UNKNOWN_TOPIC_ID per partition, the id is echoed. v12 is v11 plus KIP-890 part 2 (a transactional produce adds its partition) for clients of `transaction.version` 2; Sediment finalizes no such feature, so transactional producers stay on v11 semantics (the Java client caps them at v11). v0-2: Kafka 4 lists them for librdkafka (KAFKA-18659) and closes the connection on one; Sediment answers UNSUPPORTED_VERSION per partition. v10+ (KIP-951): in a cluster, NOT_LEADER_OR_FOLLOWER carries the partition\'s CurrentLeader and the response the leaders\' NodeEndpoints. |',
  '| Fetch (1) | 4-18 | 4-18 | v13 names topics by id, fetch sessions included (UNKNOWN_TOPIC_ID; a session opened by name and continued by id is FETCH_SESSION_TOPIC_ID_ERROR). v14 (OffsetMovedToTieredStorage) is internal to Kafka\'s replica fetcher; v15 moves the replica id into ReplicaState (replica id and broker epoch); in a cluster a replica fetch from a broker of the partition\'s replica set is served by its leader (replication.md), one from anyone else is refused; v17-18\'s follower fields (directory id, the follower\'s high watermark) are decoded and not used (one log directory per broker). The single broker has no followers and refuses replica fetches. v16+ (KIP-951): a partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH carries its CurrentLeader (id and epoch, from the broker\'s metadata image) and the response the leaders\' NodeEndpoints, in fetch sessions too (an error is in every incremental answer), as Kafka\'s broker answers; v12-15 carry neither. |',
  '| ListOffsets (2) | 1-11 | 1-11 | v11: timestamp -6, the earliest offset not yet uploaded to the remote tier (KIP-1023): the one after the highest remote offset; the log start offset when nothing was uploaded and the local log is whole; -1 when the topic is not tiered. Followers with `follower.fetch.last.tiered.offset.enable` ask it of their leader (replication.md). v10\'s timeout bounds Kafka\'s asynchronous remote lookups; these are answered within the request. |',
  '| Metadata (3) | 0-13 | 0-13 | v13 adds a top-level error code (REBOOTSTRAP_REQUIRED, KIP-1102): always 0 here. |',
  '| OffsetCommit (8) / OffsetFetch (9) | 2-10 / 1-10 | 2-10 / 1-10 | v10 names topics by id (KIP-848): an unknown (or zero) id is UNKNOWN_TOPIC_ID on each of its partitions, OffsetFetch\'s only when the group itself has no error; answers carry the topics\' ids. The Java consumer with `group.protocol=consumer` sends v10 (tested with the 4.3.1 client); the classic consumer stays on names. |',
  '| FindCoordinator (10) | 0-6 | 0-6 | v5 only allows TRANSACTION_ABORTABLE; v6 adds the share-group key type ("groupId:topicId:partition"), answered with the share coordinator, placed like the group coordinator. |',
  '| DescribeGroups (15) | 0-6 | 0-6 | v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND with a message (before: Dead, no error). |',
  '| InitProducerId (22) | 0-5 (0-6 defined) | 0-5 | v5 only allows TRANSACTION_ABORTABLE. v6 is two-phase commit (KIP-939), unstable in 4.3.1 and not advertised by its broker: not served. |',
  '| OffsetForLeaderEpoch (23) | 2-4 | 2-4 | v2, the version librdkafka sends, carries no replica id: answered as a consumer\'s (Sediment used to advertise 3-4, which left librdkafka clients without position validation after a leader change). |',
  '| AddPartitionsToTxn (24) / AddOffsetsToTxn (25) | 0-5 / 0-4 | 0-3 / 0-4 | AddPartitionsToTxn v4+ is the brokers\' verification call (and v5 its TRANSACTION_ABORTABLE); AddOffsetsToTxn v4 only allows TRANSACTION_ABORTABLE. |',
  '| EndTxn (26) / TxnOffsetCommit (28) | 0-5 / 0-5 | 0-4 / 0-4 | v5 of both is transaction.version 2 (epoch bumped by every EndTxn, KIP-890 part 2): not served. |',
  '| DescribeCluster (60) | 0-2 | 0-2 | v2 may include fenced brokers and flags each (KIP-1073): the one broker is never fenced. |',
  '| DescribeLogDirs (35) | 1-5 | 1-5 | v5 adds IsCordoned (KIP-1066): always false. |',
  '| ListTransactions (66) | 0-2 | 0-1 | v2 filters by a transactional id regular expression (KIP-1152): not yet. |',
  '| ConsumerGroupHeartbeat (68) / ConsumerGroupDescribe (69) | 0-1 / 0-1 | 0-1 / 0-1 | KIP-848 consumer groups: server-side `uniform` and `range` assignors, regex subscriptions (v1), static members, online migration to and from classic groups (classic members inside a consumer group), persisted in `__consumer_offsets`. |',
  '| GetTelemetrySubscriptions (71) / PushTelemetry (72) | 0 (advertised only with a telemetry-receiving metrics reporter) | - | client telemetry (KIP-714): not served; clients carry on without it. |',
  '| ListConfigResources (74) | 0-1 | - | (ListClientMetricsResources before 4.1) client-metrics resources: none here. |',
  '| ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78), ShareAcknowledge (79), Describe/Alter/DeleteShareGroupOffsets (90-92) | 1, 1, 1-2, 1-2, 0-1, 0, 0 | 1-1 / 1-1 / 1-2 / 1-2 / 0-1 / 0-0 / 0-0 | share groups (KIP-932), see below; ShareFetch/ShareAcknowledge v2 with acquire modes and renew (KIP-1206, KIP-1222), DescribeShareGroupOffsets v1 with lag (KIP-1226). |',
  '| Initialize/Read/Write/DeleteShareGroupState, ReadShareGroupStateSummary (83-87) | 0, 0, 0-1, 0, 0-1 | 0-0 / 0-0 / 0-1 / 0-0 / 0-1 | inter-broker: a share-partition leader reads and writes its state at the share coordinator (in a cluster), see below. |',
  '| StreamsGroupHeartbeat (88) / StreamsGroupDescribe (89) | 0 / 0 | - | Kafka Streams groups (KIP-1071): not served. |',
  '',
  "### KIP-848 consumer groups",
  "",
  "Served (one broker; on a cluster the coordinator is keyed by `__consumer_offsets` partition like the classic one): ConsumerGroupHeartbeat v0-1 and ConsumerGroupDescribe v0-1; member and group epochs, the target assignment by a server-side assignor (`uniform`, the default, sticky and balanced; `range`; `group.consumer.assignors`, chosen per group by the members' ServerAssignor, the most asked-for one winning), each member's reconciliation (a partition is revoked before it is assigned elsewhere, and given only once its previous owner acknowledged the revocation), `group.consumer.session.timeout.ms` (45000) and `group.consumer.heartbeat.interval.ms` (5000) with their min/max bounds, the rebalance timeout (a member that does not revoke in time is fenced), leave (epoch -1), static membership (`group.instance.id`; epoch -2 keeps the partitions for the instance's next member id until the session ends; UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID), GROUP_MAX_SIZE_REACHED (`group.consumer.max.size`). Everything is written to `__consumer_offsets` in Kafka's records (ConsumerGroupMetadata, MemberMetadata, TargetAssignmentMetadata/Member, CurrentMemberAssignment with KIP-1251 assignment epochs, RegularExpression) before it is answered, and rebuilt at start-up. OffsetCommit / OffsetFetch v9-10 check member ids and epochs (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH; a lagging epoch may commit partitions held since, KIP-1251). ListGroups answers GroupType and filters by type; DescribeGroups describes a consumer group as Kafka does (protocol type `consumer`, the assignor as protocol data); DeleteGroups and OffsetDelete work on both kinds; `kafka-consumer-groups --describe [--members --verbose] [--state]`, `--list --type` and `--reset-offsets` work on consumer groups (tested with the 4.3.1 and 4.4.0 tools), as do Java consumers with `group.protocol=consumer` and franz-go's `ServerSideBalancer`.",
  "",
  "Subscriptions by regular expression (SubscribedTopicRegex) are resolved on the coordinator against every non-internal topic and re-resolved on each heartbeat, so topics created later join. Kafka compiles them with RE2/J; Sediment uses JavaScript's RegExp (unicode mode), anchored to match the whole name as Kafka does. The common subset (classes, alternation, quantifiers, groups, a leading `(?i)`) means the same. What differs: `\\Q...\\E` quoting and inline flags other than a leading `(?i)` are refused with INVALID_REGULAR_EXPRESSION; POSIX classes such as `[[:alpha:]]` are read by JavaScript as a bracket list and match something else; backreferences and lookaround, which RE2/J refuses, are accepted.",
  "",
  "Online migration (Kafka's rolling upgrade and downgrade under `group.consumer.migration.policy`: `bidirectional`, the default, `upgrade`, `downgrade` or `disabled`). An empty or offsets-only classic group becomes a consumer group when a consumer-protocol member joins, and an empty consumer group a classic group when a classic member joins, whatever the policy, as in Kafka. A consumer-protocol member joining (epoch 0) a classic group with members upgrades it when the policy allows, the group uses the `consumer` protocol type and its size is within `group.consumer.max.size` (else GROUP_ID_NOT_FOUND): each classic member becomes a member at the classic generation owning its last classic assignment, which is also its target, and parked JoinGroup/SyncGroup calls answer REBALANCE_IN_PROGRESS. Classic members inside a consumer group (member type 0 in ConsumerGroupDescribe v1) go on with the classic protocol: JoinGroup is answered at once, with the member epoch as generation and no leader; the owned partitions of their ConsumerProtocol subscription are what they hold, so a partition they must give up stays theirs until they rejoin without it; SyncGroup answers their assigned partitions as a ConsumerProtocol Assignment in the version of their subscription; Heartbeat answers REBALANCE_IN_PROGRESS while the group epoch is ahead of theirs, while they have partitions to revoke, or once the partitions they wait for are free; LeaveGroup removes them. They keep their own session timeout, must rejoin and sync within their rebalance timeout, and commit with their generation (else ILLEGAL_GENERATION). When the last consumer-protocol member leaves or is fenced and classic members remain (at most `group.max.size`), the group downgrades to a classic group at the group epoch, each member assigned its target, and rebalances; so does a group whose last consumer-protocol member is a static one replaced by a classic member with its `group.instance.id` (the newcomer takes its assignment, with no rebalance unless the subscription changed, KAFKA-19546). Each conversion is one append to `__consumer_offsets` in Kafka's records (the tombstones of one kind of group, then the records of the other; a classic member's JoinGroup protocols and session timeout in the tagged ClassicMemberMetadata of its member record), so it survives a restart or a coordinator move. Any ConsumerProtocol assignor may be rolled, as in Kafka; the rolling test (three Java members, classic to consumer and back, under continuous production) uses CooperativeStickyAssignor: `test/e2e-groups/java-online-migration.e2e.test.ts`.",
  "",
  "Not served yet: per-group dynamic configs (`consumer.session.timeout.ms` on a group resource). Member racks (RackId) are kept and described but, as in Kafka 4.3.1, the server-side assignors do not use them (Kafka removed their rack awareness in 3.8, KAFKA-16694). The metadata hash in ConsumerGroupMetadataValue is Kafka's (KIP-1101: XXH3-64 over the subscribed topics' ids, names, partition counts and replica racks, checked against hash4j), so a metadata change, a rack change included, starts a new group epoch as on Kafka.",
  "",
  "Kafka 4.0 removed LeaderAndIsr (4), StopReplica (5), UpdateMetadata (6) and ControlledShutdown (7), and the oldest versions of several APIs (KIP-896): Fetch 0-3, ListOffsets 0, OffsetCommit 0-1, OffsetFetch 0, CreateTopics 0-1, DeleteTopics 0, DescribeConfigs 0, OffsetForLeaderEpoch 0-1, among others. A request for a version that is not advertised closes the connection, as Kafka does; every client of this page negotiates with ApiVersions first. In the internal topics, Kafka 4.x's coordinator records name the record type in the key's int16 prefix and keep one key body version: the bytes `__consumer_offsets` and `__transaction_state` hold are unchanged.",
  '',
  '## Share groups (KIP-932)',
  '',
  "Served on one broker and in a cluster. In a cluster the group coordinator (membership) is the leader of the group's `__consumer_offsets` partition, each share-partition is kept by the leader of its topic partition, and its state is at its share coordinator, the leader of its `__share_group_state` partition (FindCoordinator key type 2), as in Kafka. Proven with Kafka 4.3.1's `KafkaShareConsumer` (implicit and explicit acknowledgement, a member killed holding records, lock expiry, delivery limits, a broker restart, a topic whose older segments are remote) and `kafka-share-groups.sh` (`--list`, `--describe` with `--members` and `--state`, `--reset-offsets`, `--delete-offsets`, `--delete`): `test/e2e-share/`.",
  '',
  '- Membership: ShareGroupHeartbeat with the `simple` server-side assignor (every member gets partitions; members share partitions when they outnumber them), `group.share.session.timeout.ms`, `group.share.heartbeat.interval.ms`, `group.share.max.size`. ListGroups lists share groups (type filter `share`), DeleteGroups deletes them with their state. DescribeGroups (the classic API) does not describe share groups.',
  "- Share-partitions: the in-flight window (start and end offsets), record states available, acquired, acknowledged and archived, acquisition locks (`group.share.record.lock.duration.ms`, bounded by `group.share.min/max.record.lock.duration.ms`), delivery counts archived at `group.share.delivery.count.limit`, `group.share.partition.max.record.locks` (2000), acknowledge types accept, release, reject, gap and renew, acquire modes batch-optimized and record-limit, long-poll ShareFetch (MaxWaitMs, MinBytes) woken by appends and by records made available again. Control batches, compaction gaps and, under `share.isolation.level=read_committed`, aborted transactions' records are archived without being delivered. Fetches below the local log start are served from the remote tier as a regular fetch is.",
  "- Share sessions: epochs 0 (open), n (continue), -1 (close), `group.share.max.share.sessions` (SHARE_SESSION_LIMIT_REACHED beyond it); a closed session or connection releases its member's acquired records.",
  '- Group configs (IncrementalAlterConfigs / DescribeConfigs on GROUP resources, `kafka-configs.sh --entity-type groups`): `share.auto.offset.reset` (latest, earliest, by_duration:<ISO-8601>), `share.isolation.level`, `share.record.lock.duration.ms`, `share.delivery.count.limit`, `share.partition.max.record.locks`, `share.session.timeout.ms`, `share.heartbeat.interval.ms`; alone kept in `share-group-configs.json` in the first log directory; in a cluster in the cluster metadata (`configs/groups/<group id>/<name>` in etcd), so setting them through any broker sets them for every broker, as Kafka keeps them in its metadata log.',
  "- Persistence: share-partition state goes to `__share_group_state` (created when first needed, `share.coordinator.state.topic.num.partitions` partitions, compacted) as ShareSnapshot and ShareUpdate records in Kafka's formats, keyed and placed as Kafka does (hash of `groupId:topicId:partition`), a snapshot every `share.coordinator.snapshot.update.records.per.snapshot` updates, written before an acknowledgement is answered and replayed at start-up: after a restart nothing acknowledged is delivered again and what was acquired is available again. In a cluster `__share_group_state` is a cluster topic (`share.coordinator.state.topic.replication.factor`, 3, capped to the registered brokers, and `share.coordinator.state.topic.min.isr`, 2, likewise); the share coordinator loads and unloads its partitions with their leadership (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS meanwhile) and answers a write once the ISR has it. The share-partition leader reads and writes through InitializeShareGroupState/ReadShareGroupState/WriteShareGroupState/DeleteShareGroupState/ReadShareGroupStateSummary (83-87), retrying retriable errors as Kafka's persister does, with its leader epoch: a replaced leader's writes are FENCED_LEADER_EPOCH, a reset's older state epoch FENCED_STATE_EPOCH. When a partition's leadership moves (kill -9 of its leader, or of the share coordinator, RF 3: `test/e2e-share/share-cluster.e2e.test.ts`) the new leader loads the share-partition from the coordinator: nothing acknowledged is delivered again, what was in flight is available again with its delivery count.",
  '- State initialisation: as Kafka 4.x\'s group coordinator, every ShareGroupHeartbeat initialises (InitializeShareGroupState, asynchronously to the heartbeat) the partitions of the subscribed topics that the group has not initialised yet, partitions added to a topic included, at the group epoch and start offset -1, which the share-partition resolves by `share.auto.offset.reset` when it first loads; a failed initialisation is retried by a later heartbeat, one still in flight after `group.share.initialize.retry.interval.ms` is started again. The initializing/initialized/deleting sets are Kafka\'s ShareGroupStatePartitionMetadata, written in Kafka\'s record (type 15) to the group\'s `__consumer_offsets` partition whenever they change (initializing before InitializeShareGroupState is sent, initialized once it answered), with the group epoch (ShareGroupMetadata, type 11), tombstoned when the group is deleted, and replayed when the partition loads (a restart, or the partition coming to this broker in a cluster): an initialised partition is not initialised again (its start offset and acknowledged records stay) and a member is assigned it on its first heartbeat. Only initialised partitions are assigned, so no share-partition loads before its state exists. As in Kafka 4.3: DeleteShareGroupOffsets records the topics deleting, deletes their state (DeleteShareGroupState), then removes them (a topic without initialised state answers UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete."); AlterShareGroupOffsets records the partitions initializing and initialises them (InitializeShareGroupState at the group epoch and the new start offset, no in-flight records), then records them initialized; DeleteGroups records every topic deleting and deletes the state before the group\'s tombstones (a failed delete answers its error and keeps the group); both need an empty group (NON_EMPTY_GROUP). A deleted topic leaves the sets (and the record) when this broker deletes it, and otherwise at the group\'s next heartbeat or admin operation. Share-group calls for a group whose partition this broker does not serve answer NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while it loads). State found for a partition the records do not list (kept by a Sediment from before the records) counts as initialised. `test/e2e-share/share-init.e2e.test.ts`: a heartbeat alone, and `kafka-share-groups.sh --describe --offsets` describes the group\'s share-partitions before any fetch; `test/e2e-share/share-restart.e2e.test.ts`: after a restart the group is listed, its first heartbeat is assigned, nothing acknowledged is delivered again, and `--reset-offsets` / `--delete-offsets` hold across restarts.',
  '- Not served: members and assignments are not persisted (ShareGroupMemberMetadata, ShareGroupTargetAssignment and ShareGroupCurrentMemberAssignment records): after a restart the group comes back Empty, with its epoch and state sets, and members rejoin by heartbeat; the dead-letter queue of rejected records (`group.share.dlq.*`, newer than 4.3); BatchSize does not reshape the acquired ranges; describing all of a group\'s share-partitions asks the coordinators of every partition of every topic (Kafka reads the group\'s initialized set, which Sediment keeps but does not use for this). Member racks (RackId) are kept but, as in Kafka 4.3.1, the `simple` assignor does not use them (Kafka\'s server-side assignors have no rack awareness, KAFKA-16694).',
  '',
  ...notServedSection(),
];
