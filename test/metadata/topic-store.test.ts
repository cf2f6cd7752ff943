import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BrokerConfig } from '../../broker/config.js';
import type { TopicRecord } from '../../metadata/topics.js';
import { decodeTopicMetadata, encodeTopicMetadata, TOPIC_METADATA_FILE, TopicStore } from '../../metadata/topic-store.js';

const broker = BrokerConfig.fromProperties({}, { cwd: '/tmp' });
let root = '';

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sediment-topic-store-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshDir(name: string): Promise<string> {
  const dir = path.join(root, name);
  await rm(dir, { recursive: true, force: true });
  const { mkdir } = await import('node:fs/promises');
  await mkdir(dir, { recursive: true });
  return dir;
}

describe('topic metadata codec', () => {
  it('round-trips records', () => {
    const topics: TopicRecord[] = [
      { name: 'a', topicId: 'ABEiM0RVZneImaq7zN3u_w', partitionCount: 3, configs: { 'retention.ms': '1000' } },
      { name: 'b', topicId: 'MkU3OEVBNTcwNTJENDM2Qg', partitionCount: 1, configs: {} },
    ];
    assert.deepEqual(decodeTopicMetadata(encodeTopicMetadata(topics)), topics);
    assert.deepEqual(decodeTopicMetadata(encodeTopicMetadata([])), []);
  });

  it('refuses malformed content', () => {
    assert.throws(() => decodeTopicMetadata('{'), SyntaxError);
    assert.throws(() => decodeTopicMetadata('{"version":2,"topics":[]}'), /version 2/);
    assert.throws(() => decodeTopicMetadata('{"version":1}'), /no topics/);
    assert.throws(() => decodeTopicMetadata('{"version":1,"topics":[{"name":"a","topicId":"x","partitionCount":0}]}'), /malformed/);
    assert.throws(() => decodeTopicMetadata('{"version":1,"topics":[{"name":"a","topicId":"x","partitionCount":1,"configs":{"k":1}}]}'), /non-string/);
  });
});

describe('TopicStore', () => {
  it('starts empty, persists every change, and loads it back', async () => {
    const dir = await freshDir('roundtrip');
    const store = await TopicStore.open(dir, broker);
    assert.deepEqual(store.list(), []);
    const a = await store.create({ name: 'a', numPartitions: 2, configs: { 'retention.ms': '1000' } });
    await store.create({ name: 'b' });
    await store.create({ name: 'c' });
    await store.createPartitions('b', 4);
    await store.incrementalAlterConfigs('a', [{ name: 'segment.ms', op: 'SET', value: '100' }]);
    await store.delete('c');
    await store.create({ name: 'v' }, { validateOnly: true });

    const again = await TopicStore.open(dir, broker);
    assert.deepEqual(again.list(), store.list());
    assert.equal(again.get('a')?.topicId, a.topicId);
    assert.deepEqual(again.get('a')?.configs, { 'retention.ms': '1000', 'segment.ms': '100' });
    assert.equal(again.get('b')?.partitionCount, 4);
    assert.equal(again.has('c'), false);
    assert.equal(again.has('v'), false);
    assert.equal(again.logConfig('a').segmentMs, 100);
    assert.equal(again.getById(a.topicId)?.name, 'a');
    // No temporary file is left behind.
    assert.deepEqual((await readdir(dir)).sort(), [TOPIC_METADATA_FILE]);
  });

  it('concurrent mutations all reach the file', async () => {
    const dir = await freshDir('concurrent');
    const store = await TopicStore.open(dir, broker);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.create({ name: `t${i}` })));
    const again = await TopicStore.open(dir, broker);
    assert.equal(again.list().length, 20);
  });

  it('a failed validation changes neither memory nor file', async () => {
    const dir = await freshDir('invalid');
    const store = await TopicStore.open(dir, broker);
    await store.create({ name: 'a' });
    const before = await readFile(path.join(dir, TOPIC_METADATA_FILE), 'utf8');
    await assert.rejects(store.create({ name: 'a' }), /already exists/);
    await assert.rejects(store.alterConfigs('a', [{ name: 'retention.ms', value: 'x' }]), /retention.ms/);
    assert.equal(await readFile(path.join(dir, TOPIC_METADATA_FILE), 'utf8'), before);
  });

  it('refuses to start on a corrupt file', async () => {
    const dir = await freshDir('corrupt');
    await writeFile(path.join(dir, TOPIC_METADATA_FILE), '{"version":1,"topics":[');
    await assert.rejects(TopicStore.open(dir, broker), /Cannot load topic metadata/);
  });
});
