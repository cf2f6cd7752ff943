import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerConfig } from '../../broker/config.js';
import { TOPIC_CONFIG_NAMES } from '../../metadata/config-defs.js';
import { ConfigSource } from '../../metadata/config-schema.js';
import { describeBrokerConfigs, describeTopicConfigs, type DescribeConfigsEntry } from '../../metadata/describe-configs.js';

function broker(props: Record<string, string> = {}): BrokerConfig {
  return BrokerConfig.fromProperties(props, { cwd: '/tmp' });
}

function one(entries: DescribeConfigsEntry[], name: string): DescribeConfigsEntry {
  const e = entries.find((x) => x.name === name);
  assert.ok(e, name);
  return e;
}

describe('describeTopicConfigs', () => {
  it('lists every non-internal topic key by default, sorted', () => {
    const entries = describeTopicConfigs(broker(), {});
    assert.deepEqual(entries.map((e) => e.name), [...TOPIC_CONFIG_NAMES]);
    for (const e of entries) {
      assert.equal(e.readOnly, false);
      assert.equal(e.isSensitive, false);
      assert.deepEqual(e.synonyms, []);
      assert.equal(e.documentation, null);
    }
  });

  it('an override: source 1, synonyms override -> static broker -> default', () => {
    const entries = describeTopicConfigs(broker({ 'log.retention.ms': '5000' }), { 'retention.ms': '1000' }, { includeSynonyms: true, keys: ['retention.ms'] });
    assert.equal(entries.length, 1);
    const e = one(entries, 'retention.ms');
    assert.equal(e.value, '1000');
    assert.equal(e.configSource, ConfigSource.DYNAMIC_TOPIC_CONFIG);
    assert.equal(e.isDefault, false);
    assert.equal(e.configType, 5);
    assert.deepEqual(e.synonyms, [
      { name: 'retention.ms', value: '1000', source: 1 },
      { name: 'log.retention.ms', value: '5000', source: 4 },
      { name: 'log.retention.hours', value: '168', source: 5 },
    ]);
  });

  it('inherited from server.properties: source 4', () => {
    const e = one(describeTopicConfigs(broker({ 'log.segment.bytes': '2097152' }), {}, { includeSynonyms: true }), 'segment.bytes');
    assert.equal(e.value, '2097152');
    assert.equal(e.configSource, ConfigSource.STATIC_BROKER_CONFIG);
    assert.deepEqual(e.synonyms, [
      { name: 'log.segment.bytes', value: '2097152', source: 4 },
      { name: 'log.segment.bytes', value: '1073741824', source: 5 },
    ]);
  });

  it('nothing set: source 5 with the broker default as synonym; keys without a broker key have none', () => {
    const entries = describeTopicConfigs(broker(), {}, { includeSynonyms: true, includeDocumentation: true });
    const seg = one(entries, 'segment.ms');
    assert.equal(seg.value, '604800000');
    assert.equal(seg.configSource, 5);
    assert.equal(seg.isDefault, true);
    assert.deepEqual(seg.synonyms, [{ name: 'log.roll.hours', value: '168', source: 5 }]);
    const rse = one(entries, 'remote.storage.enable');
    assert.equal(rse.value, 'true');
    assert.equal(rse.configSource, 5);
    assert.deepEqual(rse.synonyms, []);
    assert.equal(rse.configType, 1);
    assert.match(rse.documentation ?? '', /remote storage/);
    assert.equal(one(entries, 'cleanup.policy').configType, 7);
    assert.equal(one(entries, 'min.cleanable.dirty.ratio').value, '0.5');
    assert.equal(one(entries, 'min.cleanable.dirty.ratio').configType, 6);
    assert.equal(one(entries, 'compression.type').configType, 2);
    assert.equal(one(entries, 'max.message.bytes').configType, 3);
    assert.equal(one(entries, 'flush.messages').value, '9223372036854775807');
  });

  it('skips unknown requested keys', () => {
    assert.deepEqual(describeTopicConfigs(broker(), {}, { keys: ['nope', 'segment.bytes'] }).map((e) => e.name), ['segment.bytes']);
    assert.deepEqual(describeTopicConfigs(broker(), {}, { keys: [] }), []);
  });
});

describe('describeBrokerConfigs', () => {
  it('shows static and default sources, read-only, with synonyms from the described key down', () => {
    const entries = describeBrokerConfigs(broker({ 'log.retention.minutes': '30', 'rsm.config.secret.access.key': 'x' }), { includeSynonyms: true });
    const minutes = one(entries, 'log.retention.minutes');
    assert.equal(minutes.value, '30');
    assert.equal(minutes.configSource, 4);
    assert.equal(minutes.readOnly, true);
    assert.deepEqual(minutes.synonyms, [
      { name: 'log.retention.minutes', value: '30', source: 4 },
      { name: 'log.retention.hours', value: '168', source: 5 },
    ]);
    const ms = one(entries, 'log.retention.ms');
    assert.equal(ms.value, null);
    // Kafka drops synonyms until the described key itself: unset -> none -> DEFAULT_CONFIG.
    assert.equal(ms.configSource, 5);
    assert.deepEqual(ms.synonyms, []);
    const parts = one(entries, 'num.partitions');
    assert.equal(parts.value, '1');
    assert.equal(parts.configSource, 5);
    assert.ok(!entries.some((e) => e.name.startsWith('rsm.config.')));
  });

  it('takes computed values when given', () => {
    const entries = describeBrokerConfigs(broker(), { keys: ['cluster.id'], effective: { 'cluster.id': 'abc' } });
    assert.equal(one(entries, 'cluster.id').value, 'abc');
  });
});
