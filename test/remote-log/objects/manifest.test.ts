import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import { ChunkedDataWriter, chunksCovering, decodeChunks } from '../../../remote-log/objects/chunked-zstd.js';
import type { Manifest } from '../../../remote-log/objects/manifest.js';
import { decodeManifest, encodeManifest } from '../../../remote-log/objects/manifest.js';
import { RemoteCorruptionError } from '../../../remote-log/remote-storage.js';
import { segmentBytes } from '../remote-storage.contract.js';

const segment = { topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partition: 0, baseOffset: 77n, segmentId: 'BBBBBBBBBBBBBBBBBBBBBB' };

function manifestFor(data: Buffer, compression: 'none' | 'zstd-chunked'): { manifest: Manifest; stored: Buffer } {
  const w = new ChunkedDataWriter(1000, compression);
  const pieces: Buffer[] = [];
  for (let i = 0; i < data.length; i += 1000) pieces.push(w.add(data.subarray(i, i + 1000)));
  const manifest: Manifest = {
    formatVersion: 1,
    segment,
    objects: { log: { size: w.storedBytes, crc32c: w.storedCrc32c }, index: { size: 8, crc32c: 12345 } },
    data: w.layout(),
    batchesVerified: w.batchVerdict().verified,
  };
  return { manifest, stored: Buffer.concat(pieces) };
}

/** A version 1 manifest around any JSON body (header CRC computed). */
function withBody(body: unknown): Buffer {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  return Buffer.concat([Buffer.from(`sediment-manifest 1 crc32c=${crc32c(bytes).toString(16).padStart(8, '0')}\n`), bytes]);
}

describe('manifest codec', () => {
  for (const compression of ['none', 'zstd-chunked'] as const) {
    it(`round-trips (${compression})`, () => {
      const { manifest } = manifestFor(segmentBytes(4321, 1), compression);
      const bytes = encodeManifest(manifest);
      assert.match(bytes.toString('utf8'), /^sediment-manifest 1 crc32c=[0-9a-f]{8}\n\{/);
      assert.deepEqual(decodeManifest(bytes), manifest);
    });
  }

  it('round-trips batchesVerified, and reads manifests written before it as not verified', () => {
    const { manifest } = manifestFor(segmentBytes(2500, 4), 'none');
    for (const batchesVerified of [true, false]) {
      const m = { ...manifest, batchesVerified };
      assert.deepEqual(decodeManifest(encodeManifest(m)), m);
    }
    // A manifest as written before the field existed: same header, no batchesVerified in the body.
    const body = JSON.parse(encodeManifest({ ...manifest, batchesVerified: true }).toString('utf8').split('\n')[1]!) as Record<string, unknown>;
    delete body.batchesVerified;
    const old = withBody(body);
    assert.doesNotMatch(old.toString('utf8'), /batchesVerified/);
    assert.deepEqual(decodeManifest(old), { ...manifest, batchesVerified: false });
    assert.throws(() => decodeManifest(withBody({ ...body, batchesVerified: 'yes' })), /batchesVerified is not a boolean/);
  });

  it('rejects any flipped byte, truncation, or inconsistent layout', () => {
    const bytes = encodeManifest(manifestFor(segmentBytes(2500, 2), 'zstd-chunked').manifest);
    for (let i = 0; i < bytes.length; i += 7) {
      const bad = Buffer.from(bytes);
      bad[i] = (bad[i] ?? 0) ^ 0x01;
      assert.throws(() => decodeManifest(bad), RemoteCorruptionError, `flip at ${i}`);
    }
    assert.throws(() => decodeManifest(bytes.subarray(0, bytes.length - 1)), RemoteCorruptionError);
    const { manifest } = manifestFor(segmentBytes(2500, 2), 'none');
    const wrong = { ...manifest, objects: { ...manifest.objects, log: { size: 1, crc32c: 0 } } };
    assert.throws(() => decodeManifest(encodeManifest(wrong)), /differs from the data layout/);
  });
});

describe('chunked data', () => {
  for (const compression of ['none', 'zstd-chunked'] as const) {
    it(`decodes any covering chunk range (${compression})`, () => {
      const data = segmentBytes(5555, 3);
      const { manifest, stored } = manifestFor(data, compression);
      for (const [a, b] of [[0, 0], [999, 1000], [0, 5554], [4000, 5554], [2500, 2600]] as const) {
        const c = chunksCovering(manifest.data, a, b);
        const plain = decodeChunks(manifest.data, c.first, c.last, stored.subarray(c.storedStart, c.storedEnd), 'x');
        assert.deepEqual(plain, data.subarray(c.first * 1000, Math.min((c.last + 1) * 1000, data.length)));
      }
      if (compression === 'zstd-chunked') assert.ok(stored.length < data.length);
    });
  }

  it('refuses a chunk after a short one, and oversized chunks', () => {
    const w = new ChunkedDataWriter(10, 'none');
    w.add(Buffer.alloc(5));
    assert.throws(() => w.add(Buffer.alloc(10)), RangeError);
    assert.throws(() => new ChunkedDataWriter(10, 'none').add(Buffer.alloc(11)), RangeError);
  });
});
