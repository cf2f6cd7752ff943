// The "Kafka 4.3 protocol versions" section of docs/compatibility.md: which API
// versions of Apache Kafka 4.3.1's definitions Sediment advertises, and why the
// rest are not. Static text (it changes with the handlers, not with a run); the
// matrix renders it into the page after the results. Keep it in step with
// broker/handlers/ (the registry there is the one source of ApiVersions).

export const protocolVersionsSection: readonly string[] = [
  '## Kafka 4.3 protocol versions',
  '',
  "The wire codecs are generated from Apache Kafka 4.3.1's message definitions (`npm run codegen`). Sediment advertises a version only where it serves what that version means; a client meeting a lower maximum uses the highest version both sides support, so none of the versions below is needed by a client that works with Kafka 4.x.",
  '',
  '| API (key) | Kafka 4.3.1 | Sediment | the newer versions |',
  '|---|---|---|---|',
  '| Produce (0) | 3-13, 0-2 listed | 0-13 | v13 names topics by id (KIP-516): an unknown id is UNKNOWN_TOPIC_ID per partition, the id is echoed. v12 is v11 plus KIP-890 part 2 (a transactional produce adds its partition) for clients of `transaction.version` 2; Sediment finalizes no such feature, so transactional producers stay on v11 semantics (the Java client caps them at v11). v0-2: Kafka 4 lists them for librdkafka (KAFKA-18659) and closes the connection on one; Sediment answers UNSUPPORTED_VERSION per partition. |',
  '| Fetch (1) | 4-18 | 4-18 | v13 names topics by id, fetch sessions included (UNKNOWN_TOPIC_ID; a session opened by name and continued by id is FETCH_SESSION_TOPIC_ID_ERROR). v14 (OffsetMovedToTieredStorage) is internal to Kafka\'s replica fetcher; v15 moves the replica id into ReplicaState, v17-18 add follower fields (directory id, high watermark): replica fetches are refused, there are no followers. v16 NodeEndpoints go with NOT_LEADER errors, which a broker leading every partition never answers. |',
  '| ListOffsets (2) | 1-11 | 1-11 | v11: timestamp -6, the earliest offset not yet uploaded to the remote tier (KIP-1023): the one after the highest remote offset; the log start offset when nothing was uploaded and the local log is whole; -1 when the topic is not tiered. v10\'s timeout bounds Kafka\'s asynchronous remote lookups; these are answered within the request. |',
  '| Metadata (3) | 0-13 | 0-13 | v13 adds a top-level error code (REBOOTSTRAP_REQUIRED, KIP-1102): always 0 here. |',
  '| OffsetCommit (8) / OffsetFetch (9) | 2-10 / 1-10 | 2-9 / 1-9 | v10 names topics by id only (KIP-848 line). Not yet served; clients use v9 by name. |',
  '| FindCoordinator (10) | 0-6 | 0-6 | v5 only allows TRANSACTION_ABORTABLE; v6 adds the share-group key type, refused per key with INVALID_REQUEST (no share groups). |',
  '| DescribeGroups (15) | 0-6 | 0-6 | v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND with a message (before: Dead, no error). |',
  '| InitProducerId (22) | 0-6 | 0-5 | v5 only allows TRANSACTION_ABORTABLE. v6 is two-phase commit (KIP-939): not served. |',
  '| AddPartitionsToTxn (24) / AddOffsetsToTxn (25) | 0-5 / 0-4 | 0-3 / 0-4 | AddPartitionsToTxn v4+ is the brokers\' verification call (and v5 its TRANSACTION_ABORTABLE); AddOffsetsToTxn v4 only allows TRANSACTION_ABORTABLE. |',
  '| EndTxn (26) / TxnOffsetCommit (28) | 0-5 / 0-5 | 0-4 / 0-4 | v5 of both is transaction.version 2 (epoch bumped by every EndTxn, KIP-890 part 2): not served. |',
  '| DescribeCluster (60) | 0-2 | 0-2 | v2 may include fenced brokers and flags each (KIP-1073): the one broker is never fenced. |',
  '| DescribeLogDirs (35) | 1-5 | 1-5 | v5 adds IsCordoned (KIP-1066): always false. |',
  '| ListTransactions (66) | 0-2 | 0-1 | v2 filters by a transactional id regular expression (KIP-1152): not yet. |',
  '| ConsumerGroupHeartbeat (68) / ConsumerGroupDescribe (69) | 0-1 / 0-1 | 0-1 / 0-1 | KIP-848 consumer groups: server-side `uniform` and `range` assignors, regex subscriptions (v1), static members, persisted in `__consumer_offsets`. Not served: classic members inside a consumer group and online migration of a classic group with members. |',
  '| GetTelemetrySubscriptions (71) / PushTelemetry (72) | 0 | - | client telemetry (KIP-714): not served; clients carry on without it. |',
  '| ListConfigResources (74) | 0-1 | - | (ListClientMetricsResources before 4.1) client-metrics resources: none here. |',
  '| ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78), ShareAcknowledge (79), Describe/Alter/DeleteShareGroupOffsets (90-92) | 1, 1, 1-2, 1-2, 0-1, 0, 0 | - | share groups (KIP-932): not served yet. |',
  '| StreamsGroupHeartbeat (88) / StreamsGroupDescribe (89) | 0 / 0 | - | Kafka Streams groups (KIP-1071): not served. |',
  '',
  "Kafka 4.0 removed LeaderAndIsr (4), StopReplica (5), UpdateMetadata (6) and ControlledShutdown (7), and the oldest versions of several APIs (KIP-896): Fetch 0-3, ListOffsets 0, OffsetCommit 0-1, OffsetFetch 0, CreateTopics 0-1, DeleteTopics 0, DescribeConfigs 0, OffsetForLeaderEpoch 0-1, among others. A request for a version that is not advertised closes the connection, as Kafka does; every client of this page negotiates with ApiVersions first. In the internal topics, Kafka 4.x's coordinator records name the record type in the key's int16 prefix and keep one key body version: the bytes `__consumer_offsets` and `__transaction_state` hold are unchanged.",
  '',
];
