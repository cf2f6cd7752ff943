import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../metadata/config-schema.js';
import { parseEtcdConnect, describeEtcdConnect } from '../../../metadata/cluster/etcd-connect.js';
import { decodeEntry, decodeLayout, encodeBroker, encodePartition, encodeTopic, isInvalid, partitionKey } from '../../../metadata/cluster/layout.js';

describe('cluster metadata layout', () => {
  it('round-trips records through their keys and JSON values', () => {
    const reg = { nodeId: 3, incarnationId: 'abc', rack: 'r1', endpoints: [{ name: 'PLAINTEXT', host: 'h', port: 1, securityProtocol: 'PLAINTEXT' }] };
    assert.deepEqual(decodeEntry('brokers/3', encodeBroker(reg), 42n), { kind: 'broker', nodeId: 3, broker: { ...reg, brokerEpoch: 42n } });
    const t = { topicId: 'tid', name: 'orders', partitionCount: 2, configs: { 'retention.ms': '5' } };
    assert.deepEqual(decodeEntry('topics/orders', encodeTopic(t), 1n), { kind: 'topic', name: 'orders', topic: t });
    const s = { replicas: [1, 2], leader: 1, leaderEpoch: 4, isr: [1], partitionEpoch: 9 };
    assert.deepEqual(decodeEntry(partitionKey('tid', 1), encodePartition(s), 1n), { kind: 'partition', topicId: 'tid', partition: 1, state: s });
    assert.deepEqual(decodeEntry('configs/brokers/7/log.retention.ms', '5', 1n), { kind: 'config', resource: { type: 'broker', nodeId: 7 }, name: 'log.retention.ms', value: '5' });
    assert.deepEqual(decodeEntry('configs/cluster/a.b', null, 0n), { kind: 'config', resource: { type: 'cluster' }, name: 'a.b', value: null });
    assert.deepEqual(decodeEntry('topics/orders', null, 0n), { kind: 'topic', name: 'orders', topic: null });
    assert.equal(decodeEntry('layout', '{"version":1}', 1n), null);
    assert.equal(decodeEntry('later-layout-folder/x', 'y', 1n), null);
  });

  it('a value that does not fit its key is reported, never thrown', () => {
    const bad: Array<[string, string]> = [
      ['brokers/1', 'not json'],
      ['brokers/1', '{"nodeId":2,"incarnationId":"x","rack":null,"endpoints":[]}'],
      ['brokers/x', '{}'],
      ['topics/a', '{"topicId":"t","name":"b","partitionCount":1,"configs":{}}'],
      ['topics/a', '{"topicId":"t","name":"a","partitionCount":1,"configs":{"k":1}}'],
      ['partitions/t/0', '{"replicas":["1"],"leader":1,"leaderEpoch":0,"isr":[],"partitionEpoch":0}'],
      ['partitions/t/-1', '{}'],
      ['partitions/t', '{}'],
      ['configs/brokers/x/k', 'v'],
    ];
    for (const [key, value] of bad) {
      const out = decodeEntry(key, value, 1n);
      assert.ok(isInvalid(out), `${key}=${value} should be invalid`);
      assert.match(out.invalid, new RegExp(`^key ${key.replace(/[/]/g, '\\/')}`));
    }
  });

  it('reads the layout version, showing anything else as text', () => {
    assert.equal(decodeLayout('{"version":1}'), 1);
    assert.equal(decodeLayout('{"version":7,"extra":true}'), 7);
    assert.equal(decodeLayout('v2'), '"v2"');
  });

  it('parses etcd.connect as zookeeper.connect: hosts, then an optional prefix', () => {
    assert.deepEqual(parseEtcdConnect('127.0.0.1:2379'), { endpoints: ['127.0.0.1:2379'], prefix: '/sediment' });
    assert.deepEqual(parseEtcdConnect('a:1,b.example:2,[::1]:3/prod/kafka/'), { endpoints: ['a:1', 'b.example:2', '[::1]:3'], prefix: '/prod/kafka' });
    assert.deepEqual(parseEtcdConnect('a:1/'), { endpoints: ['a:1'], prefix: '' });
    assert.equal(describeEtcdConnect(parseEtcdConnect('a:1/')), 'a:1/');
    for (const bad of ['', '/x', 'a', 'a:0', 'a:70000', 'a:1,', 'http://a:1', 'a:1//x', 'a:1/x y']) {
      assert.throws(() => parseEtcdConnect(bad), (e: unknown) => e instanceof ConfigError && e.key === 'etcd.connect', bad);
    }
  });
});
