// Builds the share-group parts from the broker's config and parts (called by
// broker.ts): the share coordinator over __share_group_state (alone it replays
// the whole topic and is the persister of this broker's share-partitions; in
// a cluster it serves the partitions of the topic this broker leads, and the
// share-partitions reach their coordinators through a routed persister),
// group configs from the first log directory, and the ShareGroups facade the
// handlers reach. Kept here so the composition root changes by a few lines.
import path from 'node:path';
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config.js';
import type { Clock } from '../common/clock.js';
import type { Scheduler } from '../common/scheduler.js';
import type { ShareLogView } from './share-ports.js';
import type { PartitionWaiters } from '../partition-waiters.js';
import type { OffsetsTopicLog } from '../group/offsets-topic.js';
import type { GroupCoordinator } from '../group/group-coordinator.js';
import type { TopicStore } from '../../metadata/topic-store.js';
import { ShareCoordinator } from './share-coordinator.js';
import type { ShareStatePersister } from './share-partition-manager.js';
import { ShareGroupConfigs, type GroupConfigSource } from './share-group-configs.js';
import { ShareGroups } from './share-groups.js';

export const SHARE_GROUP_CONFIGS_FILE = 'share-group-configs.json';

export interface ShareWiring {
  readonly config: BrokerConfig;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  readonly metaDir: string;
  readonly coordinator: ShareCoordinator;
  /** Where share-partitions keep their state: the coordinator itself alone, a routed persister in a cluster. */
  readonly persister: ShareStatePersister;
  readonly stateTopicExists: () => boolean;
  readonly store: TopicStore;
  readonly partition: (topic: string, partition: number) => ShareLogView | undefined;
  /** The cluster's view of leadership (broker/cluster's ClusterView), null for the single broker; structural, so broker/share does not import broker/cluster. */
  readonly cluster: { notLeader(topic: string, partition: number): { errorCode: number; leaderId: number; leaderEpoch: number } | null } | null;
  readonly waiters: PartitionWaiters;
  readonly otherGroupExists: (groupId: string) => boolean;
  /** A cluster: group configs are in the cluster metadata, not in this broker's file. */
  readonly groupConfigSource?: GroupConfigSource | null;
  /** The group coordinator: share groups keep their records in its __consumer_offsets partitions. */
  readonly groups: Pick<GroupCoordinator, 'attachShareGroups' | 'appendShareRecords' | 'shareGroupAvailability'>;
  /** Registers a listener of topic deletions (by topic id). */
  readonly onTopicDeleted?: (listener: (topicId: string) => void) => void;
}

export interface ShareCoordinatorWiring {
  readonly config: BrokerConfig;
  readonly clock: Clock;
  readonly stateLog: OffsetsTopicLog;
  /** A cluster: serve the partitions loaded with leadership. */
  readonly partitioned: boolean;
  /** Alone: creates __share_group_state if it does not exist yet. */
  readonly ensureStateTopic?: () => Promise<void>;
  /** A cluster: resolves once the partition's appended records are replicated. */
  readonly committed?: (partition: number) => Promise<void>;
}

export function buildShareCoordinator(w: ShareCoordinatorWiring): ShareCoordinator {
  const c = w.config;
  return new ShareCoordinator({
    log: w.stateLog,
    numPartitions: c.getInt('share.coordinator.state.topic.num.partitions'),
    updatesPerSnapshot: c.getInt('share.coordinator.snapshot.update.records.per.snapshot'),
    clock: w.clock,
    partitioned: w.partitioned,
    ...(w.ensureStateTopic === undefined ? {} : { ensureTopic: w.ensureStateTopic }),
    ...(w.committed === undefined ? {} : { committed: w.committed }),
  });
}

export async function startShareGroups(w: ShareWiring): Promise<{ shareGroups: ShareGroups; coordinator: ShareCoordinator }> {
  const c = w.config;
  const configs = new ShareGroupConfigs({
    recordLockDurationMs: c.getInt('group.share.record.lock.duration.ms'),
    minRecordLockDurationMs: c.getInt('group.share.min.record.lock.duration.ms'),
    maxRecordLockDurationMs: c.getInt('group.share.max.record.lock.duration.ms'),
    deliveryCountLimit: c.getInt('group.share.delivery.count.limit'),
    maxRecordLocks: c.getInt('group.share.partition.max.record.locks'),
    sessionTimeoutMs: c.getInt('group.share.session.timeout.ms'),
    minSessionTimeoutMs: c.getInt('group.share.min.session.timeout.ms'),
    maxSessionTimeoutMs: c.getInt('group.share.max.session.timeout.ms'),
    heartbeatIntervalMs: c.getInt('group.share.heartbeat.interval.ms'),
    minHeartbeatIntervalMs: c.getInt('group.share.min.heartbeat.interval.ms'),
    maxHeartbeatIntervalMs: c.getInt('group.share.max.heartbeat.interval.ms'),
  }, path.join(w.metaDir, SHARE_GROUP_CONFIGS_FILE), w.groupConfigSource ?? null);
  await configs.load();
  const coordinator = w.coordinator;
  // Partitioned, partitions are loaded as this broker comes to lead them (ClusterCoordinators).
  if (!coordinator.partitioned && w.stateTopicExists()) await coordinator.start();
  const shareGroups = new ShareGroups({
    clock: w.clock,
    scheduler: w.scheduler,
    log: w.log,
    waiters: w.waiters,
    persister: w.persister,
    configs,
    maxSize: c.getInt('group.share.max.size'),
    maxShareSessions: c.getInt('group.share.max.share.sessions'),
    initializeRetryIntervalMs: c.getInt('group.share.initialize.retry.interval.ms'),
    records: {
      append: (groupId, records) => w.groups.appendShareRecords(groupId, records),
      availability: (groupId) => w.groups.shareGroupAvailability(groupId),
    },
    broker: {
      topicName: (id) => w.store.getById(id)?.name,
      topicByName: (name) => {
        const t = w.store.get(name);
        return t === undefined ? undefined : { topicId: t.topicId, partitionCount: t.partitionCount };
      },
      partition: w.partition,
      notLeader: (topic, p) => w.cluster?.notLeader(topic, p) ?? null,
      otherGroupExists: w.otherGroupExists,
    },
  });
  // The group records replayed from __consumer_offsets (and those of partitions loaded later) reach the share groups.
  w.groups.attachShareGroups({
    replay: (key, value) => {
      try {
        shareGroups.coordinator.replay(key, value);
      } catch (err) {
        w.log.warn({ err }, 'skipping an undecodable share group record of __consumer_offsets');
      }
    },
    unload: (owns) => shareGroups.coordinator.unload(owns),
  });
  w.onTopicDeleted?.((topicId) => shareGroups.coordinator.topicDeleted(topicId));
  // Groups with share-partition state but no records (kept by a Sediment before the records) come back empty; members rejoin by heartbeat.
  for (const groupId of coordinator.groupIds()) if (w.groups.shareGroupAvailability(groupId) === 0) shareGroups.coordinator.getOrCreate(groupId);
  return { shareGroups, coordinator };
}
