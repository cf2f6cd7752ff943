// group.consumer.* in the broker config: Kafka's defaults, assignor names
// (short or class names), and the start-up bound checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConfig, ConfigError } from '../../../../broker/config.js';

const config = (props: Record<string, string> = {}): BrokerConfig => BrokerConfig.fromProperties(props, { cwd: '/srv/sediment' });

test('group.consumer.* defaults are Kafka\'s', () => {
  assert.deepEqual(config().consumerGroupConfig, {
    sessionTimeoutMs: 45_000,
    minSessionTimeoutMs: 45_000,
    maxSessionTimeoutMs: 60_000,
    heartbeatIntervalMs: 5_000,
    minHeartbeatIntervalMs: 5_000,
    maxHeartbeatIntervalMs: 15_000,
    assignors: ['uniform', 'range'],
    maxSize: 2_147_483_647,
    migrationPolicy: 'bidirectional',
  });
});

test('assignors by short or Kafka class name; an unknown one is refused', () => {
  const c = config({ 'group.consumer.assignors': 'org.apache.kafka.coordinator.group.assignor.RangeAssignor,uniform' });
  assert.deepEqual(c.consumerGroupConfig.assignors, ['range', 'uniform']);
  assert.throws(() => config({ 'group.consumer.assignors': 'sticky' }), (e: unknown) => e instanceof ConfigError && /Unknown assignor sticky/.test(e.message));
});

test('session timeout and heartbeat interval outside their bounds refuse to start', () => {
  for (const props of <Record<string, string>[]>[
    { 'group.consumer.session.timeout.ms': '30000' },
    { 'group.consumer.session.timeout.ms': '70000' },
    { 'group.consumer.heartbeat.interval.ms': '1000' },
    { 'group.consumer.min.session.timeout.ms': '1000', 'group.consumer.session.timeout.ms': '4000', 'group.consumer.min.heartbeat.interval.ms': '500', 'group.consumer.heartbeat.interval.ms': '4000' },
  ]) {
    assert.throws(() => config(props), (e: unknown) => e instanceof ConfigError, JSON.stringify(props));
  }
  assert.equal(config({ 'group.consumer.min.session.timeout.ms': '6000', 'group.consumer.session.timeout.ms': '6000', 'group.consumer.min.heartbeat.interval.ms': '500', 'group.consumer.heartbeat.interval.ms': '500' }).consumerGroupConfig.sessionTimeoutMs, 6000);
  assert.throws(() => config({ 'group.consumer.migration.policy': 'sideways' }), (e: unknown) => e instanceof ConfigError);
});
