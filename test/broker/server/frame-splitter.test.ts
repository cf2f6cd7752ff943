import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameSplitter, FrameTooLargeError, InvalidFrameSizeError } from '../../../broker/server/frame-splitter.js';

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

test('splits frames delivered byte by byte and several per chunk', () => {
  const bodies = [Buffer.from('hello'), Buffer.alloc(0), Buffer.from('x'.repeat(300))];
  const stream = Buffer.concat(bodies.map(frame));
  const s1 = new FrameSplitter(1000);
  const got1: Buffer[] = [];
  for (const b of stream) got1.push(...s1.push(Buffer.from([b])));
  assert.deepEqual(got1, bodies);
  const s2 = new FrameSplitter(1000);
  assert.deepEqual(s2.push(stream), bodies);
  assert.equal(s2.pendingBytes, 0);
});

test('rejects an oversized frame from its size prefix alone, before the body arrives', () => {
  const s = new FrameSplitter(100);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(101);
  assert.throws(() => s.push(prefix), FrameTooLargeError);
});

test('rejects a negative size', () => {
  const s = new FrameSplitter(100);
  assert.throws(() => s.push(Buffer.from([0xff, 0xff, 0xff, 0xfe])), InvalidFrameSizeError);
});
