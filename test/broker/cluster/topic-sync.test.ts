// TopicSync over a fake local topic service: a pass brings in step only the
// topics whose image generation moved (or that the local store lost), and
// tells its listeners which ones.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { TopicSync } from '../../../broker/cluster/topic-sync.js';
import type { BrokerTopics } from '../../../broker/topic-service.js';
import { MetadataImage } from '../../../metadata/cluster/image.js';
import type { PartitionState, TopicRecord } from '../../../metadata/cluster/records.js';

const topic = (name: string, count: number): TopicRecord => ({ topicId: `id-${name}`, name, partitionCount: count, configs: {} });
const state = (leader: number, leaderEpoch = 0): PartitionState => ({ replicas: [leader], leader, leaderEpoch, isr: [leader], partitionEpoch: leaderEpoch });

/** What TopicSync uses of BrokerTopics: a store of topic records, and which topics were adopted. */
function fakeLocal() {
  const records = new Map<string, { name: string; topicId: string }>();
  const adopted: string[] = [];
  const deleted: Array<{ name: string; deletesRemote: ((partition: number) => boolean) | undefined }> = [];
  const local = {
    store: { list: () => [...records.values()], get: (name: string) => records.get(name) },
    isInternal: () => false,
    async adopt(record: TopicRecord, isReplica: (p: number) => boolean): Promise<boolean> {
      for (let i = 0; i < record.partitionCount; i++) isReplica(i);
      adopted.push(record.name);
      const changed = records.get(record.name)?.topicId !== record.topicId;
      records.set(record.name, { name: record.name, topicId: record.topicId });
      return changed;
    },
    async deleteTopic(name: string, deletesRemote?: (partition: number) => boolean): Promise<void> {
      records.delete(name);
      deleted.push({ name, deletesRemote });
    },
    partitionLog: () => undefined,
    async removeReplica(): Promise<boolean> {
      return false;
    },
  };
  return { local: local as unknown as BrokerTopics, records, adopted, deleted };
}

function imageWith(topics: number, partitions: number): MetadataImage {
  const image = MetadataImage.fromSnapshot({
    revision: 1n,
    problems: [],
    records: Array.from({ length: topics }, (_, t) => [
      { kind: 'topic' as const, name: `t${t}`, topic: topic(`t${t}`, partitions) },
      ...Array.from({ length: partitions }, (_, p) => ({ kind: 'partition' as const, topicId: `id-t${t}`, partition: p, state: state(1) })),
    ]).flat(),
  });
  return image;
}

