import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaError, ErrorCode } from '../../broker/protocol/errors.js';
import { brokerConfigDef, TOPIC_CONFIG_DEFS } from '../../metadata/config-defs.js';
import {
  applyLayerChanges,
  checkDynamicKeys,
  DYNAMIC_BROKER_CONFIG_NAMES,
  dynamicOnly,
  incrementalLayerChanges,
  replaceLayer,
} from '../../metadata/dynamic-broker-configs.js';

function code(fn: () => unknown, expected: number, message?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KafkaError, String(e));
    assert.equal(e.code, expected, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

describe('dynamic broker configs', () => {
  it('every dynamic key is a broker key that feeds a topic config, or one read with each log config or at each new replica, or one without effect', () => {
    const topicDefaults = new Set(TOPIC_CONFIG_DEFS.flatMap((d) => d.synonyms.map((s) => s.name)));
    const readWithLogConfig = new Set(['producer.id.expiration.ms']);
    // Read by the replica fetcher when it takes on a partition (broker/replica/replication.ts).
    const readAtNewReplica = new Set(['follower.fetch.last.tiered.offset.enable']);
    for (const name of DYNAMIC_BROKER_CONFIG_NAMES) {
      const def = brokerConfigDef(name);
      assert.ok(def !== undefined, `${name} is a broker key`);
      const noEffect = def.doc.includes('it has no effect in Sediment');
      assert.ok(topicDefaults.has(name) || readWithLogConfig.has(name) || readAtNewReplica.has(name) || noEffect, `${name} is applied live (or has no effect)`);
    }
    // Kafka's read-only synonyms stay read-only: only log.retention.ms / log.roll.ms are dynamic.
    for (const name of ['log.retention.hours', 'log.retention.minutes', 'log.roll.hours', 'log.dirs', 'listeners', 'num.replica.fetchers']) {
      assert.ok(!DYNAMIC_BROKER_CONFIG_NAMES.has(name), name);
    }
  });

  it('refuses read-only keys with INVALID_REQUEST and unknown ones with INVALID_CONFIG; removing any key is allowed', () => {
    code(() => checkDynamicKeys({ 'log.dirs': '/x', 'log.retention.ms': '5' }), ErrorCode.INVALID_REQUEST, /Cannot update these configs dynamically: Set\(log\.dirs\)/);
    code(() => checkDynamicKeys({ 'no.such.key': '1' }), ErrorCode.INVALID_CONFIG, /no\.such\.key/);
    checkDynamicKeys({ 'log.retention.ms': '5', 'log.dirs': null });
  });

  it('IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on one layer, no-ops dropped', () => {
    const current = new Map([['log.retention.ms', '5'], ['message.max.bytes', '2000']]);
    const effective = (name: string) => (name === 'log.cleanup.policy' ? ['delete'] : null);
    assert.deepEqual(
      incrementalLayerChanges(current, [
        { name: 'log.retention.ms', op: 'SET', value: '7' },
        { name: 'message.max.bytes', op: 'DELETE', value: null },
        { name: 'log.segment.bytes', op: 'DELETE', value: null },
        { name: 'log.cleanup.policy', op: 2, value: 'compact' },
      ], effective),
      { 'log.retention.ms': '7', 'message.max.bytes': null, 'log.cleanup.policy': 'delete,compact' },
    );
    assert.deepEqual(incrementalLayerChanges(current, [{ name: 'log.retention.ms', op: 'SET', value: '5' }], effective), {});
    assert.deepEqual(incrementalLayerChanges(current, [{ name: 'log.cleanup.policy', op: 'SUBTRACT', value: 'delete' }], effective), { 'log.cleanup.policy': '' });
    code(() => incrementalLayerChanges(current, [{ name: 'log.retention.ms', op: 'APPEND', value: '1' }], effective), ErrorCode.INVALID_CONFIG, /append/);
    code(() => incrementalLayerChanges(current, [{ name: 'a', op: 0, value: '1' }, { name: 'a', op: 1, value: null }], effective), ErrorCode.INVALID_REQUEST, /duplicate/);
    code(() => incrementalLayerChanges(current, [{ name: 'a', op: 9, value: '1' }], effective), ErrorCode.INVALID_REQUEST);
  });

  it('AlterConfigs replaces the layer: keys not named are removed', () => {
    const current = new Map([['log.retention.ms', '5'], ['message.max.bytes', '2000']]);
    const changes = replaceLayer(current, [{ name: 'message.max.bytes', value: '3000' }]);
    assert.deepEqual(changes, { 'log.retention.ms': null, 'message.max.bytes': '3000' });
    assert.deepEqual([...applyLayerChanges(current, changes)], [['message.max.bytes', '3000']]);
  });

  it('a stored layer keeps only dynamic keys (one written by hand may hold others)', () => {
    const { kept, ignored } = dynamicOnly(new Map([['log.retention.ms', '5'], ['log.dirs', '/x']]));
    assert.deepEqual([...kept], [['log.retention.ms', '5']]);
    assert.deepEqual(ignored, ['log.dirs']);
  });
});
