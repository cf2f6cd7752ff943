import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerConfig } from '../../broker/config.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { ConfigSource } from '../../metadata/config-schema.js';
import { effectiveTopicConfig, logConfigFor, toLogConfig, validateTopicOverrides } from '../../metadata/topic-config.js';

function broker(props: Record<string, string> = {}): BrokerConfig {
  return BrokerConfig.fromProperties(props, { cwd: '/tmp' });
}

function invalidConfig(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KafkaError, String(err));
    assert.equal(err.code, ErrorCode.INVALID_CONFIG);
    assert.equal(err.code, 40);
    assert.match(err.message, pattern);
    return true;
  });
}

describe('effectiveTopicConfig', () => {
  it('uses overrides first (DYNAMIC_TOPIC_CONFIG)', () => {
    const c = effectiveTopicConfig(broker(), { 'retention.ms': '1000' });
    assert.equal(c.get('retention.ms'), 1000);
    assert.equal(c.entry('retention.ms').source, ConfigSource.DYNAMIC_TOPIC_CONFIG);
  });

  it('inherits broker keys set in server.properties (STATIC_BROKER_CONFIG) with unit conversion', () => {
    const c = effectiveTopicConfig(broker({ 'log.retention.minutes': '5', 'log.roll.hours': '2', 'log.segment.bytes': '2097152', 'message.max.bytes': '5000' }), {});
    assert.equal(c.get('retention.ms'), 300_000);
    assert.equal(c.entry('retention.ms').source, ConfigSource.STATIC_BROKER_CONFIG);
    assert.equal(c.entry('retention.ms').sourceKey, 'log.retention.minutes');
    assert.equal(c.get('segment.ms'), 7_200_000);
    assert.equal(c.get('segment.bytes'), 2097152);
    assert.equal(c.get('max.message.bytes'), 5000);
  });

  it('falls back to broker defaults (DEFAULT_CONFIG)', () => {
    const c = effectiveTopicConfig(broker(), {});
    assert.equal(c.get('retention.ms'), 604_800_000);
    assert.equal(c.entry('retention.ms').source, ConfigSource.DEFAULT_CONFIG);
    assert.equal(c.entry('retention.ms').sourceKey, 'log.retention.hours');
    assert.equal(c.get('segment.bytes'), 1073741824);
    assert.deepEqual(c.get('cleanup.policy'), ['delete']);
    assert.equal(c.get('local.retention.ms'), -2);
    assert.equal(c.get('remote.log.copy.disable'), false);
    assert.equal(c.valueString('flush.ms'), '9223372036854775807');
  });

  it('flush.ms inherits log.flush.interval.ms, then log.flush.scheduler.interval.ms', () => {
    assert.equal(effectiveTopicConfig(broker({ 'log.flush.scheduler.interval.ms': '3000' }), {}).get('flush.ms'), 3000);
    assert.equal(effectiveTopicConfig(broker({ 'log.flush.scheduler.interval.ms': '3000', 'log.flush.interval.ms': '7' }), {}).get('flush.ms'), 7);
  });

  it('remote.storage.enable defaults to true only with broker tiering, delete policy and a non-internal topic', () => {
    assert.equal(effectiveTopicConfig(broker(), {}).get('remote.storage.enable'), true);
    assert.equal(effectiveTopicConfig(broker({ 'remote.log.storage.system.enable': 'false' }), {}).get('remote.storage.enable'), false);
    assert.equal(effectiveTopicConfig(broker(), { 'cleanup.policy': 'compact' }).get('remote.storage.enable'), false);
    assert.equal(effectiveTopicConfig(broker(), { 'cleanup.policy': 'delete,compact' }).get('remote.storage.enable'), false);
    assert.equal(effectiveTopicConfig(broker({ 'log.cleanup.policy': 'compact' }), {}).get('remote.storage.enable'), false);
    assert.equal(effectiveTopicConfig(broker(), {}, { topicName: '__consumer_offsets' }).get('remote.storage.enable'), false);
    assert.equal(effectiveTopicConfig(broker(), { 'remote.storage.enable': 'false' }).get('remote.storage.enable'), false);
  });
});

