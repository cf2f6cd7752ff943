// Replication throttles (broker/replica/replication-quota.ts): which partitions
// a `*.replication.throttled.replicas` value throttles on which broker, the
// rate limits from config values, Kafka's sampled rate over 11 one-second
// samples with an elapsed time of at least 10 s, and the dynamic broker
// config changes IncrementalAlterConfigs may make (broker/cluster/dynamic-broker-configs.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brokerConfigChanges, brokerConfigResource } from '../../../broker/cluster/dynamic-broker-configs.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { ReplicationQuota, UNLIMITED_RATE, parseRate, throttledOn } from '../../../broker/replica/replication-quota.js';

function code(c: number): (e: unknown) => boolean {
  return (e) => e instanceof KafkaError && e.code === c;
}

describe('replication throttles', () => {
  it('throttled replicas: partition:broker entries name this broker, * names every partition', () => {
    assert.equal(throttledOn('0:1,0:2,1:3', 0, 2), true);
    assert.equal(throttledOn('0:1,0:2,1:3', 1, 2), false);
    assert.equal(throttledOn(' 1:3 ', 1, 3), true);
    assert.equal(throttledOn('*', 7, 9), true);
    assert.equal(throttledOn('', 0, 1), false);
    assert.equal(throttledOn(undefined, 0, 1), false);
  });

  it('rates: a non-negative integer, else unlimited (Long.MAX_VALUE)', () => {
    assert.equal(parseRate('1048576'), 1048576);
    assert.equal(parseRate(undefined), UNLIMITED_RATE);
    assert.equal(parseRate('-5'), UNLIMITED_RATE);
  });

  it('the rate is bytes over at least 10 s until the window fills, then over the last 11 samples; the quota is exceeded above the limit', () => {
    const clock = new ManualClock(0);
    let limit = 1000;
    const q = new ReplicationQuota({ clock, limit: () => limit, throttled: (t, p) => t === 'a' && p === 0 });
    assert.equal(q.isThrottled('a', 0), true);
    assert.equal(q.isThrottled('a', 1), false);
    q.record(9000);
    assert.equal(q.rate(), 900, 'a first burst counts over 10 s');
    assert.equal(q.isQuotaExceeded(), false);
    q.record(2000);
    assert.equal(q.rate(), 1100);
    assert.equal(q.isQuotaExceeded(), true);
    clock.advance(20_000); // every sample has left the 11 s window
    assert.equal(q.rate(), 0);
    for (let s = 0; s < 20; s++) {
      q.record(2000);
      clock.advance(1000);
    }
    // The samples of the last 11 s that are not at its edge: 10 of 2000 bytes over 10 s.
    assert.ok(Math.abs(q.rate() - 2000) < 1e-9, `rate ${q.rate()}`);
    assert.equal(q.isQuotaExceeded(), true);
    limit = UNLIMITED_RATE;
    assert.equal(q.isQuotaExceeded(), false, 'no limit: never exceeded');
  });

  it('dynamic broker configs: the throttle rates can be set (a long) and deleted; other names, bad values and append are refused', () => {
    assert.deepEqual(brokerConfigResource('2'), { type: 'broker', nodeId: 2 });
    assert.deepEqual(brokerConfigResource(''), { type: 'cluster' });
    assert.throws(() => brokerConfigResource('x'), code(ErrorCode.INVALID_REQUEST));
    assert.deepEqual(
      brokerConfigChanges([
        { name: 'leader.replication.throttled.rate', op: 0, value: '1000' },
        { name: 'follower.replication.throttled.rate', op: 1, value: null },
        { name: 'replica.alter.log.dirs.io.max.bytes.per.second', op: 1, value: null },
      ]),
      { 'leader.replication.throttled.rate': '1000', 'follower.replication.throttled.rate': null },
    );
    assert.throws(() => brokerConfigChanges([{ name: 'log.retention.ms', op: 0, value: '1' }]), code(ErrorCode.INVALID_REQUEST));
    assert.throws(() => brokerConfigChanges([{ name: 'leader.replication.throttled.rate', op: 0, value: 'fast' }]), code(ErrorCode.INVALID_CONFIG));
    assert.throws(() => brokerConfigChanges([{ name: 'leader.replication.throttled.rate', op: 2, value: '1' }]), code(ErrorCode.INVALID_CONFIG));
    assert.throws(() => brokerConfigChanges([{ name: 'leader.replication.throttled.rate', op: 0, value: '1' }, { name: 'leader.replication.throttled.rate', op: 1, value: null }]), code(ErrorCode.INVALID_REQUEST));
  });
});
