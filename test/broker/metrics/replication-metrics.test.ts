// The replication metrics of a broker of a cluster, from a real metadata image
// kept by the in-memory store twin: UnderReplicatedPartitions and
// UnderMinIsrPartitionCount over the partitions the broker leads,
// OfflinePartitionsCount on the controller only, and the ISR shrink/expand
// counters and follower lag fed by the ReplicaManager's events.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replicationPart } from '../../../broker/cluster/replication-part.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { BrokerMetrics } from '../../../broker/metrics/broker-metrics.js';
import type { BrokerParts } from '../../../broker/metrics/broker-view.js';
import { replicationCounts } from '../../../broker/metrics/replication-view.js';
import type { ReplicationEvent } from '../../../broker/replica/replication-events.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import type { PartitionState } from '../../../metadata/cluster/records.js';
import type { LogConfig } from '../../../metadata/log-config.js';

const SESSION = { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 };
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

async function setUp() {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const server = new MemoryMetadataServer(clock, scheduler);
  const store = new MemoryClusterMetadataStore(server);
  await store.initialize({ proposedClusterId: 'replication-metrics' });
  const session = await store.registerBroker({ nodeId: 1, incarnationId: 'inc-1', rack: null, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9001, securityProtocol: 'PLAINTEXT' }] }, SESSION);
  const follower = new MetadataImageFollower(store, { scheduler });
  await follower.start();
  const full = (leader: number): { replicas: number[]; leader: number; leaderEpoch: number; isr: number[] } => ({ replicas: [1, 2, 3], leader, leaderEpoch: 0, isr: [1, 2, 3] });
  const revision = await store.createTopic({ topicId: TOPIC_ID, name: 'orders', partitionCount: 4, configs: { 'min.insync.replicas': '2' } }, [full(1), full(1), full(1), full(2)]);
  await follower.waitForRevision(revision);
  const listeners: Array<(e: ReplicationEvent) => void> = [];
  const part = (nodeId: number) =>
    replicationPart({
      nodeId,
      image: follower.image,
      manager: { leaderState: () => undefined, onEvent: (l) => void listeners.push(l) },
      local: { store: { get: () => undefined, logConfig: () => ({}) as LogConfig }, partitionLog: () => undefined },
      defaultMinIsr: 1,
    });
  const alter = async (partition: number, change: Partial<PartitionState>): Promise<void> => {
    const cur = follower.image.partition(TOPIC_ID, partition);
    if (cur === undefined) throw new Error('no partition');
    const next = await store.alterPartition({ topicId: TOPIC_ID, partition }, cur, { replicas: cur.replicas, leader: cur.leader, leaderEpoch: cur.leaderEpoch, isr: cur.isr, ...change });
    await follower.waitForRevision(server.revision);
    assert.equal(follower.image.partition(TOPIC_ID, partition)?.partitionEpoch, next.partitionEpoch);
  };
  return { store, session, follower, part, alter, emit: (e: ReplicationEvent) => listeners.forEach((l) => l(e)), server };
}

function metricsFor(replication: BrokerParts['replication']): BrokerMetrics {
  const parts: BrokerParts = {
    topics: { store: { list: () => [], getById: () => undefined }, partition: () => undefined, partitionLog: () => undefined, isInternal: () => false },
    groups: { isLoaded: false, listGroups: () => ({ errorCode: 0, groups: [] }), describeGroups: () => [], fetchOffsets: () => [], rebalanceCounts: () => new Map() } as unknown as BrokerParts['groups'],
    remoteLogManager: null,
    ...(replication === undefined ? {} : { replication }),
  };
  return new BrokerMetrics(parts, { runtimeMetrics: false });
}

