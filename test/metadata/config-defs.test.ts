import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BROKER_CONFIG_DEFS, brokerConfigDef, brokerConfigSynonyms, TOPIC_CONFIG_DEFS, TOPIC_CONFIG_NAMES, topicConfigDef } from '../../metadata/config-defs.js';
import { checkValue, formatConfigValue, parseConfigValue, type ConfigDef } from '../../metadata/config-schema.js';

describe('config tables', () => {
  it('names are unique and every key has a doc string', () => {
    for (const defs of [BROKER_CONFIG_DEFS, TOPIC_CONFIG_DEFS] as readonly (readonly ConfigDef[])[]) {
      const names = defs.map((d) => d.name);
      assert.equal(new Set(names).size, names.length);
      for (const d of defs) assert.ok(d.doc.length > 20, `${d.name} has a doc`);
    }
  });

  it('every non-null default passes its own validator and survives a format/parse round trip', () => {
    for (const d of [...BROKER_CONFIG_DEFS, ...TOPIC_CONFIG_DEFS] as ConfigDef[]) {
      if (d.default === null) continue;
      checkValue(d, d.default);
      const text = formatConfigValue(d.type, d.default);
      assert.notEqual(text, null);
      assert.deepEqual(parseConfigValue(d, text as string), d.default, d.name);
    }
  });

  it('topic keys inherit from the broker keys Kafka uses (ServerTopicConfigSynonyms)', () => {
    const expected: Record<string, string[]> = {
      'retention.ms': ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
      'segment.bytes': ['log.segment.bytes'],
      'segment.ms': ['log.roll.ms', 'log.roll.hours'],
      'segment.jitter.ms': ['log.roll.jitter.ms', 'log.roll.jitter.hours'],
      'local.retention.ms': ['log.local.retention.ms'],
      'local.retention.bytes': ['log.local.retention.bytes'],
      'retention.bytes': ['log.retention.bytes'],
      'cleanup.policy': ['log.cleanup.policy'],
      'max.message.bytes': ['message.max.bytes'],
      'message.timestamp.type': ['log.message.timestamp.type'],
      'index.interval.bytes': ['log.index.interval.bytes'],
      'segment.index.bytes': ['log.index.size.max.bytes'],
      'flush.messages': ['log.flush.interval.messages'],
      'flush.ms': ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'],
      'file.delete.delay.ms': ['log.segment.delete.delay.ms'],
      'delete.retention.ms': ['log.cleaner.delete.retention.ms'],
      'min.cleanable.dirty.ratio': ['log.cleaner.min.cleanable.ratio'],
      'min.compaction.lag.ms': ['log.cleaner.min.compaction.lag.ms'],
      'max.compaction.lag.ms': ['log.cleaner.max.compaction.lag.ms'],
      'min.insync.replicas': ['min.insync.replicas'],
      'compression.type': ['compression.type'],
      'compression.gzip.level': ['compression.gzip.level'],
      'compression.lz4.level': ['compression.lz4.level'],
      'compression.zstd.level': ['compression.zstd.level'],
      'remote.storage.enable': [],
    };
    for (const [topic, brokers] of Object.entries(expected)) {
      assert.deepEqual(topicConfigDef(topic)?.synonyms.map((s) => s.name), brokers, topic);
    }
    assert.equal(topicConfigDef('segment.ms')?.synonyms[1]?.factor, 3_600_000);
    assert.equal(topicConfigDef('retention.ms')?.synonyms[1]?.factor, 60_000);
  });

  it('lists the topic keys the brief and Kafka name, internal keys hidden', () => {
    for (const k of ['cleanup.policy', 'compression.type', 'delete.retention.ms', 'file.delete.delay.ms', 'flush.messages', 'flush.ms',
      'index.interval.bytes', 'max.compaction.lag.ms', 'max.message.bytes', 'message.timestamp.type', 'message.timestamp.before.max.ms',
      'message.timestamp.after.max.ms', 'min.cleanable.dirty.ratio', 'min.compaction.lag.ms', 'min.insync.replicas', 'retention.bytes',
      'retention.ms', 'segment.bytes', 'segment.index.bytes', 'segment.jitter.ms', 'segment.ms', 'unclean.leader.election.enable',
      'message.downconversion.enable', 'remote.storage.enable', 'local.retention.ms', 'local.retention.bytes', 'remote.log.copy.disable',
      'remote.log.delete.on.disable']) {
      assert.ok(TOPIC_CONFIG_NAMES.includes(k), k);
    }
    assert.ok(!TOPIC_CONFIG_NAMES.includes('internal.segment.bytes'));
    assert.deepEqual([...TOPIC_CONFIG_NAMES], [...TOPIC_CONFIG_NAMES].sort());
  });

  it('broker synonym groups follow DynamicBrokerConfig.brokerConfigSynonyms', () => {
    assert.deepEqual(brokerConfigSynonyms('log.retention.hours'), ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours']);
    assert.deepEqual(brokerConfigSynonyms('log.flush.interval.ms'), ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms']);
    assert.deepEqual(brokerConfigSynonyms('num.partitions'), ['num.partitions']);
    assert.equal(brokerConfigDef('num.partitions')?.default, 1);
  });
});

describe('value parsing and rendering (ConfigDef.parseType / convertToString)', () => {
  const def = (type: ConfigDef['type']): ConfigDef => ({ name: 'k', type, default: null, importance: 'low', doc: '' });
  it('trims, parses and renders each type', () => {
    assert.equal(parseConfigValue(def('int'), ' 42 '), 42);
    assert.equal(parseConfigValue(def('long'), '-9223372036854775808'), -(2 ** 63));
    assert.equal(formatConfigValue('long', -(2 ** 63)), '-9223372036854775808');
    assert.equal(formatConfigValue('long', 2 ** 63), '9223372036854775807');
    assert.equal(parseConfigValue(def('boolean'), 'TRUE'), true);
    assert.deepEqual(parseConfigValue(def('list'), ' a , b,c '), ['a', 'b', 'c']);
    assert.deepEqual(parseConfigValue(def('list'), ''), []);
    assert.equal(formatConfigValue('list', ['a', 'b']), 'a,b');
    assert.equal(parseConfigValue(def('double'), '0.25'), 0.25);
    assert.equal(formatConfigValue('double', 1), '1.0');
    assert.equal(formatConfigValue('double', 0.5), '0.5');
    assert.equal(parseConfigValue(def('short'), '32767'), 32767);
    assert.throws(() => parseConfigValue(def('short'), '32768'), /SHORT/);
    assert.equal(parseConfigValue(def('password'), ' secret '), ' secret ');
  });
});

describe('docs rows', () => {
  it('renders every key with type, default, valid values and inheritance', async () => {
    const { configDocRows } = await import('../../metadata/config-defs.js');
    const topic = configDocRows('topic');
    const retention = topic.find((r) => r.name === 'retention.ms');
    assert.deepEqual(retention, {
      name: 'retention.ms',
      scope: 'topic',
      type: 'LONG',
      default: '604800000',
      validValues: '[-1,...]',
      importance: 'medium',
      doc: retention?.doc,
      serverDefaultProperties: ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
    });
    assert.match(topic.find((r) => r.name === 'remote.storage.enable')?.default ?? '', /remote.log.storage.system.enable=true/);
    assert.ok(!topic.some((r) => r.name === 'internal.segment.bytes'));
    const brokerRows = configDocRows('broker');
    assert.equal(brokerRows.find((r) => r.name === 'log.flush.interval.messages')?.default, '9223372036854775807');
    assert.equal(brokerRows.find((r) => r.name === 'log.cleanup.policy')?.validValues, '[compact, delete]');
    assert.equal(brokerRows.find((r) => r.name === 'log.retention.ms')?.default, 'log.retention.minutes');
    assert.equal(brokerRows.length, BROKER_CONFIG_DEFS.length);
  });
});