describe('validateTopicOverrides', () => {
  const b = broker();

  it('normalizes values to Kafka\'s string forms', () => {
    assert.deepEqual(validateTopicOverrides(b, { 'retention.ms': ' 1000 ', 'cleanup.policy': 'delete ', 'min.cleanable.dirty.ratio': '1' }), {
      'retention.ms': '1000',
      'cleanup.policy': 'delete',
      'min.cleanable.dirty.ratio': '1.0',
    });
  });

  it('refuses unknown keys, nulls and bad values with INVALID_CONFIG naming the key', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'retention.mss': '1' }), /^Unknown topic config name: retention.mss$/);
    invalidConfig(() => validateTopicOverrides(b, { 'log.retention.ms': '1' }), /Unknown topic config name: log.retention.ms/);
    invalidConfig(() => validateTopicOverrides(b, { 'retention.ms': null }), /Null value not supported for topic configs: retention.ms/);
    invalidConfig(() => validateTopicOverrides(b, { 'retention.ms': 'soon' }), /Invalid value soon for configuration retention.ms: Not a number of type LONG/);
    invalidConfig(() => validateTopicOverrides(b, { 'retention.ms': '-2' }), /retention.ms: Value must be at least -1/);
    invalidConfig(() => validateTopicOverrides(b, { 'segment.bytes': '1024' }), /segment.bytes: Value must be at least 1048576/);
    invalidConfig(() => validateTopicOverrides(b, { 'cleanup.policy': 'delete,forever', 'remote.storage.enable': 'false' }), /forever/);
    invalidConfig(() => validateTopicOverrides(b, { 'message.timestamp.type': 'Now' }), /message.timestamp.type/);
    invalidConfig(() => validateTopicOverrides(b, { 'min.cleanable.dirty.ratio': '2' }), /no more than 1/);
  });

  it('compression.type takes Kafka\'s names (exact case) and levels, and reaches the log config', () => {
    for (const t of ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer']) {
      assert.deepEqual(validateTopicOverrides(b, { 'compression.type': t }), { 'compression.type': t });
    }
    invalidConfig(() => validateTopicOverrides(b, { 'compression.type': 'Zstd' }), /compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer/);
    invalidConfig(() => validateTopicOverrides(b, { 'compression.type': 'none' }), /String must be one of/);
    invalidConfig(() => validateTopicOverrides(b, { 'compression.gzip.level': '0' }), /between 1 and 9 or equal to -1/);
    invalidConfig(() => validateTopicOverrides(b, { 'compression.lz4.level': '18' }), /no more than 17/);
    assert.deepEqual(logConfigFor(broker(), {}).compression, { type: 'producer', gzipLevel: -1, zstdLevel: 3 });
    assert.deepEqual(logConfigFor(broker(), { 'compression.type': 'uncompressed' }).compression?.type, 'none');
    assert.deepEqual(logConfigFor(broker(), { 'compression.type': 'zstd', 'compression.zstd.level': '7' }).compression, { type: 'zstd', gzipLevel: -1, zstdLevel: 7 });
    // The broker's compression.type and levels are the topic defaults.
    assert.deepEqual(logConfigFor(broker({ 'compression.type': 'gzip', 'compression.gzip.level': '9' }), {}).compression, { type: 'gzip', gzipLevel: 9, zstdLevel: 3 });
  });

  it('refuses min.compaction.lag.ms > max.compaction.lag.ms', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '5' }), /min.compaction.lag.ms \(10\) > max.compaction.lag.ms \(5\)/);
  });

  it('accepts internal.segment.bytes below segment.bytes\' minimum and applies it', () => {
    const overrides = validateTopicOverrides(b, { 'internal.segment.bytes': '4096' });
    assert.equal(logConfigFor(b, overrides).segmentBytes, 4096);
  });
});

describe('tiering rules', () => {
  const b = broker();

  it('refuses remote.storage.enable=true on a compacted topic', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'cleanup.policy': 'compact', 'remote.storage.enable': 'true' }), /cleanup.policy=delete/);
    invalidConfig(() => validateTopicOverrides(b, { 'cleanup.policy': 'compact,delete', 'remote.storage.enable': 'true' }), /cleanup.policy=delete/);
    assert.deepEqual(validateTopicOverrides(b, { 'cleanup.policy': '', 'remote.storage.enable': 'true' }), { 'cleanup.policy': '', 'remote.storage.enable': 'true' });
  });

  it('a compacted topic without remote.storage.enable is simply not tiered', () => {
    assert.deepEqual(validateTopicOverrides(b, { 'cleanup.policy': 'compact' }), { 'cleanup.policy': 'compact' });
  });

  it('refuses tiering when the broker has it off', () => {
    invalidConfig(() => validateTopicOverrides(broker({ 'remote.log.storage.system.enable': 'false' }), { 'remote.storage.enable': 'true' }), /Tiered Storage functionality is disabled/);
  });

  it('refuses local.retention above total retention (ms and bytes), and -1 under a bounded total', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'retention.ms': '1000', 'local.retention.ms': '2000' }), /local.retention.ms: Value must not be more than retention.ms property value: 1000/);
    invalidConfig(() => validateTopicOverrides(b, { 'retention.bytes': '1000', 'local.retention.bytes': '2000' }), /local.retention.bytes: Value must not be more than retention.bytes/);
    invalidConfig(() => validateTopicOverrides(b, { 'retention.bytes': '1000', 'local.retention.bytes': '-1' }), /must not be -1/);
    // Inherited retention counts too: the broker default is 7 days.
    invalidConfig(() => validateTopicOverrides(b, { 'local.retention.ms': String(8 * 86_400_000) }), /retention.ms property value: 604800000/);
    assert.ok(validateTopicOverrides(b, { 'retention.ms': '-1', 'local.retention.ms': '999999999999' }));
    assert.ok(validateTopicOverrides(b, { 'retention.ms': '1000', 'local.retention.ms': '1000' }));
    // Not tiered: no constraint.
    assert.ok(validateTopicOverrides(b, { 'remote.storage.enable': 'false', 'retention.ms': '1000', 'local.retention.ms': '2000' }));
  });

  it('with remote.log.copy.disable=true, local retention must equal total retention', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'remote.log.copy.disable': 'true', 'retention.ms': '1000', 'local.retention.ms': '500' }), /identical value/);
    assert.ok(validateTopicOverrides(b, { 'remote.log.copy.disable': 'true', 'retention.ms': '1000', 'local.retention.ms': '1000' }));
  });

  it('refuses turning tiering off unless remote.log.delete.on.disable=true', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'remote.storage.enable': 'false' }, { previous: {} }), /invalid to disable remote storage without deleting remote data/);
    invalidConfig(
      () => validateTopicOverrides(b, { 'remote.storage.enable': 'false' }, { previous: { 'remote.storage.enable': 'true' } }),
      /remote.log.delete.on.disable=true/,
    );
    assert.ok(validateTopicOverrides(b, { 'remote.storage.enable': 'false', 'remote.log.delete.on.disable': 'true' }, { previous: {} }));
    // At creation there is nothing to turn off.
    assert.ok(validateTopicOverrides(b, { 'remote.storage.enable': 'false' }));
    // Already off: fine.
    assert.ok(validateTopicOverrides(b, { 'remote.storage.enable': 'false' }, { previous: { 'remote.storage.enable': 'false' } }));
  });

  it('switching a tiered topic to compact is refused with a message about the policy', () => {
    invalidConfig(() => validateTopicOverrides(b, { 'cleanup.policy': 'compact' }, { previous: {} }), /cleanup.policy=compact cannot be set on a topic in remote storage/);
  });
});

