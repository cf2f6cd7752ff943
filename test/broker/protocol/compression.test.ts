import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { compressSync as snappyRaw } from 'snappy';
import { compress as zstdCompress } from 'zstd-napi';
import { compress, decompress, lz4FrameOutputBound } from '../../../broker/protocol/compression.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { COMPRESSION_TYPES } from '../../../broker/protocol/record-batch.js';
import { isXerialFramed, xerialFrame } from '../../../broker/protocol/snappy-xerial.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const isCorrupt = (err: unknown): boolean => err instanceof KafkaError && err.code === ErrorCode.CORRUPT_MESSAGE;

const arbPayload = fc.oneof(
  fc.uint8Array({ maxLength: 5000 }).map((a) => Buffer.from(a)),
  // Compressible: repeated short patterns, bigger than one xerial/lz4 block.
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.integer({ min: 1, max: 20000 }))
    .map(([unit, n]) => Buffer.concat(Array.from({ length: n }, () => Buffer.from(unit)))),
);

for (const codec of COMPRESSION_TYPES) {
  test(`${codec}: round-trips arbitrary payloads (property)`, () => {
    fc.assert(
      fc.property(arbPayload, (data) => {
        assert.deepEqual(decompress(codec, compress(codec, data)), data);
      }),
      { numRuns: codec === 'none' ? 50 : 150 },
    );
  });
}

test('snappy decodes a raw block (librdkafka) and xerial framing (Java, kafkajs) alike', () => {
  const data = Buffer.from('hello hello hello hello, snappy'.repeat(3000));
  assert.deepEqual(decompress('snappy', snappyRaw(data)), data);
  const framed = compress('snappy', data);
  assert.ok(isXerialFramed(framed));
  assert.deepEqual(decompress('snappy', framed), data);
  assert.deepEqual(decompress('snappy', compress('snappy', data, { snappyXerial: false })), data);
});

test('snappy known answer: a hand-built xerial frame as xerial SnappyOutputStream writes it', () => {
  // magic, version 1, min-compatible 1, one chunk of 7 bytes: raw block "hello"
  // (preamble 05, literal tag (5-1)<<2 = 0x10).
  const framed = hex('82534e4150505900 00000001 00000001 00000007 05 10 68656c6c6f');
  assert.equal(decompress('snappy', framed).toString(), 'hello');
  // Two chunks concatenate.
  const two = hex('82534e4150505900 00000001 00000001 00000007 05 10 68656c6c6f 00000003 01 00 21');
  assert.equal(decompress('snappy', two).toString(), 'hello!');
  assert.equal(decompress('snappy', hex('05 10 68656c6c6f')).toString(), 'hello');
});

test('lz4 known answer: a frame with one stored (uncompressed) block', () => {
  // magic, FLG 0x60 (v01, independent blocks), BD 0x40 (64 KiB), HC 0x82,
  // block size 5 with the "uncompressed" bit, "hello", end mark.
  const frame = hex('04224d18 60 40 82 05000080 68656c6c6f 00000000');
  assert.equal(lz4FrameOutputBound(frame), 5);
  assert.equal(decompress('lz4', frame).toString(), 'hello');
});

test('gzip and zstd known answers: output of independent encoders', () => {
  assert.equal(decompress('gzip', gzipSync(Buffer.from('kafka'))).toString(), 'kafka');
  // Two gzip members back to back decode as one stream, as Java's GZIPInputStream does.
  const members = Buffer.concat([gzipSync(Buffer.from('ab')), gzipSync(Buffer.from('cd'))]);
  assert.equal(decompress('gzip', members).toString(), 'abcd');
  // zstd frame "hello" with the content size in its header (zstd CLI output).
  assert.equal(decompress('zstd', hex('28b52ffd2005290000 68656c6c6f')).toString(), 'hello');
  // Two zstd frames concatenate.
  const two = Buffer.concat([zstdCompress(Buffer.from('ab')), zstdCompress(Buffer.from('cd'))]);
  assert.equal(decompress('zstd', two).toString(), 'abcd');
});

test('decompression bombs stop at maxOutputBytes for every codec', () => {
  const big = Buffer.alloc(8 * 1024 * 1024);
  const limit = 1024 * 1024;
  for (const codec of COMPRESSION_TYPES) {
    if (codec === 'none') continue;
    const small = compress(codec, big);
    assert.ok(small.length < 512 * 1024, `${codec} compressed to ${small.length}`);
    assert.throws(() => decompress(codec, small, limit), isCorrupt, codec);
    assert.equal(decompress(codec, small, big.length).length, big.length, codec);
  }
});

test('a zstd frame with no declared content size is bounded while streaming', () => {
  // Hand-built frame: FHD 0x00 (no content size, not single-segment), window
  // descriptor 0x38 (128 KiB), then RLE blocks of 128 KiB of 0x07: 4 bytes each.
  const blocks = 32;
  const parts = [hex('28b52ffd 00 38')];
  for (let i = 0; i < blocks; i++) parts.push(hex(i === blocks - 1 ? '03001007' : '02001007'));
  const frame = Buffer.concat(parts);
  assert.ok(frame.length < 200);
  assert.throws(() => decompress('zstd', frame, 1024 * 1024), isCorrupt);
  assert.deepEqual(decompress('zstd', frame, blocks * 131072), Buffer.alloc(blocks * 131072, 7));
});

test('snappy bound is read from the block preamble before decoding', () => {
  // Preamble claims 2^31 bytes; the decoder must refuse without allocating.
  assert.throws(() => decompress('snappy', hex('8080808008 00'), 1024), isCorrupt);
  const framed = xerialFrame(Buffer.alloc(200000, 1), snappyRaw);
  assert.throws(() => decompress('snappy', framed, 100000), isCorrupt);
});

test('garbage and truncated inputs fail as CORRUPT_MESSAGE for every codec', () => {
  const data = Buffer.from('some record bytes '.repeat(200));
  for (const codec of COMPRESSION_TYPES) {
    if (codec === 'none') continue;
    const good = compress(codec, data);
    for (const cut of [1, 4, good.length >> 1, good.length - 1]) {
      assert.throws(() => decompress(codec, good.subarray(0, cut)), isCorrupt, `${codec} cut at ${cut}`);
    }
  }
  fc.assert(
    fc.property(fc.constantFrom(...COMPRESSION_TYPES.filter((c) => c !== 'none')), fc.uint8Array({ maxLength: 200 }), (codec, bytes) => {
      try {
        decompress(codec, Buffer.from(bytes), 1024 * 1024);
      } catch (err) {
        assert.ok(isCorrupt(err), `${codec}: ${String(err)}`);
      }
    }),
    { numRuns: 2000 },
  );
});
