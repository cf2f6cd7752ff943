import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OFFSET_MAP_SLOT_SIZE, OffsetMap } from '../../../../broker/log/cleaner/offset-map.js';

const k = (s: string): Buffer => Buffer.from(s);

describe('OffsetMap', () => {
  it('keeps the latest offset per key and -1 for unknown keys', () => {
    const map = new OffsetMap(1024);
    map.put(k('a'), 3n);
    map.put(k('b'), 4n);
    map.put(k('a'), 7n);
    assert.equal(map.get(k('a')), 7n);
    assert.equal(map.get(k('b')), 4n);
    assert.equal(map.get(k('c')), -1n);
    assert.equal(map.size, 2);
    assert.equal(map.latestOffset, 7n);
  });

  it('has a fixed number of slots from its memory and reports utilization', () => {
    const map = new OffsetMap(OFFSET_MAP_SLOT_SIZE * 10 + 5);
    assert.equal(map.slots, 10);
    for (let i = 0; i < 5; i++) map.put(k(`key-${i}`), BigInt(i));
    assert.equal(map.utilization, 0.5);
    assert.throws(() => new OffsetMap(OFFSET_MAP_SLOT_SIZE - 1), RangeError);
  });

  it('finds every key of an almost full table (colliding slots probe on)', () => {
    const map = new OffsetMap(OFFSET_MAP_SLOT_SIZE * 16);
    for (let i = 0; i < 15; i++) map.put(k(`key-${i}`), BigInt(100 + i));
    for (let i = 0; i < 15; i++) assert.equal(map.get(k(`key-${i}`)), BigInt(100 + i));
    assert.ok(map.collisionRate >= 1);
    assert.equal(map.get(k('absent')), -1n);
    map.put(k('key-15'), 200n);
    assert.equal(map.size, 16);
    // Full: an update still works, a new key cannot be placed.
    map.put(k('key-3'), 300n);
    assert.equal(map.get(k('key-3')), 300n);
    assert.throws(() => map.put(k('one-too-many'), 301n), RangeError);
  });

  it('clear() forgets keys and the latest offset; updateLatestOffset only moves forward', () => {
    const map = new OffsetMap(1024);
    map.put(k('a'), 5n);
    map.updateLatestOffset(9n);
    map.updateLatestOffset(2n);
    assert.equal(map.latestOffset, 9n);
    map.clear();
    assert.equal(map.size, 0);
    assert.equal(map.latestOffset, -1n);
    assert.equal(map.get(k('a')), -1n);
  });

  it('treats keys as bytes (empty key, binary keys, equal bytes from different buffers)', () => {
    const map = new OffsetMap(1024);
    map.put(Buffer.alloc(0), 1n);
    map.put(Buffer.from([0, 255, 7]), 2n);
    assert.equal(map.get(Buffer.alloc(0)), 1n);
    assert.equal(map.get(Buffer.from([0, 255, 7])), 2n);
    assert.equal(map.get(Buffer.from([0, 255])), -1n);
  });

  it('agrees with a Map on random put sequences', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.nat(1_000_000)), { maxLength: 200 }), (ops) => {
        const map = new OffsetMap(OFFSET_MAP_SLOT_SIZE * 256);
        const model = new Map<string, bigint>();
        let offset = 0n;
        for (const [key, step] of ops) {
          offset += BigInt(step) + 1n;
          map.put(k(key), offset);
          model.set(key, offset);
        }
        assert.equal(map.size, model.size);
        for (const [key, off] of model) assert.equal(map.get(k(key)), off);
      }),
    );
  });
});
