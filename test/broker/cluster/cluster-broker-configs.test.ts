// Dynamic broker configs over the in-memory store twin: two brokers, each
// following the image; a change written through one is in force on both.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { BrokerConfig } from '../../../broker/config.js';
import { DynamicBrokerConfig } from '../../../broker/dynamic-broker-config.js';
import { ClusterBrokerConfigs, brokerResource, layersFrom } from '../../../broker/cluster/cluster-broker-configs.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { replicaManagerConfig } from '../../../broker/replica/replication.js';
import { ConfigSource } from '../../../metadata/config-schema.js';
import { describeBrokerConfigs, describeDefaultBrokerConfigs, describeTopicConfigs } from '../../../metadata/describe-configs.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import { effectiveTopicConfig, logConfigFor } from '../../../metadata/topic-config.js';

const log = pino({ level: 'silent' });

interface Node {
  readonly nodeId: number;
  readonly store: MemoryClusterMetadataStore;
  readonly dynamic: DynamicBrokerConfig;
  readonly admin: ClusterBrokerConfigs;
  readonly follower: MetadataImageFollower;
  readonly applied: string[][];
}

async function cluster(statics: Record<number, Record<string, string>>): Promise<{ nodes: Map<number, Node>; close: () => Promise<void> }> {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const server = new MemoryMetadataServer(clock, scheduler);
  const nodes = new Map<number, Node>();
  const followers: MetadataImageFollower[] = [];
  for (const [id, props] of Object.entries(statics)) {
    const nodeId = Number(id);
    const store = new MemoryClusterMetadataStore(server);
    const dynamic = new DynamicBrokerConfig(BrokerConfig.fromProperties({ 'node.id': id, 'log.dirs': `/tmp/unused-${id}`, ...props }));
    const applied: string[][] = [];
    let admin: ClusterBrokerConfigs | undefined;
    const follower = new MetadataImageFollower(store, { scheduler, onChange: () => admin?.imageChanged() });
    await follower.start();
    admin = new ClusterBrokerConfigs({
      store,
      image: follower.image,
      dynamic,
      nodeId,
      waitForRevision: (rev) => follower.waitForRevision(rev),
      onApplied: (changed) => applied.push([...changed]),
      log,
    });
    followers.push(follower);
    nodes.set(nodeId, { nodeId, store, dynamic, admin, follower, applied });
  }
  return { nodes, close: async () => { for (const f of followers) await f.close(); } };
}

/** Resolves once every node's image shows what the server holds now. */
async function settle(nodes: Map<number, Node>, revision: bigint): Promise<void> {
  for (const n of nodes.values()) await n.follower.waitForRevision(revision);
}

async function rejectsWith(p: Promise<unknown>, code: number, message?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof KafkaError, String(e));
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

