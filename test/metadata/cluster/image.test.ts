import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetadataImage } from '../../../metadata/cluster/image.js';
import type { MetadataChange, PartitionState, RegisteredBroker, TopicRecord } from '../../../metadata/cluster/records.js';

const broker = (nodeId: number, epoch: bigint): RegisteredBroker => ({ nodeId, incarnationId: `i${nodeId}`, rack: null, endpoints: [], brokerEpoch: epoch });
const topic = (name: string, count: number): TopicRecord => ({ topicId: `id-${name}`, name, partitionCount: count, configs: {} });
const state = (leader: number, partitionEpoch = 0): PartitionState => ({ replicas: [leader], leader, leaderEpoch: 0, isr: [leader], partitionEpoch });

describe('MetadataImage', () => {
  it('builds from a snapshot and answers reads', () => {
    const image = MetadataImage.fromSnapshot({
      revision: 10n,
      problems: [],
      records: [
        { kind: 'cluster-id', clusterId: 'c1' },
        { kind: 'broker', nodeId: 2, broker: broker(2, 5n) },
        { kind: 'broker', nodeId: 1, broker: broker(1, 4n) },
        { kind: 'topic', name: 'b', topic: topic('b', 2) },
        { kind: 'topic', name: 'a', topic: topic('a', 1) },
        { kind: 'partition', topicId: 'id-b', partition: 0, state: state(1) },
        { kind: 'partition', topicId: 'id-b', partition: 1, state: state(2) },
        { kind: 'partition', topicId: 'id-a', partition: 0, state: state(1) },
        { kind: 'config', resource: { type: 'cluster' }, name: 'x', value: '1' },
      ],
    });
    assert.equal(image.revision, 10n);
    assert.equal(image.clusterId, 'c1');
    assert.deepEqual(image.brokers().map((b) => b.nodeId), [1, 2]);
    assert.deepEqual(image.topics().map((t) => t.name), ['a', 'b']);
    assert.equal(image.topicById('id-b')?.name, 'b');
    assert.equal(image.partition('id-b', 1)?.leader, 2);
    assert.equal(image.partition('id-b', 2), undefined);
    assert.deepEqual(image.partitionsLedBy(1), [{ topicId: 'id-a', partition: 0 }, { topicId: 'id-b', partition: 0 }]);
    assert.deepEqual([...image.configs({ type: 'cluster' })], [['x', '1']]);
    assert.equal(image.configs({ type: 'broker', nodeId: 1 }).size, 0);
  });

  it("moves a topic's generation when its record or one of its partitions changes, and only that topic's; a reset moves every one", () => {
    const image = new MetadataImage();
    image.apply(1n, [
      { kind: 'topic', name: 'a', topic: topic('a', 2) },
      { kind: 'topic', name: 'b', topic: topic('b', 1) },
      { kind: 'partition', topicId: 'id-a', partition: 0, state: state(1) },
      { kind: 'partition', topicId: 'id-b', partition: 0, state: state(1) },
    ]);
    const a1 = image.topicGeneration('id-a');
    const b1 = image.topicGeneration('id-b');
    assert.notEqual(a1, undefined);
    assert.equal(image.topicGeneration('id-nope'), undefined);
    image.apply(2n, [{ kind: 'partition', topicId: 'id-a', partition: 1, state: state(2) }]);
    const a2 = image.topicGeneration('id-a');
    assert.notEqual(a2, a1, 'a partition of a changed');
    assert.equal(image.topicGeneration('id-b'), b1, 'b did not change');
    image.apply(3n, [{ kind: 'broker', nodeId: 1, broker: broker(1, 7n) }, { kind: 'config', resource: { type: 'cluster' }, name: 'x', value: '1' }]);
    assert.equal(image.topicGeneration('id-a'), a2, 'broker and config records are no topic change');
    image.apply(4n, [{ kind: 'topic', name: 'b', topic: { ...topic('b', 1), configs: { 'retention.ms': '1' } } }]);
    assert.notEqual(image.topicGeneration('id-b'), b1, "b's record changed");
    const before = [image.topicGeneration('id-a'), image.topicGeneration('id-b')];
    image.reset({ revision: 9n, problems: [], records: [{ kind: 'topic', name: 'a', topic: topic('a', 2) }, { kind: 'topic', name: 'b', topic: topic('b', 1) }] });
    assert.notEqual(image.topicGeneration('id-a'), before[0]);
    assert.notEqual(image.topicGeneration('id-b'), before[1]);
  });

  it('applies revisions in order and ignores ones it already has', () => {
    const image = new MetadataImage();
    const create: MetadataChange[] = [
      { kind: 'topic', name: 't', topic: topic('t', 1) },
      { kind: 'partition', topicId: 'id-t', partition: 0, state: state(1) },
    ];
    assert.equal(image.apply(3n, create), true);
    assert.equal(image.apply(3n, [{ kind: 'partition', topicId: 'id-t', partition: 0, state: state(9) }]), false);
    assert.equal(image.partition('id-t', 0)?.leader, 1, 'a repeated revision changes nothing');
    assert.equal(image.apply(4n, [{ kind: 'partition', topicId: 'id-t', partition: 0, state: state(2, 1) }]), true);
    assert.equal(image.partition('id-t', 0)?.partitionEpoch, 1);
    assert.equal(image.revision, 4n);
  });

  it('partitions past the partition count stay hidden until the topic record grows', () => {
    const image = new MetadataImage();
    image.apply(1n, [{ kind: 'topic', name: 't', topic: topic('t', 1) }, { kind: 'partition', topicId: 'id-t', partition: 0, state: state(1) }]);
    image.apply(2n, [{ kind: 'partition', topicId: 'id-t', partition: 1, state: state(2) }]);
    assert.equal(image.partitions('id-t').length, 1);
    assert.equal(image.partition('id-t', 1), undefined);
    image.apply(3n, [{ kind: 'topic', name: 't', topic: topic('t', 2) }]);
    assert.equal(image.partition('id-t', 1)?.leader, 2);
  });

  it('deleting a topic and re-creating the name with a new id keeps the two apart', () => {
    const image = new MetadataImage();
    image.apply(1n, [{ kind: 'topic', name: 't', topic: topic('t', 1) }, { kind: 'partition', topicId: 'id-t', partition: 0, state: state(1) }]);
    image.apply(2n, [{ kind: 'topic', name: 't', topic: null }, { kind: 'partition', topicId: 'id-t', partition: 0, state: null }]);
    assert.equal(image.topic('t'), undefined);
    assert.equal(image.topicById('id-t'), undefined);
    image.apply(3n, [{ kind: 'topic', name: 't', topic: { ...topic('t', 1), topicId: 'new' } }, { kind: 'partition', topicId: 'new', partition: 0, state: state(3) }]);
    assert.equal(image.topic('t')?.topicId, 'new');
    assert.equal(image.partition('new', 0)?.leader, 3);
    assert.deepEqual(image.partitions('id-t'), []);
  });

  it('a broker deregistering leaves the image; reset replaces everything', () => {
    const image = new MetadataImage();
    image.apply(1n, [{ kind: 'broker', nodeId: 1, broker: broker(1, 1n) }, { kind: 'config', resource: { type: 'broker', nodeId: 1 }, name: 'k', value: 'v' }]);
    image.apply(2n, [{ kind: 'broker', nodeId: 1, broker: null }, { kind: 'config', resource: { type: 'broker', nodeId: 1 }, name: 'k', value: null }]);
    assert.equal(image.broker(1), undefined);
    assert.equal(image.configs({ type: 'broker', nodeId: 1 }).size, 0);
    image.apply(3n, [{ kind: 'broker', nodeId: 2, broker: broker(2, 3n) }]);
    image.reset({ revision: 7n, records: [{ kind: 'broker', nodeId: 5, broker: broker(5, 6n) }], problems: [] });
    assert.deepEqual(image.brokers().map((b) => b.nodeId), [5]);
    assert.equal(image.revision, 7n);
  });
});