describe('TopicSync', () => {
  it('after the first pass, adopts only the topics whose record or partitions changed, and names them to its listeners', async () => {
    const image = imageWith(3, 4);
    const { local, adopted } = fakeLocal();
    const sync = new TopicSync(local, image, 1, new ManualScheduler(new ManualClock(0)), silentLogger());
    const passes: string[][] = [];
    sync.onPass((topics) => passes.push([...topics].sort()));
    await sync.syncNow();
    assert.deepEqual(adopted.sort(), ['t0', 't1', 't2']);
    assert.deepEqual(passes, [['t0', 't1', 't2']]);

    adopted.length = 0;
    image.apply(2n, [{ kind: 'partition', topicId: 'id-t1', partition: 2, state: state(2, 1) }]);
    await sync.syncNow();
    assert.deepEqual(adopted, ['t1'], 'only the topic whose partition moved');
    assert.deepEqual(passes.at(-1), ['t1']);

    adopted.length = 0;
    await sync.syncNow();
    assert.deepEqual(adopted, [], 'nothing changed: nothing adopted');
    assert.deepEqual(passes.at(-1), []);

    image.apply(3n, [{ kind: 'topic', name: 't2', topic: { ...topic('t2', 5) } }, { kind: 'partition', topicId: 'id-t2', partition: 4, state: state(1) }]);
    await sync.syncNow();
    assert.deepEqual(adopted, ['t2'], 'a grown topic');
  });

  it('adopts again a topic the local store lost even though the image did not change', async () => {
    const image = imageWith(2, 2);
    const { local, records, adopted } = fakeLocal();
    const sync = new TopicSync(local, image, 1, new ManualScheduler(new ManualClock(0)), silentLogger());
    await sync.syncNow();
    records.delete('t0');
    adopted.length = 0;
    await sync.syncNow();
    assert.deepEqual(adopted, ['t0']);
    assert.equal(records.get('t0')?.topicId, 'id-t0');
  });

  it('deletes a local topic the image dropped and names it to its listeners; a topic re-created under the same name is adopted', async () => {
    const image = imageWith(2, 1);
    const { local, records, adopted } = fakeLocal();
    const sync = new TopicSync(local, image, 1, new ManualScheduler(new ManualClock(0)), silentLogger());
    const passes: string[][] = [];
    sync.onPass((topics) => passes.push([...topics].sort()));
    await sync.syncNow();
    image.apply(2n, [{ kind: 'topic', name: 't1', topic: null }, { kind: 'partition', topicId: 'id-t1', partition: 0, state: null }]);
    await sync.syncNow();
    assert.equal(records.has('t1'), false);
    assert.deepEqual(passes.at(-1), ['t1']);
    adopted.length = 0;
    image.apply(3n, [{ kind: 'topic', name: 't1', topic: { ...topic('t1', 1), topicId: 'id-t1-new' } }, { kind: 'partition', topicId: 'id-t1-new', partition: 0, state: state(1) }]);
    await sync.syncNow();
    assert.deepEqual(adopted, ['t1']);
    assert.equal(records.get('t1')?.topicId, 'id-t1-new');
  });

  it('a deleted topic\'s remote data is deleted by one broker per partition: its leader as the last pass saw it, or, that leader gone, the smallest registered replica (Kafka: deleteRemoteLog where this broker led)', async () => {
    const broker = (nodeId: number) => ({ kind: 'broker' as const, nodeId, broker: { nodeId, incarnationId: `i${nodeId}`, rack: null, endpoints: [], brokerEpoch: BigInt(nodeId) } });
    const rf3 = (leader: number): PartitionState => ({ replicas: [1, 2, 3], leader, leaderEpoch: 0, isr: [1, 2, 3], partitionEpoch: 0 });
    const decisions = new Map<number, boolean[]>();
    for (const nodeId of [1, 2, 3]) {
      const image = MetadataImage.fromSnapshot({
        revision: 1n,
        problems: [],
        records: [broker(1), broker(2), broker(3), { kind: 'topic', name: 'x', topic: topic('x', 4) }, ...[2, 3, 1, 3].map((leader, p) => ({ kind: 'partition' as const, topicId: 'id-x', partition: p, state: rf3(leader) }))],
      });
      const { local, deleted } = fakeLocal();
      const sync = new TopicSync(local, image, nodeId, new ManualScheduler(new ManualClock(0)), silentLogger());
      await sync.syncNow();
      // Broker 3 leaves with the deletion (its lease expired): partitions 1 and 3 it led fall to the smallest registered replica, 1.
      image.apply(2n, [broker(3), { kind: 'topic', name: 'x', topic: null }, ...[0, 1, 2, 3].map((p) => ({ kind: 'partition' as const, topicId: 'id-x', partition: p, state: null }))]);
      image.apply(3n, [{ kind: 'broker', nodeId: 3, broker: null }]);
      await sync.syncNow();
      assert.equal(deleted.length, 1);
      decisions.set(nodeId, [0, 1, 2, 3].map((p) => deleted[0]!.deletesRemote?.(p) ?? true));
    }
    assert.deepEqual(decisions.get(1), [false, true, true, true]);
    assert.deepEqual(decisions.get(2), [true, false, false, false]);
    assert.deepEqual(decisions.get(3), [false, false, false, false]);
    for (let p = 0; p < 4; p++) assert.equal([1, 2, 3].filter((n) => decisions.get(n)![p]).length, 1, `partition ${p}: exactly one broker deletes its remote data`);
  });
});
