// The broker keys of share groups (KIP-932) and their share coordinator, with
// Kafka 4.3's names, defaults and bounds (ShareGroupConfig, GroupCoordinatorConfig,
// ShareCoordinatorConfig). Kept apart from broker-config-defs.ts so the share
// group work touches that table in one line.
import { atLeast, between, type BrokerConfigDef, type ConfigType, type ConfigValue, type Validator } from './config-schema.js';

function share(name: string, type: ConfigType, defaultValue: ConfigValue, doc: string, validator?: Validator): BrokerConfigDef {
  const def: BrokerConfigDef = { name, type, default: defaultValue, importance: 'medium', doc, scope: 'broker' };
  return validator === undefined ? def : { ...def, validator };
}

export const SHARE_CONFIG_DEFS: readonly BrokerConfigDef[] = [
  share('group.share.session.timeout.ms', 'int', 45000, 'The timeout to detect client failures when using the share group protocol.', atLeast(1)),
  share('group.share.min.session.timeout.ms', 'int', 45000, 'The minimum allowed session timeout for share group members.', atLeast(1)),
  share('group.share.max.session.timeout.ms', 'int', 60000, 'The maximum allowed session timeout for share group members.', atLeast(1)),
  share('group.share.heartbeat.interval.ms', 'int', 5000, 'The heartbeat interval given to the members of a share group.', atLeast(1)),
  share('group.share.min.heartbeat.interval.ms', 'int', 5000, 'The minimum heartbeat interval for share group members.', atLeast(1)),
  share('group.share.max.heartbeat.interval.ms', 'int', 15000, 'The maximum heartbeat interval for share group members.', atLeast(1)),
  share('group.share.max.size', 'int', 200, 'The maximum number of members that a single share group can accommodate.', between(1, 1000)),
  share('group.share.assignors', 'list', ['simple'], 'The server-side assignors for share groups; Sediment has the simple assignor only.'),
  share('group.share.record.lock.duration.ms', 'int', 30000, 'The record acquisition lock duration in milliseconds for share groups.', between(1000, 3600000)),
  share('group.share.min.record.lock.duration.ms', 'int', 15000, 'The record acquisition lock minimum duration in milliseconds for share groups.', between(1000, 30000)),
  share('group.share.max.record.lock.duration.ms', 'int', 60000, 'The record acquisition lock maximum duration in milliseconds for share groups.', between(30000, 3600000)),
  share('group.share.delivery.count.limit', 'int', 5, 'The maximum number of delivery attempts for a record delivered to a share group.', between(2, 10)),
  share('group.share.partition.max.record.locks', 'int', 2000, 'Share-group record lock limit per share-partition.', between(100, 10000)),
  share('group.share.initialize.retry.interval.ms', 'int', 30000, 'Time elapsed before retrying initialize share group state request.', atLeast(1)),
  share('group.share.max.share.sessions', 'int', 2000, 'The maximum number of share sessions per broker.', atLeast(1)),
  share('share.coordinator.state.topic.num.partitions', 'int', 50, 'The number of partitions for the share-group state topic __share_group_state (should not change after the first start).', atLeast(1)),
  share('share.coordinator.state.topic.replication.factor', 'short', 3, 'Replication factor of the share-group state topic in a cluster; Sediment creates it with at most as many replicas as there are registered brokers (Kafka refuses to create it with fewer brokers). A single broker keeps one copy.', atLeast(1)),
  share('share.coordinator.state.topic.segment.bytes', 'int', 104857600, 'The segment size of the share-group state topic.', atLeast(1)),
  share('share.coordinator.state.topic.min.isr', 'short', 2, 'The min.insync.replicas of the share-group state topic (at most its replication factor when that is capped).', atLeast(1)),
  share('share.coordinator.snapshot.update.records.per.snapshot', 'int', 500, 'The number of ShareUpdate records written for a share-partition between two ShareSnapshot records.', between(0, 500)),
];
