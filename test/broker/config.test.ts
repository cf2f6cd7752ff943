import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BrokerConfig, ConfigError, loadBrokerConfig } from '../../broker/config.js';

const cwd = '/srv/sediment';
function config(props: Record<string, string> = {}): BrokerConfig {
  return BrokerConfig.fromProperties(props, { cwd });
}

function configError(props: Record<string, string>, key: string, pattern: RegExp): void {
  assert.throws(
    () => config(props),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
      assert.equal(err.key, key);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe('BrokerConfig defaults', () => {
  it('has Sediment\'s single-node defaults and Kafka\'s log defaults', () => {
    const c = config();
    assert.equal(c.nodeId, 1);
    assert.deepEqual(c.listeners, [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 'PLAINTEXT' }]);
    assert.deepEqual(c.advertisedListeners, c.listeners);
    assert.deepEqual(c.httpListeners, [{ host: '127.0.0.1', port: 9644 }]);
    assert.deepEqual(c.logDirs, ['/srv/sediment/sediment-data']);
    assert.equal(c.numPartitions, 1);
    assert.equal(c.autoCreateTopicsEnable, true);
    assert.equal(c.logSegmentBytes, 1073741824);
    assert.equal(c.logRollMs, 168 * 3_600_000);
    assert.equal(c.logRetentionMs, 168 * 3_600_000);
    assert.equal(c.logRetentionBytes, -1);
    assert.equal(c.logIndexIntervalBytes, 4096);
    assert.equal(c.messageMaxBytes, 1048588);
    assert.equal(c.socketRequestMaxBytes, 104857600);
    assert.equal(c.valueString('log.flush.interval.messages'), '9223372036854775807');
    assert.equal(c.logFlushIntervalMs, c.logFlushSchedulerIntervalMs);
    assert.equal(c.logRetentionCheckIntervalMs, 300000);
    assert.deepEqual(c.logCleanupPolicy, ['delete']);
    assert.equal(c.offsetsTopicNumPartitions, 50);
    assert.equal(c.offsetsRetentionMs, 10080 * 60_000);
    assert.equal(c.groupInitialRebalanceDelayMs, 3000);
    assert.equal(c.logLocalRetentionMs, -2);
    assert.equal(c.logLocalRetentionBytes, -2);
    assert.equal(c.remoteLogStorageSystemEnable, true);
    assert.equal(c.remoteLogManagerTaskIntervalMs, 30000);
    assert.equal(c.remoteFetchMaxWaitMs, 500);
    assert.equal(c.remoteLogIndexFileCacheTotalSizeBytes, 1024 ** 3);
    assert.equal(c.remoteLogStorageUrl, 'file:///srv/sediment/sediment-data/remote');
    assert.equal(c.remoteLogMetadataTopicNumPartitions, 50);
    assert.equal(c.remoteLogMetadataTopicRetentionMs, -1);
    assert.equal(c.clusterId, null);
    assert.equal(c.isSet('num.partitions'), false);
  });
});

describe('BrokerConfig precedence (KafkaConfig)', () => {
  it('log.retention.ms beats .minutes beats .hours', () => {
    assert.equal(config({ 'log.retention.hours': '2' }).logRetentionMs, 2 * 3_600_000);
    assert.equal(config({ 'log.retention.hours': '2', 'log.retention.minutes': '3' }).logRetentionMs, 180_000);
    assert.equal(config({ 'log.retention.hours': '2', 'log.retention.minutes': '3', 'log.retention.ms': '1234' }).logRetentionMs, 1234);
  });

  it('any negative retention means -1 (unlimited)', () => {
    assert.equal(config({ 'log.retention.hours': '-5' }).logRetentionMs, -1);
    assert.equal(config({ 'log.retention.ms': '-100' }).logRetentionMs, -1);
  });

  it('log.roll.ms beats log.roll.hours; jitter likewise', () => {
    assert.equal(config({ 'log.roll.hours': '1' }).logRollMs, 3_600_000);
    assert.equal(config({ 'log.roll.hours': '1', 'log.roll.ms': '500' }).logRollMs, 500);
    assert.equal(config({ 'log.roll.jitter.hours': '1' }).logRollJitterMs, 3_600_000);
  });

  it('log.flush.interval.ms falls back to log.flush.scheduler.interval.ms', () => {
    assert.equal(config({ 'log.flush.scheduler.interval.ms': '2000' }).logFlushIntervalMs, 2000);
    assert.equal(config({ 'log.flush.scheduler.interval.ms': '2000', 'log.flush.interval.ms': '10' }).logFlushIntervalMs, 10);
  });

  it('log.dirs beats log.dir; relative paths resolve against cwd', () => {
    assert.deepEqual(config({ 'log.dir': 'one' }).logDirs, ['/srv/sediment/one']);
    assert.deepEqual(config({ 'log.dir': 'one', 'log.dirs': '/a, b' }).logDirs, ['/a', '/srv/sediment/b']);
    assert.equal(config({ 'log.dirs': '/data' }).remoteLogStorageUrl, 'file:///data/remote');
  });

  it('broker.id stands in for node.id and must agree with it', () => {
    assert.equal(config({ 'broker.id': '7' }).nodeId, 7);
    assert.equal(config({ 'broker.id': '7', 'node.id': '7' }).nodeId, 7);
    configError({ 'broker.id': '7', 'node.id': '8' }, 'broker.id', /must equal node.id \(8\)/);
  });
});

describe('BrokerConfig errors name the key', () => {
  it('refuses an unknown key, hinting at the broker name of a topic key', () => {
    configError({ 'no.such.key': '1' }, 'no.such.key', /Unknown configuration 'no.such.key'/);
    configError({ 'retention.ms': '1' }, 'retention.ms', /broker default is log.retention.ms/);
    configError({ 'remote.storage.enable': 'true' }, 'remote.storage.enable', /topic config/);
  });

  it('refuses values of the wrong type', () => {
    configError({ 'num.partitions': 'abc' }, 'num.partitions', /Invalid value abc for configuration num.partitions: Not a number of type INT/);
    configError({ 'num.partitions': '2147483648' }, 'num.partitions', /Not a number of type INT/);
    configError({ 'log.retention.ms': '9223372036854775808' }, 'log.retention.ms', /Not a number of type LONG/);
    configError({ 'log.retention.ms': '1.5' }, 'log.retention.ms', /LONG/);
    configError({ 'auto.create.topics.enable': 'yes' }, 'auto.create.topics.enable', /true or false/);
    configError({ 'log.cleaner.min.cleanable.ratio': 'x' }, 'log.cleaner.min.cleanable.ratio', /DOUBLE/);
  });

  it('refuses values outside the validator', () => {
    configError({ 'num.partitions': '0' }, 'num.partitions', /Value must be at least 1/);
    configError({ 'log.segment.bytes': '1000' }, 'log.segment.bytes', /Value must be at least 1048576/);
    configError({ 'log.cleaner.min.cleanable.ratio': '1.5' }, 'log.cleaner.min.cleanable.ratio', /no more than 1/);
    configError({ 'log.message.timestamp.type': 'createtime' }, 'log.message.timestamp.type', /one of: CreateTime, LogAppendTime/);
    configError({ 'log.cleanup.policy': 'delete,shred' }, 'log.cleanup.policy', /shred/);
    configError({ 'default.replication.factor': '0' }, 'default.replication.factor', /Value must be at least 1/);
    configError({ 'compression.type': 'ZSTD' }, 'compression.type', /one of: uncompressed, zstd, lz4, snappy, gzip, producer/);
    configError({ 'compression.gzip.level': '0' }, 'compression.gzip.level', /between 1 and 9 or equal to -1/);
    configError({ 'compression.zstd.level': '23' }, 'compression.zstd.level', /no more than 22/);
  });

  it('checks listeners', () => {
    configError({ listeners: 'SSL://127.0.0.1:9093' }, 'listeners', /PLAINTEXT/);
    configError({ listeners: '127.0.0.1:9092' }, 'listeners', /not of the form/);
    configError({ listeners: 'PLAINTEXT://127.0.0.1:70000' }, 'listeners', /out of range/);
    configError({ listeners: '' }, 'listeners', /at least one listener/);
    configError({ listeners: 'PLAINTEXT://a:1,PLAINTEXT://b:2' }, 'listeners', /different name/);
    configError({ 'advertised.listeners': 'PLAINTEXT://0.0.0.0:9092' }, 'advertised.listeners', /not a valid address to advertise/);
    configError({ 'http.listeners': 'https://127.0.0.1:1' }, 'http.listeners', /scheme must be http/);
  });

  it('parses listeners: empty host, port 0, IPv6, advertised apart', () => {
    const c = config({ listeners: 'PLAINTEXT://:0', 'advertised.listeners': 'PLAINTEXT://[::1]:9092', 'http.listeners': '' });
    assert.deepEqual(c.listeners, [{ name: 'PLAINTEXT', host: '', port: 0, securityProtocol: 'PLAINTEXT' }]);
    assert.deepEqual(c.advertisedListeners, [{ name: 'PLAINTEXT', host: '::1', port: 9092, securityProtocol: 'PLAINTEXT' }]);
    assert.deepEqual(c.httpListeners, []);
  });

  it('checks log.local.retention.* against log.retention.* when tiering is on', () => {
    configError({ 'log.retention.bytes': '100', 'log.local.retention.bytes': '200' }, 'log.local.retention.bytes', /not be more than log.retention.bytes/);
    configError({ 'log.retention.ms': '100', 'log.local.retention.ms': '-1' }, 'log.local.retention.ms', /must not be -1/);
    assert.equal(config({ 'log.retention.ms': '100', 'log.local.retention.ms': '50' }).logLocalRetentionMs, 50);
    assert.equal(config({ 'remote.log.storage.system.enable': 'false', 'log.retention.ms': '100', 'log.local.retention.ms': '500' }).logLocalRetentionMs, 500);
  });

  it('checks cluster.id, the remote store URL and session timeouts', () => {
    configError({ 'cluster.id': 'not-a-uuid' }, 'cluster.id', /Uuid/);
    assert.equal(config({ 'cluster.id': 'MkU3OEVBNTcwNTJENDM2Qg' }).clusterId, 'MkU3OEVBNTcwNTJENDM2Qg');
    configError({ 'remote.log.storage.url': 'ftp://x' }, 'remote.log.storage.url', /s3:\/\//);
    assert.equal(config({ 'remote.log.storage.url': 's3://bucket/prefix/' }).remoteLogStorageUrl, 's3://bucket/prefix/');
    assert.equal(config({ 'remote.log.storage.url': 'memory://' }).remoteLogStorageUrl, 'memory://');
    configError({ 'group.min.session.timeout.ms': '10', 'group.max.session.timeout.ms': '5' }, 'group.min.session.timeout.ms', /must not be greater/);
  });
});

describe('BrokerConfig pass-through keys', () => {
  it('collects rsm.config.* with the prefix removed, values verbatim', () => {
    const c = config({ 'rsm.config.endpoint': 'http://127.0.0.1:9000', 'rsm.config.s3.path.style.access': 'true' });
    assert.deepEqual({ ...c.rsmConfig }, { endpoint: 'http://127.0.0.1:9000', 's3.path.style.access': 'true' });
  });

  it('accepts Kafka\'s rlmm.config. prefix for the metadata topic keys', () => {
    const c = config({ 'rlmm.config.remote.log.metadata.topic.num.partitions': '5' });
    assert.equal(c.remoteLogMetadataTopicNumPartitions, 5);
    assert.equal(c.isSet('remote.log.metadata.topic.num.partitions'), true);
    configError({ 'rlmm.config.other': '1' }, 'rlmm.config.other', /Unknown configuration/);
  });

  it('records explicit keys with rendered values', () => {
    const c = config({ 'num.partitions': ' 3 ', 'log.cleanup.policy': 'delete , compact' });
    assert.deepEqual(c.explicitEntries(), [['log.cleanup.policy', 'delete,compact'], ['num.partitions', '3']]);
  });
});

describe('loadBrokerConfig', () => {
  it('reads server.properties, then applies --override on top', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sediment-config-'));
    try {
      const file = path.join(dir, 'server.properties');
      await writeFile(file, '# test\nnum.partitions=3\nlog.dirs=data\nlog.retention.hours=1\n');
      const c = await loadBrokerConfig({ file, overrides: ['num.partitions=6', 'node.id=4'], cwd: dir });
      assert.equal(c.numPartitions, 6);
      assert.equal(c.nodeId, 4);
      assert.equal(c.logRetentionMs, 3_600_000);
      assert.deepEqual(c.logDirs, [path.join(dir, 'data')]);
      await assert.rejects(loadBrokerConfig({ file, overrides: ['bogus=1'] }), /Unknown configuration 'bogus'/);
      await assert.rejects(loadBrokerConfig({ file: path.join(dir, 'missing.properties') }), /Cannot read configuration file/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('without a file uses the defaults', async () => {
    const c = await loadBrokerConfig({ cwd: '/x' });
    assert.deepEqual(c.logDirs, ['/x/sediment-data']);
  });
});
