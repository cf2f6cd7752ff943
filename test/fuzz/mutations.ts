// Byte-level mutations of a frame payload (the bytes after the size prefix),
// each returning a new buffer and a short description for the failure report.
import type { Prng } from './prng.js';

export interface Mutated {
  readonly bytes: Buffer;
  readonly what: string;
}

const interesting16 = [0, 1, -1, 0x7fff, -0x8000, 0x100, 0xff];
const interesting32 = [0, 1, -1, 0x7fffffff, -0x80000000, 0x10000, 0xffff, 100_000_000];

type Mutator = (b: Buffer, rng: Prng) => Mutated;

const mutators: readonly Mutator[] = [
  (b, rng) => {
    const out = Buffer.from(b);
    const i = rng.int(0, out.length - 1);
    const bit = rng.int(0, 7);
    out[i] = (out[i] ?? 0) ^ (1 << bit);
    return { bytes: out, what: `flip bit ${bit} of byte ${i}` };
  },
  (b, rng) => {
    const out = Buffer.from(b);
    const i = rng.int(0, out.length - 1);
    const v = rng.pick([0x00, 0xff, 0x7f, 0x80, rng.int(0, 255)]);
    out[i] = v;
    return { bytes: out, what: `byte ${i} = 0x${v.toString(16)}` };
  },
  (b, rng) => {
    if (b.length < 2) return { bytes: Buffer.from(b), what: 'no-op' };
    const out = Buffer.from(b);
    const i = rng.int(0, out.length - 2);
    const v = rng.pick(interesting16);
    out.writeInt16BE(v, i);
    return { bytes: out, what: `int16 at ${i} = ${v}` };
  },
  (b, rng) => {
    if (b.length < 4) return { bytes: Buffer.from(b), what: 'no-op' };
    const out = Buffer.from(b);
    const i = rng.int(0, out.length - 4);
    const v = rng.pick(interesting32);
    out.writeInt32BE(v, i);
    return { bytes: out, what: `int32 at ${i} = ${v}` };
  },
  (b, rng) => {
    const i = rng.int(0, b.length);
    const junk = rng.bytes(rng.int(1, 32));
    return { bytes: Buffer.concat([b.subarray(0, i), junk, b.subarray(i)]), what: `insert ${junk.length} bytes at ${i}` };
  },
  (b, rng) => {
    const i = rng.int(0, Math.max(0, b.length - 1));
    const n = rng.int(1, Math.max(1, Math.min(32, b.length - i)));
    return { bytes: Buffer.concat([b.subarray(0, i), b.subarray(i + n)]), what: `delete ${n} bytes at ${i}` };
  },
  (b, rng) => {
    const i = rng.int(0, Math.max(0, b.length - 1));
    const n = rng.int(1, Math.max(1, Math.min(64, b.length - i)));
    const at = rng.int(0, b.length);
    return { bytes: Buffer.concat([b.subarray(0, at), b.subarray(i, i + n), b.subarray(at)]), what: `copy ${n} bytes from ${i} to ${at}` };
  },
  (b, rng) => {
    const n = rng.int(0, b.length);
    return { bytes: Buffer.from(b.subarray(0, n)), what: `truncate to ${n}` };
  },
  (b, rng) => {
    const junk = rng.bytes(rng.int(1, 64));
    return { bytes: Buffer.concat([b, junk]), what: `append ${junk.length} bytes` };
  },
  (b, rng) => {
    // A varint-looking run: continuation bits set, as in a corrupted length.
    const out = Buffer.from(b);
    const i = rng.int(0, out.length - 1);
    const n = rng.int(1, 6);
    for (let k = 0; k < n && i + k < out.length; k++) out[i + k] = 0x80 | rng.int(0, 127);
    return { bytes: out, what: `varint run of ${n} at ${i}` };
  },
];

/** Applies 1 to `max` random mutations, never touching the first `protect` bytes. */
export function mutate(payload: Buffer, rng: Prng, max = 4, protect = 0): Mutated {
  let bytes = payload.subarray(protect);
  const what: string[] = [];
  const n = rng.int(1, max);
  for (let k = 0; k < n; k++) {
    if (bytes.length === 0) break;
    const m = rng.pick(mutators)(bytes, rng);
    bytes = m.bytes;
    what.push(m.what);
  }
  return { bytes: Buffer.concat([payload.subarray(0, protect), bytes]), what: what.join('; ') };
}

/** A size prefix followed by `payload`. */
export function framed(payload: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length);
  return Buffer.concat([size, payload]);
}