describe('cluster dynamic broker configs (store twin)', () => {
  it('a cluster-wide default set through broker 1 is in force on broker 2, for topic defaults and DescribeConfigs', async () => {
    const { nodes, close } = await cluster({ 1: {}, 2: { 'log.retention.hours': '1' } });
    const b1 = nodes.get(1)!;
    const b2 = nodes.get(2)!;
    await b1.admin.incrementalAlter('', [{ name: 'log.retention.ms', op: 'SET', value: '60000' }, { name: 'message.max.bytes', op: 'SET', value: '2048' }], false);
    await settle(nodes, b1.follower.image.revision);

    assert.deepEqual(b2.applied, [['log.retention.ms', 'message.max.bytes']]);
    assert.equal(b2.dynamic.get('log.retention.ms'), 60000);
    const logConfig = logConfigFor(b2.dynamic, {});
    assert.equal(logConfig.retentionMs, 60000, 'the topic default follows the dynamic default over the static log.retention.hours');
    assert.equal(logConfig.maxMessageBytes, 2048);
    assert.equal(logConfigFor(b2.dynamic, { 'retention.ms': '5' }).retentionMs, 5, 'a topic override still wins');
    assert.equal(effectiveTopicConfig(b2.dynamic, {}).entry('retention.ms').source, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);

    const topic = describeTopicConfigs(b2.dynamic, {}, { keys: ['retention.ms'], includeSynonyms: true })[0]!;
    assert.equal(topic.value, '60000');
    assert.equal(topic.configSource, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    assert.deepEqual(topic.synonyms.map((s) => [s.name, s.value, s.source]), [
      ['log.retention.ms', '60000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['log.retention.hours', '1', ConfigSource.STATIC_BROKER_CONFIG],
      ['log.retention.hours', '168', ConfigSource.DEFAULT_CONFIG],
    ]);

    const defaults = describeDefaultBrokerConfigs(b2.dynamic, { includeSynonyms: true });
    assert.deepEqual(defaults.map((e) => [e.name, e.value, e.configSource, e.readOnly]), [
      ['log.retention.ms', '60000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, false],
      ['message.max.bytes', '2048', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, false],
    ]);
    assert.deepEqual(defaults[0]!.synonyms.map((s) => s.source), [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]);
    await close();
  });

  it('follower.fetch.last.tiered.offset.enable is dynamic (Kafka\'s DynamicReplicationConfig): a cluster default reaches the replication config read at each new replica', async () => {
    const { nodes, close } = await cluster({ 1: {}, 2: {} });
    const b1 = nodes.get(1)!;
    const b2 = nodes.get(2)!;
    // As Replication builds it: the static config, with the config in force read at each use.
    const enabled = replicaManagerConfig(b2.dynamic.staticConfig, () => b2.dynamic.current).fetchFromLastTieredOffset!;
    assert.equal(enabled(), false, 'the default');
    // kafka-configs.sh --alter --entity-type brokers --entity-default --add-config follower.fetch.last.tiered.offset.enable=true
    await b1.admin.incrementalAlter('', [{ name: 'follower.fetch.last.tiered.offset.enable', op: 'SET', value: 'true' }], false);
    await settle(nodes, b1.follower.image.revision);
    assert.deepEqual(b2.applied, [['follower.fetch.last.tiered.offset.enable']]);
    assert.equal(enabled(), true, 'in force on broker 2 without a restart');
    const entry = describeBrokerConfigs(b2.dynamic, { keys: ['follower.fetch.last.tiered.offset.enable'], includeSynonyms: false });
    assert.deepEqual(entry.map((e) => [e.name, e.value, e.configSource, e.readOnly]), [
      ['follower.fetch.last.tiered.offset.enable', 'true', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, false],
    ]);
    // Broker 2's own layer beats the default; a value that is not a boolean is refused before anything is written.
    await b1.admin.incrementalAlter('2', [{ name: 'follower.fetch.last.tiered.offset.enable', op: 'SET', value: 'false' }], false);
    await settle(nodes, b1.follower.image.revision);
    assert.equal(enabled(), false);
    assert.equal(b1.dynamic.current.getBoolean('follower.fetch.last.tiered.offset.enable'), true);
    await rejectsWith(b1.admin.incrementalAlter('', [{ name: 'follower.fetch.last.tiered.offset.enable', op: 'SET', value: 'maybe' }], false), ErrorCode.INVALID_REQUEST, /follower\.fetch\.last\.tiered\.offset\.enable/);
    await close();
  });

  it("a broker's own layer beats the default on that broker only; DescribeConfigs lists both as synonyms", async () => {
    const { nodes, close } = await cluster({ 1: {}, 2: {} });
    const b1 = nodes.get(1)!;
    const b2 = nodes.get(2)!;
    await b1.admin.incrementalAlter('', [{ name: 'message.max.bytes', op: 'SET', value: '2048' }], false);
    await b1.admin.incrementalAlter('2', [{ name: 'message.max.bytes', op: 'SET', value: '4096' }], false);
    await settle(nodes, b1.follower.image.revision);
    assert.equal(b1.dynamic.get('message.max.bytes'), 2048);
    assert.equal(b2.dynamic.get('message.max.bytes'), 4096);
    const entry = describeBrokerConfigs(b2.dynamic, { keys: ['message.max.bytes', 'log.dirs'], includeSynonyms: true });
    assert.deepEqual(entry.map((e) => [e.name, e.configSource, e.readOnly]), [
      ['message.max.bytes', ConfigSource.DYNAMIC_BROKER_CONFIG, false],
      ['log.dirs', ConfigSource.STATIC_BROKER_CONFIG, true],
    ]);
    assert.deepEqual(entry[0]!.synonyms.map((s) => [s.value, s.source]), [
      ['4096', ConfigSource.DYNAMIC_BROKER_CONFIG],
      ['2048', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['1048588', ConfigSource.DEFAULT_CONFIG],
    ]);
    // Removing broker 2's own value: the default is in force again.
    await b1.admin.incrementalAlter('2', [{ name: 'message.max.bytes', op: 'DELETE', value: null }], false);
    await settle(nodes, b1.follower.image.revision);
    assert.equal(b2.dynamic.get('message.max.bytes'), 2048);
    await close();
  });

  it('refuses read-only keys, unknown keys, bad values and bad combinations before writing anything; validateOnly writes nothing', async () => {
    const { nodes, close } = await cluster({ 1: {}, 2: {} });
    const b1 = nodes.get(1)!;
    const before = b1.follower.image.revision;
    await rejectsWith(b1.admin.incrementalAlter('', [{ name: 'log.dirs', op: 'SET', value: '/x' }], false), ErrorCode.INVALID_REQUEST, /Cannot update these configs dynamically/);
    await rejectsWith(b1.admin.incrementalAlter('', [{ name: 'log.retention.hours', op: 'SET', value: '1' }], false), ErrorCode.INVALID_REQUEST);
    await rejectsWith(b1.admin.incrementalAlter('', [{ name: 'nope.nope', op: 'SET', value: '1' }], false), ErrorCode.INVALID_CONFIG);
    await rejectsWith(b1.admin.incrementalAlter('', [{ name: 'message.max.bytes', op: 'SET', value: 'lots' }], false), ErrorCode.INVALID_REQUEST, /message\.max\.bytes/);
    // Tiering on (the default): local retention may not exceed total retention (Kafka's validateBrokerLogConfigValues).
    await rejectsWith(b1.admin.incrementalAlter('', [{ name: 'log.retention.ms', op: 'SET', value: '1000' }, { name: 'log.local.retention.ms', op: 'SET', value: '5000' }], false), ErrorCode.INVALID_REQUEST, /log\.local\.retention\.ms/);
    await rejectsWith(b1.admin.alter('x1', [], false), ErrorCode.INVALID_REQUEST);
    await b1.admin.incrementalAlter('', [{ name: 'message.max.bytes', op: 'SET', value: '2048' }], true);
    assert.equal(b1.follower.image.revision, before, 'nothing was written');
    assert.equal(b1.dynamic.get('message.max.bytes'), 1048588);
    await close();
  });

  it('AlterConfigs (legacy) replaces the whole layer', async () => {
    const { nodes, close } = await cluster({ 1: {}, 2: {} });
    const b1 = nodes.get(1)!;
    await b1.admin.incrementalAlter('', [{ name: 'message.max.bytes', op: 'SET', value: '2048' }, { name: 'log.retention.ms', op: 'SET', value: '60000' }], false);
    // A replication throttle rate beside them (broker/cluster/dynamic-broker-configs.ts' key) is not this layer's to replace.
    await b1.store.alterConfigs({ type: 'cluster' }, { 'leader.replication.throttled.rate': '1000' });
    await b1.admin.alter('', [{ name: 'log.segment.bytes', value: '2097152' }], false);
    await settle(nodes, b1.follower.image.revision);
    assert.deepEqual([...layersFrom(nodes.get(2)!.follower.image, 2).defaults].sort(), [['leader.replication.throttled.rate', '1000'], ['log.segment.bytes', '2097152']]);
    assert.equal(nodes.get(2)!.dynamic.get('message.max.bytes'), 1048588);
    await close();
  });

  it('a layer written by hand that does not validate leaves the configs in force; non-dynamic keys in it are ignored', () => {
    const dynamic = new DynamicBrokerConfig(BrokerConfig.fromProperties({ 'log.dirs': '/tmp/unused' }));
    assert.deepEqual(dynamic.apply({ defaults: new Map([['message.max.bytes', '2048'], ['log.dirs', '/x']]), perBroker: new Map() }), ['message.max.bytes']);
    assert.throws(() => dynamic.apply({ defaults: new Map([['message.max.bytes', 'lots']]), perBroker: new Map() }), /message\.max\.bytes/);
    assert.equal(dynamic.get('message.max.bytes'), 2048);
    assert.equal(dynamic.valueString('log.dirs'), '/tmp/unused');
  });

  it('resource names: "" is the cluster default, a node id a broker, anything else INVALID_REQUEST', () => {
    assert.deepEqual(brokerResource(''), { type: 'cluster' });
    assert.deepEqual(brokerResource('3'), { type: 'broker', nodeId: 3 });
    for (const bad of ['-1', '03', 'b', '99999999999']) assert.throws(() => brokerResource(bad), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REQUEST);
  });
});
