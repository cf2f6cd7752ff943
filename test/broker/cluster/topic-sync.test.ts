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
    async deleteTopic(name: string): Promise<void> {
      records.delete(name);
    },
    partitionLog: () => undefined,
    async removeReplica(): Promise<boolean> {
      return false;
    },
  };
  return { local: local as unknown as BrokerTopics, records, adopted };
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
});
