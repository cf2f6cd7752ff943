import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PRODUCER_ID_BLOCK_SIZE, ProducerIdManager } from '../../broker/producer-ids.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../metadata/cluster/memory-store.js';
import { ManualClock } from '../../broker/common/clock.js';
import { ManualScheduler } from '../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';

test('producer ids are unique across restarts', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pid-'));
  const a = await ProducerIdManager.open(dir);
  const first = await Promise.all([a.nextProducerId(), a.nextProducerId(), a.nextProducerId()]);
  assert.deepEqual(first, [0n, 1n, 2n]);
  const b = await ProducerIdManager.open(dir);
  const next = await b.nextProducerId();
  assert.ok(next > 2n, `id ${next} reused after restart`);
});

test('cluster members take blocks from the shared counter: no id handed out twice, prefetch at 90%, a local floor respected', async () => {
  const clock = new ManualClock();
  const store = new MemoryClusterMetadataStore(new MemoryMetadataServer(clock, new ManualScheduler(clock)));
  await store.initialize({ proposedClusterId: 'c' });
  const calls: { nodeId: number; atLeast: bigint }[] = [];
  const source = (nodeId: number) => async (atLeast: bigint) => {
    calls.push({ nodeId, atLeast });
    return store.allocateProducerIds(nodeId, PRODUCER_ID_BLOCK_SIZE, atLeast);
  };
  const dirA = await mkdtemp(path.join(os.tmpdir(), 'pid-a-'));
  const dirB = await mkdtemp(path.join(os.tmpdir(), 'pid-b-'));
  // Broker B once ran alone and handed out ids below 5000.
  await writeFile(path.join(dirB, 'producer-id-block'), '5000\n');
  const a = await ProducerIdManager.shared(dirA, source(1));
  const b = await ProducerIdManager.shared(dirB, source(2));
  const seen = new Set<bigint>();
  const take = async (m: ProducerIdManager, n: number): Promise<bigint[]> => {
    const ids = await Promise.all(Array.from({ length: n }, () => m.nextProducerId()));
    for (const id of ids) {
      assert.ok(!seen.has(id), `id ${id} handed out twice`);
      seen.add(id);
    }
    return ids;
  };
  assert.deepEqual(await take(a, 3), [0n, 1n, 2n]);
  const fromB = await take(b, 2);
  assert.ok(fromB[0]! >= 5000n, `B's first id ${fromB[0]} is below its local floor`);
  await take(a, 897); // 900 of A's first block used: the next one is fetched ahead
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(calls.filter((c) => c.nodeId === 1).length, 2, 'A prefetched its second block at 90%');
  const rest = await take(a, 1200);
  assert.ok(rest.every((id) => id < 5000n || id >= 6000n), 'A never enters the block B holds');
  assert.ok(calls.every((c) => c.nodeId !== 2 || c.atLeast === 5000n));
  await store.close();
});

test('an unreachable store gives COORDINATOR_LOAD_IN_PROGRESS, and the next call tries again', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pid-'));
  let fail = true;
  const m = await ProducerIdManager.shared(dir, async () => {
    if (fail) throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, 'etcd is away');
    return 7000n;
  });
  await assert.rejects(m.nextProducerId(), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && /etcd is away/.test(e.message));
  fail = false;
  assert.equal(await m.nextProducerId(), 7000n);
});