describe('toLogConfig', () => {
  it('maps every field, resolving -2 local retention to the total', () => {
    const c = effectiveTopicConfig(broker({ 'log.retention.bytes': '1000000' }), {
      'retention.ms': '86400000',
      'local.retention.ms': '3600000',
      'segment.bytes': '1048576',
      'message.timestamp.type': 'LogAppendTime',
      'flush.messages': '1',
      'index.interval.bytes': '100',
    });
    const l = toLogConfig(c);
    assert.equal(l.retentionMs, 86_400_000);
    assert.equal(l.localRetentionMs, 3_600_000);
    assert.equal(l.retentionBytes, 1_000_000);
    assert.equal(l.localRetentionBytes, 1_000_000);
    assert.equal(l.segmentBytes, 1_048_576);
    assert.equal(l.segmentMs, 604_800_000);
    assert.equal(l.messageTimestampType, 'LogAppendTime');
    assert.equal(l.flushIntervalMessages, 1);
    assert.equal(l.indexIntervalBytes, 100);
    assert.equal(l.segmentIndexBytes, 10_485_760);
    assert.equal(l.maxMessageBytes, 1_048_588);
    assert.deepEqual(l.cleanupPolicy, { delete: true, compact: false });
    assert.equal(l.remoteStorageEnable, true);
    assert.equal(l.remoteLogCopyDisable, false);
    assert.equal(l.deleteRetentionMs, 86_400_000);
    assert.equal(l.minCleanableDirtyRatio, 0.5);
    assert.equal(l.minCompactionLagMs, 0);
    assert.ok((l.maxCompactionLagMs ?? 0) > 9e18);
  });

  it('builds every topic\'s LogConfig with the same keys in the same order (one hidden class for the append path)', () => {
    // The log's hot functions read this.config on every append; LogConfigs of
    // different shapes (one built by a spread adding producerIdExpirationMs)
    // deoptimized them once per produce run (node --trace-deopt: "wrong map").
    const plain = logConfigFor(broker(), {});
    const compacted = logConfigFor(broker(), { 'cleanup.policy': 'compact', 'segment.bytes': '104857600', 'compression.type': 'lz4' });
    const noExpiry = toLogConfig(effectiveTopicConfig(broker(), {}));
    assert.deepEqual(Object.keys(compacted), Object.keys(plain));
    assert.deepEqual(Object.keys(noExpiry), Object.keys(plain));
    assert.equal(plain.producerIdExpirationMs, 86_400_000);
    assert.equal(noExpiry.producerIdExpirationMs, undefined);
  });

  it('keeps -1 (unlimited) as is', () => {
    const l = logConfigFor(broker(), { 'retention.ms': '-1', 'retention.bytes': '-1' });
    assert.equal(l.retentionMs, -1);
    assert.equal(l.localRetentionMs, -1);
    assert.equal(l.localRetentionBytes, -1);
  });

  it('reports both policies', () => {
    assert.deepEqual(logConfigFor(broker(), { 'cleanup.policy': 'compact,delete' }).cleanupPolicy, { delete: true, compact: true });
  });
});

describe('value size', () => {
  it('refuses values longer than 32767 characters', () => {
    invalidConfig(() => validateTopicOverrides(broker(), { 'cleanup.policy': 'delete,'.repeat(5000) }), /exceeds the maximum value size of 32767/);
  });
});
