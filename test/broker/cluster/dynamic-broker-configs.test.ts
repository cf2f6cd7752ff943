// Dynamic broker configs in a cluster (broker/cluster/dynamic-broker-configs.ts)
// on the in-memory store twin: the throttle rates set per broker and as the
// cluster default, visible in this broker's image when alter resolves, and
// described with their source (2 per broker, 3 cluster default, 5 default);
// validateOnly writes nothing; a refused change writes nothing.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ClusterDynamicBrokerConfigs } from '../../../broker/cluster/dynamic-broker-configs.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';

const RATE = 'leader.replication.throttled.rate';
const FRATE = 'follower.replication.throttled.rate';

it('throttle rates: set per broker and as cluster default, described with their sources, deleted again', async () => {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const store = new MemoryClusterMetadataStore(new MemoryMetadataServer(clock, scheduler));
  await store.initialize({ proposedClusterId: 'dyn' });
  const follower = new MetadataImageFollower(store, { scheduler });
  await follower.start();
  const sync = {
    async waitFor(done: () => boolean): Promise<void> {
      for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setImmediate(r));
      if (!done()) throw new Error('not visible');
    },
  };
  try {
    const c = new ClusterDynamicBrokerConfigs({ store, image: follower.image, sync, visibleWithinMs: 1000 });
    await c.alter('1', [{ name: RATE, op: 'SET', value: '1000' }], true);
    assert.equal(follower.image.configs({ type: 'broker', nodeId: 1 }).size, 0, 'validateOnly writes nothing');
    await assert.rejects(c.alter('1', [{ name: RATE, op: 'SET', value: '1' }, { name: 'num.io.threads', op: 'SET', value: '2' }], false), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REQUEST);
    assert.equal(follower.image.configs({ type: 'broker', nodeId: 1 }).size, 0, 'a refused change writes nothing');
    await c.alter('1', [{ name: RATE, op: 'SET', value: '1000' }], false);
    assert.equal(follower.image.configs({ type: 'broker', nodeId: 1 }).get(RATE), '1000', 'visible when alter resolves');
    await c.alter('', [{ name: RATE, op: 'SET', value: '5000' }, { name: FRATE, op: 'SET', value: '7000' }], false);
    assert.deepEqual(c.describe('1'), [
      { name: RATE, value: '1000', source: 2, synonyms: [{ name: RATE, value: '1000', source: 2 }, { name: RATE, value: '5000', source: 3 }, { name: RATE, value: '9223372036854775807', source: 5 }] },
      { name: FRATE, value: '7000', source: 3, synonyms: [{ name: FRATE, value: '7000', source: 3 }, { name: FRATE, value: '9223372036854775807', source: 5 }] },
    ]);
    assert.deepEqual(c.describe('').map((d) => [d.name, d.value, d.source]), [[RATE, '5000', 3], [FRATE, '7000', 3]]);
    await c.alter('1', [{ name: RATE, op: 'DELETE', value: null }], false);
    await c.alter('', [{ name: RATE, op: 'DELETE', value: null }, { name: FRATE, op: 'DELETE', value: null }], false);
    assert.deepEqual(c.describe('1').map((d) => [d.name, d.value, d.source]), [[RATE, '9223372036854775807', 5], [FRATE, '9223372036854775807', 5]]);
    assert.deepEqual(c.describe(''), []);
  } finally {
    await follower.close();
    await store.close();
  }
});
