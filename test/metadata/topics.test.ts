import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerConfig } from '../../broker/config.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { isKafkaInternalTopic, TopicRegistry, topicNamesCollide, validateTopicName } from '../../metadata/topics.js';
import { isValidUuid } from '../../metadata/uuid.js';

const broker = BrokerConfig.fromProperties({ 'num.partitions': '3', 'node.id': '5' }, { cwd: '/tmp' });

function kafkaError(fn: () => unknown, code: number, pattern?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KafkaError, String(err));
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

describe('topic names (Kafka Topic.validate)', () => {
  it('accepts [a-zA-Z0-9._-] up to 249 chars', () => {
    validateTopicName('a');
    validateTopicName('My_topic-1.x');
    validateTopicName('x'.repeat(249));
    validateTopicName('...');
  });

  it('refuses empty, "." "..", too long, illegal chars with INVALID_TOPIC_EXCEPTION (17)', () => {
    kafkaError(() => validateTopicName(''), 17, /can't be empty/);
    kafkaError(() => validateTopicName('.'), 17, /cannot be "." or ".."/);
    kafkaError(() => validateTopicName('..'), 17);
    kafkaError(() => validateTopicName('x'.repeat(250)), 17, /longer than 249 characters/);
    for (const bad of ['a b', 'a/b', 'ä', 'a:b', 'a\u0000']) kafkaError(() => validateTopicName(bad), 17, /character other than ASCII alphanumerics/);
  });

  it('knows Kafka\'s internal topics', () => {
    assert.equal(isKafkaInternalTopic('__consumer_offsets'), true);
    assert.equal(isKafkaInternalTopic('__transaction_state'), true);
    assert.equal(isKafkaInternalTopic('__remote_log_metadata'), false);
    assert.equal(isKafkaInternalTopic('orders'), false);
  });

  it('"." and "_" collide', () => {
    assert.equal(topicNamesCollide('a.b', 'a_b'), true);
    assert.equal(topicNamesCollide('a.b', 'a.b'), false);
    assert.equal(topicNamesCollide('ab', 'a_b'), false);
  });
});

describe('TopicRegistry.create', () => {
  it('creates with num.partitions for -1, a fresh topic id, normalized configs', () => {
    const r = new TopicRegistry(broker);
    const t = r.create({ name: 'orders', numPartitions: -1, replicationFactor: -1, configs: { 'retention.ms': ' 60000' } });
    assert.equal(t.partitionCount, 3);
    assert.ok(isValidUuid(t.topicId));
    assert.deepEqual(t.configs, { 'retention.ms': '60000' });
    assert.equal(r.get('orders'), t);
    assert.equal(r.getById(t.topicId), t);
    assert.equal(r.create({ name: 'x', numPartitions: 7, replicationFactor: 1 }).partitionCount, 7);
    assert.notEqual(r.get('x')?.topicId, t.topicId);
    assert.deepEqual(r.list().map((x) => x.name), ['orders', 'x']);
  });

  it('refuses an existing or colliding name', () => {
    const r = new TopicRegistry(broker);
    r.create({ name: 'a.b' });
    kafkaError(() => r.create({ name: 'a.b' }), ErrorCode.TOPIC_ALREADY_EXISTS, /Topic 'a.b' already exists./);
    kafkaError(() => r.create({ name: 'a_b' }), ErrorCode.INVALID_TOPIC_EXCEPTION, /collides with existing topic: a.b/);
  });

  it('refuses bad partition counts and replication factors', () => {
    const r = new TopicRegistry(broker);
    kafkaError(() => r.create({ name: 't', numPartitions: 0 }), 37, /non-positive/);
    kafkaError(() => r.create({ name: 't', numPartitions: -2 }), 37);
    kafkaError(() => r.create({ name: 't', numPartitions: 1_000_000 }), 37, /at most 10000/);
    kafkaError(() => r.create({ name: 't', replicationFactor: 0 }), 38, /larger than 0/);
    kafkaError(() => r.create({ name: 't', replicationFactor: 3 }), 38, /only 1 broker\(s\) are registered/);
    assert.equal(r.size, 0);
  });

  it('accepts manual assignments onto this node only', () => {
    const r = new TopicRegistry(broker);
    assert.equal(r.create({ name: 't', assignments: [{ partitionIndex: 1, brokerIds: [5] }, { partitionIndex: 0, brokerIds: [5] }] }).partitionCount, 2);
    kafkaError(() => r.create({ name: 'u', assignments: [{ partitionIndex: 0, brokerIds: [1] }] }), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    kafkaError(() => r.create({ name: 'u', assignments: [{ partitionIndex: 0, brokerIds: [5, 5] }] }), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    kafkaError(() => r.create({ name: 'u', assignments: [{ partitionIndex: 1, brokerIds: [5] }] }), ErrorCode.INVALID_REPLICA_ASSIGNMENT, /consecutively/);
    kafkaError(() => r.create({ name: 'u', numPartitions: 1, assignments: [{ partitionIndex: 0, brokerIds: [5] }] }), ErrorCode.INVALID_REQUEST);
  });

  it('refuses invalid configs and changes nothing', () => {
    const r = new TopicRegistry(broker);
    kafkaError(() => r.create({ name: 't', configs: { 'bogus.key': '1' } }), 40, /Unknown topic config name: bogus.key/);
    kafkaError(() => r.create({ name: 't', configs: { 'cleanup.policy': 'compact', 'remote.storage.enable': 'true' } }), 40);
    assert.equal(r.has('t'), false);
  });

  it('validateOnly runs every check but stores nothing', () => {
    const r = new TopicRegistry(broker);
    const t = r.create({ name: 't' }, { validateOnly: true });
    assert.equal(t.partitionCount, 3);
    assert.equal(r.has('t'), false);
  });

  it('uses the injected random source for topic ids', () => {
    let n = 0;
    const r = new TopicRegistry(broker, [], (buf) => buf.fill(++n));
    const a = r.create({ name: 'a' }).topicId;
    const b = r.create({ name: 'b' }).topicId;
    assert.notEqual(a, b);
  });
});

describe('TopicRegistry delete / partitions / configs', () => {
  it('deletes by name and id', () => {
    const r = new TopicRegistry(broker);
    const a = r.create({ name: 'a' });
    r.create({ name: 'b' });
    assert.equal(r.delete('a'), a);
    assert.equal(r.getById(a.topicId), undefined);
    kafkaError(() => r.delete('a'), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const b = r.get('b');
    assert.ok(b);
    r.deleteById(b.topicId);
    kafkaError(() => r.deleteById(b.topicId), ErrorCode.UNKNOWN_TOPIC_ID);
    // The name can be reused, with a new id.
    assert.notEqual(r.create({ name: 'a' }).topicId, a.topicId);
  });

  it('only increases the partition count', () => {
    const r = new TopicRegistry(broker);
    r.create({ name: 't', numPartitions: 2 });
    kafkaError(() => r.createPartitions('t', 2), 37, /Topic already has 2 partition\(s\)./);
    kafkaError(() => r.createPartitions('t', 1), 37, /currently has 2 partition\(s\); 1 would not be an increase/);
    kafkaError(() => r.createPartitions('nope', 5), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(r.createPartitions('t', 4, null, { validateOnly: true }).partitionCount, 4);
    assert.equal(r.get('t')?.partitionCount, 2);
    assert.equal(r.createPartitions('t', 4).partitionCount, 4);
    kafkaError(() => r.createPartitions('t', 6, [[5]]), ErrorCode.INVALID_REPLICA_ASSIGNMENT, /only 1 assignment/);
    assert.equal(r.createPartitions('t', 6, [[5], [5]]).partitionCount, 6);
    const id = r.get('t')?.topicId;
    assert.equal(r.getById(id ?? '')?.partitionCount, 6);
  });

  it('AlterConfigs replaces, IncrementalAlterConfigs edits, both validated against the old config', () => {
    const r = new TopicRegistry(broker);
    r.create({ name: 't', configs: { 'retention.ms': '1000', 'segment.ms': '500' } });
    assert.deepEqual(r.alterConfigs('t', [{ name: 'retention.ms', value: '2000' }]).configs, { 'retention.ms': '2000' });
    assert.deepEqual(r.incrementalAlterConfigs('t', [{ name: 'flush.ms', op: 'SET', value: '10' }]).configs, { 'retention.ms': '2000', 'flush.ms': '10' });
    kafkaError(() => r.incrementalAlterConfigs('t', [{ name: 'remote.storage.enable', op: 'SET', value: 'false' }]), 40, /disable remote storage/);
    kafkaError(() => r.alterConfigs('t', [{ name: 'local.retention.ms', value: '999999999999' }]), 40, /local.retention.ms/);
    assert.deepEqual(r.get('t')?.configs, { 'retention.ms': '2000', 'flush.ms': '10' });
    const off = r.incrementalAlterConfigs('t', [
      { name: 'remote.storage.enable', op: 'SET', value: 'false' },
      { name: 'remote.log.delete.on.disable', op: 'SET', value: 'true' },
    ]);
    assert.equal(off.configs['remote.storage.enable'], 'false');
    assert.equal(r.logConfig('t').remoteStorageEnable, false);
    assert.equal(r.logConfig('t').retentionMs, 2000);
    assert.equal(r.logConfig('t').producerIdExpirationMs, 86_400_000);
    r.incrementalAlterConfigs('t', [{ name: 'retention.ms', op: 'SET', value: '1' }], { validateOnly: true });
    assert.equal(r.logConfig('t').retentionMs, 2000);
    kafkaError(() => r.alterConfigs('nope', []), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('internal topics are not tiered by default', () => {
    const r = new TopicRegistry(broker);
    r.create({ name: '__consumer_offsets', numPartitions: 50, configs: { 'cleanup.policy': 'compact' } });
    assert.equal(r.logConfig('__consumer_offsets').remoteStorageEnable, false);
    r.create({ name: '__remote_log_metadata', numPartitions: 50, configs: { 'retention.ms': '-1' } });
    assert.equal(r.logConfig('__remote_log_metadata').remoteStorageEnable, false);
  });
});