function value(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels === '' ? ' ' : `{${labels}} `}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('replication metrics', () => {
  it('count under-replicated and under-min-ISR partitions among those the broker leads', async () => {
    const c = await setUp();
    assert.deepEqual(replicationCounts(c.part(1)), { leaderCount: 3, underReplicated: 0, underMinIsr: 0, offline: 0 });
    await c.alter(0, { isr: [1, 2] });
    await c.alter(1, { isr: [1] });
    await c.alter(3, { isr: [2] });
    assert.deepEqual(replicationCounts(c.part(1)), { leaderCount: 3, underReplicated: 2, underMinIsr: 1, offline: 0 });
    // Broker 2 leads partition 3 alone: under-replicated and under min.insync.replicas=2.
    assert.deepEqual(replicationCounts(c.part(2)), { leaderCount: 1, underReplicated: 1, underMinIsr: 1, offline: 0 });
    assert.deepEqual(replicationCounts(c.part(3)), { leaderCount: 0, underReplicated: 0, underMinIsr: 0, offline: 0 });
  });

  it('report offline partitions on the controller only', async () => {
    const c = await setUp();
    await c.alter(3, { leader: -1, leaderEpoch: 1, isr: [2] });
    assert.equal(replicationCounts(c.part(1)).offline, 0, 'no controller yet');
    assert.notEqual(await c.store.campaignController(c.session), null);
    await c.follower.waitForRevision(c.server.revision);
    assert.equal(replicationCounts(c.part(1)).offline, 1);
    assert.equal(replicationCounts(c.part(2)).offline, 0, 'broker 2 is not the controller');
    const text = await metricsFor(c.part(1)).scrape();
    assert.equal(value(text, 'sediment_offline_partitions'), 1);
    assert.equal(value(text, 'sediment_leader_partitions'), 3);
  });

  it('expose the counts, ISR changes and follower lag under Prometheus names', async () => {
    const c = await setUp();
    const metrics = metricsFor(c.part(1));
    await c.alter(1, { isr: [1] });
    c.emit({ type: 'isr-shrink', topic: 'orders', partition: 1, isr: [1], changed: [2, 3], partitionEpoch: 1 });
    c.emit({ type: 'isr-shrink', topic: 'orders', partition: 0, isr: [1, 3], changed: [2], partitionEpoch: 1 });
    c.emit({ type: 'isr-expand', topic: 'orders', partition: 0, isr: [1, 2, 3], changed: [2], partitionEpoch: 2 });
    c.emit({ type: 'follower-lag', topic: 'orders', partition: 0, replicaId: 2, lag: 40n });
    c.emit({ type: 'follower-lag', topic: 'orders', partition: 0, replicaId: 2, lag: 7n });
    c.emit({ type: 'follower-lag', topic: 'orders', partition: 2, replicaId: 3, lag: 5n });
    let text = await metrics.scrape();
    assert.equal(value(text, 'sediment_under_replicated_partitions'), 1);
    assert.equal(value(text, 'sediment_under_min_isr_partitions'), 1);
    assert.equal(value(text, 'sediment_isr_shrinks_total'), 2);
    assert.equal(value(text, 'sediment_isr_expands_total'), 1);
    assert.equal(value(text, 'sediment_replica_follower_lag', 'topic="orders",partition="0",replica="2"'), 7);
    assert.equal(value(text, 'sediment_replica_follower_lag', 'topic="orders",partition="2",replica="3"'), 5);
    // Losing leadership of partition 2 drops its follower lags: they belong to a term that ended.
    c.emit({ type: 'role', topic: 'orders', partition: 2, role: 'follower', leaderEpoch: 1 });
    text = await metrics.scrape();
    assert.equal(value(text, 'sediment_replica_follower_lag', 'topic="orders",partition="2",replica="3"'), undefined);
    assert.equal(value(text, 'sediment_isr_shrinks_total'), 2, 'counters keep their totals across scrapes');
  });

  it('count the record bytes this broker appended as a follower, per topic', async () => {
    const c = await setUp();
    const metrics = metricsFor(c.part(1));
    c.emit({ type: 'follower-fetched', topic: 'orders', partition: 0, logEndOffset: 10n, highWatermark: 5n, appendedBytes: 700 });
    c.emit({ type: 'follower-fetched', topic: 'orders', partition: 1, logEndOffset: 10n, highWatermark: 10n, appendedBytes: 300 });
    c.emit({ type: 'follower-fetched', topic: 'orders', partition: 1, logEndOffset: 10n, highWatermark: 10n, appendedBytes: 0 });
    c.emit({ type: 'follower-fetched', topic: 'other', partition: 0, logEndOffset: 2n, highWatermark: 2n, appendedBytes: 64 });
    const text = await metrics.scrape();
    assert.equal(value(text, 'sediment_replica_fetch_bytes_total', 'topic="orders"'), 1000);
    assert.equal(value(text, 'sediment_replica_fetch_bytes_total', 'topic="other"'), 64);
  });

  it('are absent on a single broker', async () => {
    const text = await metricsFor(undefined).scrape();
    assert.equal(value(text, 'sediment_under_replicated_partitions'), undefined);
  });
});
