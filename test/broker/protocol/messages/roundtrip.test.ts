// Every generated message, at every valid version: random values (seeded)
// survive encode -> decode unchanged, and re-encoding the decoded value gives
// the same bytes. Unknown tagged fields are included in flexible versions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Reader } from '../../../../broker/protocol/reader.js';
import { Writer } from '../../../../broker/protocol/writer.js';
import { codecOf } from './codecs.js';
import { Sampler, rng } from './sample.js';
import { schemas } from './schemas.js';

const SAMPLES = Number(process.env.ROUNDTRIP_SAMPLES ?? 12);

function encode(enc: (w: Writer, v: number, m: unknown) => void, version: number, m: unknown): Buffer {
  const w = new Writer(32);
  enc(w, version, m);
  return w.toBuffer();
}

test('schemas cover every generated message', () => {
  assert.ok(schemas.filter((s) => s.kind === 'request').length >= 85);
  assert.equal(
    schemas.filter((s) => s.kind === 'request').length,
    schemas.filter((s) => s.kind === 'response').length,
  );
  for (const s of schemas) codecOf(s.name);
});

for (const schema of schemas) {
  test(`${schema.name} round-trips at every version`, () => {
    const { decode, encode: enc } = codecOf(schema.name);
    let seed = 0;
    for (const ch of schema.name) seed = (seed * 31 + ch.charCodeAt(0)) >>> 0;
    for (let version = schema.valid[0]; version <= schema.valid[1]; version++) {
      const rnd = rng(seed + version);
      for (let i = 0; i < SAMPLES; i++) {
        const m = new Sampler(schema, version, rnd).message();
        const bytes = encode(enc, version, m);
        const r = new Reader(bytes);
        let decoded: unknown;
        try {
          decoded = decode(r, version);
        } catch (e) {
          assert.fail(`${schema.name} v${version} sample ${i}: decode threw ${String(e)}`);
        }
        assert.equal(r.remaining, 0, `${schema.name} v${version}: trailing bytes`);
        assert.deepStrictEqual(decoded, m, `${schema.name} v${version} sample ${i}`);
        assert.ok(encode(enc, version, decoded).equals(bytes), `${schema.name} v${version}: re-encoding differs`);
      }
    }
  });
}
