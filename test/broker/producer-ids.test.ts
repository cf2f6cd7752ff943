import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProducerIdManager } from '../../broker/producer-ids.js';

test('producer ids are unique across restarts', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pid-'));
  const a = await ProducerIdManager.open(dir);
  const first = await Promise.all([a.nextProducerId(), a.nextProducerId(), a.nextProducerId()]);
  assert.deepEqual(first, [0n, 1n, 2n]);
  const b = await ProducerIdManager.open(dir);
  const next = await b.nextProducerId();
  assert.ok(next > 2n, `id ${next} reused after restart`);
});
