import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkMemory } from '../../../remote-log/read/chunk-memory.js';

describe('ChunkMemory', () => {
  it('hands out distinct slots up to maxBytes, takes them back for reuse, and knows its own memory', () => {
    const memory = new ChunkMemory(1024, 3 * 1024 + 100, false, 2 * 1024);
    const a = memory.take()!;
    const b = memory.take()!;
    const c = memory.take()!;
    assert.equal(memory.take(), undefined, 'three whole slots fit in maxBytes');
    for (const s of [a, b, c]) assert.equal(s.length, 1024);
    // Distinct memory: writing one slot leaves the others alone.
    a.fill(1);
    b.fill(2);
    c.fill(3);
    assert.deepEqual([a[0], b[0], c[1023]], [1, 2, 3]);
    assert.deepEqual(memory.stats(), { slots: 3, inUse: 3, slabs: 2 });
    assert.ok(memory.holds(a.subarray(10, 20)));
    assert.equal(memory.holds(Buffer.alloc(1024)), false);
    memory.give(b);
    assert.throws(() => memory.give(b), /not a slot in use/);
    assert.throws(() => memory.give(Buffer.alloc(1024)), /not a slot in use/);
    assert.equal(memory.take(), b, 'a slot given back is handed out again');
    assert.equal(memory.stats().inUse, 3);
  });

  it('allocates ordinary memory a slot at a time by default, shared memory in slabs workers can fill', () => {
    const plain = new ChunkMemory(1024, 64 * 1024);
    plain.take();
    assert.equal(plain.stats().slabs, 1);
    assert.ok(!(plain.take()!.buffer instanceof SharedArrayBuffer));
    assert.deepEqual(plain.stats(), { slots: 2, inUse: 2, slabs: 2 });
    const shared = new ChunkMemory(1024, 64 * 1024, true, 16 * 1024);
    const s = shared.take()!;
    assert.ok(s.buffer instanceof SharedArrayBuffer);
    assert.equal(shared.stats().slots, 16, 'grown a 16-slot slab at a time');
    assert.equal(new ChunkMemory(1024, 100).take(), undefined, 'less than a slot: none');
  });
});
