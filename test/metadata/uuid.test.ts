import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidUuid, ONE_UUID, randomUuid, uuidFromBigints, uuidFromString, uuidToBigints, uuidToString, ZERO_UUID } from '../../metadata/uuid.js';

describe('Kafka Uuid', () => {
  it('renders 16 bytes as 22 chars of unpadded base64url and back', () => {
    const bytes = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const text = uuidToString(bytes);
    assert.equal(text, 'ABEiM0RVZneImaq7zN3u_w');
    assert.deepEqual(uuidFromString(text), bytes);
  });

  it('knows the reserved ids', () => {
    assert.equal(uuidToString(Buffer.alloc(16)), ZERO_UUID);
    const one = Buffer.alloc(16);
    one[15] = 1;
    assert.equal(uuidToString(one), ONE_UUID);
    assert.equal(uuidFromBigints(0n, 1n), ONE_UUID);
    assert.deepEqual(uuidToBigints('ABEiM0RVZneImaq7zN3u_w'), { mostSignificantBits: 0x0011223344556677n, leastSignificantBits: -0x7766554433221101n });
  });

  it('random ids are version 4, never reserved, never start with "-"', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = randomUuid();
      assert.ok(isValidUuid(id));
      assert.ok(!id.startsWith('-'));
      const b = uuidFromString(id);
      assert.equal((b[6] as number) >> 4, 4);
      assert.equal((b[8] as number) >> 6, 2);
      seen.add(id);
    }
    assert.equal(seen.size, 2000);
  });

  it('retries when the random source yields a reserved or dash-leading id', () => {
    const outputs = [Buffer.alloc(16, 0xff), Buffer.from('0123456789abcdef0123456789abcdef', 'hex')];
    let calls = 0;
    const id = randomUuid((buf) => {
      const src = outputs[Math.min(calls++, outputs.length - 1)] as Buffer;
      src.copy(buf);
    });
    // 0xff.. with version bits set starts with '_' not '-', so the first candidate is accepted.
    assert.equal(calls, 1);
    assert.ok(isValidUuid(id));
    let n = 0;
    const id2 = randomUuid((buf) => {
      // First attempt: bytes whose base64url starts with '-' (0xf8 -> '-' is index 62).
      if (n++ === 0) {
        buf.fill(0);
        buf[0] = 0xf8;
      } else {
        buf.fill(7);
      }
    });
    assert.equal(n, 2);
    assert.ok(!id2.startsWith('-'));
  });

  it('refuses malformed strings', () => {
    for (const bad of ['', 'abc', 'ABEiM0RVZneImaq7zN3u_w==', 'ABEiM0RVZneImaq7zN3u/w', 'ABEiM0RVZneImaq7zN3u_x']) {
      assert.throws(() => uuidFromString(bad), RangeError, bad);
      assert.equal(isValidUuid(bad), false);
    }
  });
});
