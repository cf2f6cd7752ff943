// Records as several parts: the RecordParts helpers, the writer appending each
// part by reference, and Fetch responses whose bytes do not depend on how the
// records were split.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeResponse, encodeResponse, payloadOf } from '../../../broker/protocol/frame.js';
import { apis, type FetchResponse } from '../../../broker/protocol/messages/index.js';
import { RecordParts, type Records, recordsBuffer, recordsOf, recordsParts } from '../../../broker/protocol/record-parts.js';
import { Reader } from '../../../broker/protocol/reader.js';
import { RAW_REF_MIN_BYTES, Writer } from '../../../broker/protocol/writer.js';

/** `n` bytes that differ from position to position, so a misplaced part shows. */
function bytes(n: number, seed = 0): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return b;
}

/** The same bytes as `b` split at `cuts` (each part a view into `b`, no copy). */
function split(b: Buffer, cuts: number[]): RecordParts {
  const parts: Buffer[] = [];
  let from = 0;
  for (const c of cuts) {
    parts.push(b.subarray(from, c));
    from = c;
  }
  parts.push(b.subarray(from));
  return new RecordParts(parts);
}

test('RecordParts keeps its non-empty parts in order and their total length', () => {
  const a = bytes(10, 1);
  const b = bytes(20, 2);
  const empty = Buffer.alloc(0);
  const input = [a, empty, b, empty];
  const r = new RecordParts(input);
  assert.equal(r.length, 30);
  assert.equal(r.parts.length, 2);
  assert.equal(r.parts[0], a);
  assert.equal(r.parts[1], b);
  input.push(bytes(5));
  assert.equal(r.parts.length, 2, 'later changes to the input array do not reach the parts');

  const none = new RecordParts([]);
  assert.equal(none.length, 0);
  assert.deepEqual(none.parts, []);
  assert.deepEqual(new RecordParts([empty, empty]).parts, []);
});

test('recordsBuffer: a Buffer or a single part as is, several parts joined', () => {
  const a = bytes(100, 1);
  const b = bytes(50, 2);
  assert.equal(recordsBuffer(a), a);
  assert.equal(recordsBuffer(new RecordParts([a])), a);
  assert.equal(recordsBuffer(new RecordParts([Buffer.alloc(0), a])), a);
  assert.equal(recordsBuffer(new RecordParts([])).length, 0);
  const joined = recordsBuffer(new RecordParts([a, b]));
  assert.ok(joined.equals(Buffer.concat([a, b])));
});

test('recordsParts lists the buffers of either form', () => {
  const a = bytes(8, 1);
  const b = bytes(9, 2);
  assert.deepEqual(recordsParts(a), [a]);
  assert.deepEqual(recordsParts(Buffer.alloc(0)), []);
  const parts = recordsParts(new RecordParts([a, b]));
  assert.equal(parts[0], a);
  assert.equal(parts[1], b);
});

test('recordsOf picks the smallest form without copying', () => {
  const a = bytes(8, 1);
  const b = bytes(9, 2);
  assert.equal(recordsOf([]), null);
  assert.equal(recordsOf([a]), a);
  assert.equal(recordsOf([Buffer.alloc(0), a]), a);
  const r = recordsOf([a, b]);
  assert.ok(r instanceof RecordParts);
  assert.equal(r.parts[0], a);
  assert.equal(r.parts[1], b);
  assert.equal(r.length, 17);
});

test('the writer appends large parts by reference, small ones copied, length first', () => {
  const big1 = bytes(4096, 1);
  const small = bytes(RAW_REF_MIN_BYTES - 1, 2);
  const big2 = bytes(RAW_REF_MIN_BYTES, 3);
  const records = new RecordParts([big1, small, Buffer.alloc(0), big2]);
  const whole = Buffer.concat([big1, small, big2]);

  for (const compact of [false, true]) {
    const w = new Writer(64);
    w.writeInt8(7);
    if (compact) w.writeCompactNullableBytesRef(records);
    else w.writeNullableBytesRef(records);
    w.writeInt8(9);
    const chunks = w.toChunks();
    assert.ok(chunks.includes(big1), 'first large part appended by reference');
    assert.ok(chunks.includes(big2), 'last large part appended by reference');
    assert.ok(!chunks.includes(small), 'a part under RAW_REF_MIN_BYTES is copied');

    const expected = new Writer(64);
    expected.writeInt8(7);
    if (compact) expected.writeCompactNullableBytes(whole);
    else expected.writeNullableBytes(whole);
    expected.writeInt8(9);
    assert.ok(w.toBuffer().equals(expected.toBuffer()), `${compact ? 'compact' : 'classic'} bytes as for one buffer`);
    assert.equal(w.length, expected.length);

    const r = new Reader(w.toBuffer());
    r.readInt8();
    const got = compact ? r.readCompactNullableBytes() : r.readNullableBytes();
    assert.ok(got?.equals(whole));
    assert.equal(r.readInt8(), 9);
  }
});

