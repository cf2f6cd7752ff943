// Every API handler this broker serves. ApiVersions advertises exactly these,
// with the ranges each handler declares.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { handler as produce } from './00-produce.js';
import { handler as fetch } from './01-fetch.js';
import { handler as listOffsets } from './02-list-offsets.js';
import { handler as metadata } from './03-metadata.js';
import { handler as apiVersions } from './18-api-versions.js';
import { handler as createTopics } from './19-create-topics.js';
import { handler as deleteTopics } from './20-delete-topics.js';
import { handler as deleteRecords } from './21-delete-records.js';
import { handler as initProducerId } from './22-init-producer-id.js';
import { handler as describeConfigs } from './32-describe-configs.js';
import { handler as alterConfigs } from './33-alter-configs.js';
import { handler as createPartitions } from './37-create-partitions.js';
import { handler as incrementalAlterConfigs } from './44-incremental-alter-configs.js';
import { handler as alterPartitionReassignments } from './45-alter-partition-reassignments.js';
import { handler as listPartitionReassignments } from './46-list-partition-reassignments.js';
import { handler as describeCluster } from './60-describe-cluster.js';
import { handler as offsetCommit } from './08-offset-commit.js';
import { handler as offsetFetch } from './09-offset-fetch.js';
import { handler as findCoordinator } from './10-find-coordinator.js';
import { handler as joinGroup } from './11-join-group.js';
import { handler as heartbeat } from './12-heartbeat.js';
import { handler as leaveGroup } from './13-leave-group.js';
import { handler as syncGroup } from './14-sync-group.js';
import { handler as describeGroups } from './15-describe-groups.js';
import { handler as listGroups } from './16-list-groups.js';
import { handler as deleteGroups } from './42-delete-groups.js';
import { handler as offsetDelete } from './47-offset-delete.js';
import { handler as offsetForLeaderEpoch } from './23-offset-for-leader-epoch.js';
import { handler as describeLogDirs } from './35-describe-log-dirs.js';
import { handler as addPartitionsToTxn } from './24-add-partitions-to-txn.js';
import { handler as addOffsetsToTxn } from './25-add-offsets-to-txn.js';
import { handler as endTxn } from './26-end-txn.js';
import { handler as writeTxnMarkers } from './27-write-txn-markers.js';
import { handler as txnOffsetCommit } from './28-txn-offset-commit.js';
import { handler as describeProducers } from './61-describe-producers.js';
import { handler as describeTransactions } from './65-describe-transactions.js';
import { handler as listTransactions } from './66-list-transactions.js';
import { handler as describeTopicPartitions } from './75-describe-topic-partitions.js';
import { handler as shareGroupHeartbeat } from './76-share-group-heartbeat.js';
import { handler as shareGroupDescribe } from './77-share-group-describe.js';
import { handler as shareFetch } from './78-share-fetch.js';
import { handler as shareAcknowledge } from './79-share-acknowledge.js';
import { handler as initializeShareGroupState } from './83-initialize-share-group-state.js';
import { handler as readShareGroupState } from './84-read-share-group-state.js';
import { handler as writeShareGroupState } from './85-write-share-group-state.js';
import { handler as deleteShareGroupState } from './86-delete-share-group-state.js';
import { handler as readShareGroupStateSummary } from './87-read-share-group-state-summary.js';
import { handler as describeShareGroupOffsets } from './90-describe-share-group-offsets.js';
import { handler as alterShareGroupOffsets } from './91-alter-share-group-offsets.js';
import { handler as deleteShareGroupOffsets } from './92-delete-share-group-offsets.js';
import { handler as consumerGroupHeartbeat } from './68-consumer-group-heartbeat.js';
import { handler as consumerGroupDescribe } from './69-consumer-group-describe.js';

export const allHandlers = [
  produce,
  fetch,
  listOffsets,
  metadata,
  apiVersions,
  createTopics,
  deleteTopics,
  deleteRecords,
  initProducerId,
  describeConfigs,
  alterConfigs,
  createPartitions,
  incrementalAlterConfigs,
  alterPartitionReassignments,
  listPartitionReassignments,
  describeCluster,
  offsetCommit,
  offsetFetch,
  findCoordinator,
  joinGroup,
  heartbeat,
  leaveGroup,
  syncGroup,
  describeGroups,
  listGroups,
  deleteGroups,
  offsetDelete,
  offsetForLeaderEpoch,
  describeLogDirs,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  writeTxnMarkers,
  txnOffsetCommit,
  describeProducers,
  describeTransactions,
  listTransactions,
  describeTopicPartitions,
  shareGroupHeartbeat,
  shareGroupDescribe,
  shareFetch,
  shareAcknowledge,
  initializeShareGroupState,
  readShareGroupState,
  writeShareGroupState,
  deleteShareGroupState,
  readShareGroupStateSummary,
  describeShareGroupOffsets,
  alterShareGroupOffsets,
  deleteShareGroupOffsets,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
] as unknown as ApiHandler<unknown, unknown, BrokerContext>[];
