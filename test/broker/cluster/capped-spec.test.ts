// __share_group_state is created with at most as many replicas as there are
// registered brokers, and a min.insync.replicas no higher than that.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cappedSpec } from '../../../broker/cluster/coordinators.js';

const spec = { name: '__share_group_state', numPartitions: 50, replicationFactor: 3, capReplicationFactor: true, configs: { 'cleanup.policy': 'compact', 'min.insync.replicas': '2' } };

test('cappedSpec: RF 3 and min.isr 2 stay with three brokers or more', () => {
  assert.deepEqual(cappedSpec(spec, 3), spec);
  assert.deepEqual(cappedSpec(spec, 5), spec);
});

test('cappedSpec: with fewer brokers RF and min.isr come down to them', () => {
  assert.deepEqual(cappedSpec(spec, 2), { ...spec, replicationFactor: 2 });
  assert.deepEqual(cappedSpec(spec, 1), { ...spec, replicationFactor: 1, configs: { 'cleanup.policy': 'compact', 'min.insync.replicas': '1' } });
  assert.equal(cappedSpec(spec, 0).replicationFactor, 1);
});