test('null and empty records encode as before', () => {
  for (const [value, classic, compact] of [
    [null, 'ffffffff', '00'],
    [Buffer.alloc(0), '00000000', '01'],
    [new RecordParts([]), '00000000', '01'],
    [new RecordParts([Buffer.alloc(0)]), '00000000', '01'],
  ] as const) {
    const w = new Writer();
    w.writeNullableBytesRef(value);
    assert.equal(w.toBuffer().toString('hex'), classic);
    const c = new Writer();
    c.writeCompactNullableBytesRef(value);
    assert.equal(c.toBuffer().toString('hex'), compact);
  }
});

/** A Fetch response with three partitions: `records` for the first, the second empty, the third one fixed buffer. */
function fetchResponse(version: number, records: Records, other: Buffer): FetchResponse {
  const partition = (partitionIndex: number, r: Records) => ({
    partitionIndex,
    errorCode: 0,
    highWatermark: 1000n,
    lastStableOffset: 990n,
    logStartOffset: 5n,
    abortedTransactions: [{ producerId: 42n, firstOffset: 17n }],
    preferredReadReplica: -1,
    records: r,
  });
  return {
    throttleTimeMs: 3,
    errorCode: 0,
    sessionId: 0,
    responses: [{
      topic: version < 13 ? 'orders' : '',
      topicId: version >= 13 ? 'ABEiM0RVZneImaq7zN3u_w' : 'AAAAAAAAAAAAAAAAAAAAAA',
      partitions: [partition(0, records), partition(1, Buffer.alloc(0)), partition(2, other)],
    }],
    nodeEndpoints: [],
  };
}

test('Fetch responses encode the same bytes whether records are one buffer or several parts', () => {
  const whole = bytes(3000, 5);
  const other = bytes(200, 6);
  const forms: [string, Records][] = [
    ['one buffer', whole],
    ['1 part', new RecordParts([whole])],
    ['2 parts', split(whole, [1024])],
    ['3 parts with an empty one', new RecordParts([whole.subarray(0, 10), Buffer.alloc(0), whole.subarray(10, 2900), whole.subarray(2900)])],
    ['3 parts', split(whole, [1, 2999])],
  ];
  for (const version of [4, 11, 12, 13, 16, 17]) {
    const reference = payloadOf(encodeResponse(1, version, 9, (w) => apis.Fetch.encodeResponse(w, version, fetchResponse(version, whole, other))));
    for (const [name, records] of forms) {
      const chunks = encodeResponse(1, version, 9, (w) => apis.Fetch.encodeResponse(w, version, fetchResponse(version, records, other)));
      const payload = payloadOf(chunks);
      assert.ok(payload.equals(reference), `v${version} ${name}: same bytes as one buffer`);
      for (const part of recordsParts(records)) {
        if (part.length >= RAW_REF_MIN_BYTES) assert.ok(chunks.includes(part), `v${version} ${name}: a ${part.length}-byte part goes out by reference`);
      }
      const decoded = decodeResponse(payload, apis.Fetch, version).body;
      const got = decoded.responses[0]?.partitions.map((p) => p.records);
      assert.equal(got?.length, 3);
      for (const r of got ?? []) assert.ok(r instanceof Buffer, 'decoded records are a Buffer');
      assert.ok(recordsBuffer(got?.[0] ?? Buffer.alloc(1)).equals(whole), `v${version} ${name}: records decode back`);
      assert.equal(got?.[1]?.length, 0);
      assert.ok(recordsBuffer(got?.[2] ?? Buffer.alloc(1)).equals(other));
      assert.deepEqual(decoded.responses[0]?.partitions[0]?.abortedTransactions, [{ producerId: 42n, firstOffset: 17n }]);
    }
  }
});
