// XXH3-64 (seed 0, the default secret): the hash Kafka's group coordinator
// computes its topic and group metadata hashes with (hash4j's
// Hashing.xxh3_64(), KIP-1101). Pure, on BigInt (64-bit lanes), written from
// the XXH3 specification; checked against hash4j in the unit tests.

const M64 = (1n << 64n) - 1n;
const M32 = (1n << 32n) - 1n;

const P32_1 = 0x9e3779b1n;
const P32_2 = 0x85ebca77n;
const P32_3 = 0xc2b2ae3dn;
const P64_1 = 0x9e3779b185ebca87n;
const P64_2 = 0xc2b2ae3d27d4eb4fn;
const P64_3 = 0x165667b19e3779f9n;
const P64_4 = 0x85ebca77c2b2ae63n;
const P64_5 = 0x27d4eb2f165667c5n;
const PRIME_MX1 = 0x165667919e3779f9n;
const PRIME_MX2 = 0x9fb21c651e98df25n;

const SECRET = Buffer.from(
  'b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671fcb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c' +
    '3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364' +
    'eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e',
  'hex',
);
const STRIPE_LEN = 64;
const SECRET_CONSUME_RATE = 8;
const STRIPES_PER_BLOCK = (SECRET.length - STRIPE_LEN) / SECRET_CONSUME_RATE;
const BLOCK_LEN = STRIPE_LEN * STRIPES_PER_BLOCK;

const r64 = (b: Buffer, o: number): bigint => b.readBigUInt64LE(o);
const r32 = (b: Buffer, o: number): bigint => BigInt(b.readUInt32LE(o));
const mul = (a: bigint, b: bigint): bigint => (a * b) & M64;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64;
const swap64 = (x: bigint): bigint => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(x);
  return b.readBigUInt64BE(0);
};

function mulFold(a: bigint, b: bigint): bigint {
  const p = a * b;
  return (p & M64) ^ (p >> 64n);
}

function avalanche(h: bigint): bigint {
  h ^= h >> 37n;
  h = mul(h, PRIME_MX1);
  return h ^ (h >> 32n);
}

function xxh64Avalanche(h: bigint): bigint {
  h ^= h >> 33n;
  h = mul(h, P64_2);
  h ^= h >> 29n;
  h = mul(h, P64_3);
  return h ^ (h >> 32n);
}

function rrmxmx(h: bigint, len: number): bigint {
  h ^= rotl(h, 49n) ^ rotl(h, 24n);
  h = mul(h, PRIME_MX2);
  h ^= ((h >> 35n) + BigInt(len)) & M64;
  h = mul(h, PRIME_MX2);
  return h ^ (h >> 28n);
}

function mix16(b: Buffer, o: number, s: number): bigint {
  return mulFold(r64(b, o) ^ r64(SECRET, s), r64(b, o + 8) ^ r64(SECRET, s + 8));
}

function upTo16(b: Buffer): bigint {
  const len = b.length;
  if (len > 8) {
    const lo = r64(b, 0) ^ (r64(SECRET, 24) ^ r64(SECRET, 32));
    const hi = r64(b, len - 8) ^ (r64(SECRET, 40) ^ r64(SECRET, 48));
    return avalanche((BigInt(len) + swap64(lo) + hi + mulFold(lo, hi)) & M64);
  }
  if (len >= 4) {
    const input = (r32(b, len - 4) + (r32(b, 0) << 32n)) & M64;
    return rrmxmx(input ^ (r64(SECRET, 8) ^ r64(SECRET, 16)), len);
  }
  if (len > 0) {
    const combined = (BigInt(b[0]!) << 16n) | (BigInt(b[len >> 1]!) << 24n) | BigInt(b[len - 1]!) | (BigInt(len) << 8n);
    return xxh64Avalanche(combined ^ ((r32(SECRET, 0) ^ r32(SECRET, 4)) & M32));
  }
  return xxh64Avalanche(r64(SECRET, 56) ^ r64(SECRET, 64));
}

function upTo128(b: Buffer): bigint {
  const len = b.length;
  let acc = mul(BigInt(len), P64_1);
  if (len > 32) {
    if (len > 64) {
      if (len > 96) acc += mix16(b, 48, 96) + mix16(b, len - 64, 112);
      acc += mix16(b, 32, 64) + mix16(b, len - 48, 80);
    }
    acc += mix16(b, 16, 32) + mix16(b, len - 32, 48);
  }
  acc += mix16(b, 0, 0) + mix16(b, len - 16, 16);
  return avalanche(acc & M64);
}

function upTo240(b: Buffer): bigint {
  const len = b.length;
  let acc = mul(BigInt(len), P64_1);
  const rounds = Math.floor(len / 16);
  for (let i = 0; i < 8; i++) acc += mix16(b, 16 * i, 16 * i);
  acc = avalanche(acc & M64);
  for (let i = 8; i < rounds; i++) acc += mix16(b, 16 * i, 16 * (i - 8) + 3);
  acc += mix16(b, len - 16, 136 - 17);
  return avalanche(acc & M64);
}

function accumulate512(acc: bigint[], b: Buffer, o: number, s: number): void {
  for (let i = 0; i < 8; i++) {
    const v = r64(b, o + 8 * i);
    const k = v ^ r64(SECRET, s + 8 * i);
    acc[i ^ 1] = (acc[i ^ 1]! + v) & M64;
    acc[i] = (acc[i]! + (k & M32) * (k >> 32n)) & M64;
  }
}

function scramble(acc: bigint[], s: number): void {
  for (let i = 0; i < 8; i++) {
    let a = acc[i]!;
    a ^= a >> 47n;
    a ^= r64(SECRET, s + 8 * i);
    acc[i] = mul(a, P32_1);
  }
}

function long(b: Buffer): bigint {
  const len = b.length;
  const acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1];
  const blocks = Math.floor((len - 1) / BLOCK_LEN);
  for (let n = 0; n < blocks; n++) {
    for (let s = 0; s < STRIPES_PER_BLOCK; s++) accumulate512(acc, b, n * BLOCK_LEN + s * STRIPE_LEN, s * SECRET_CONSUME_RATE);
    scramble(acc, SECRET.length - STRIPE_LEN);
  }
  const stripes = Math.floor((len - 1 - BLOCK_LEN * blocks) / STRIPE_LEN);
  for (let s = 0; s < stripes; s++) accumulate512(acc, b, blocks * BLOCK_LEN + s * STRIPE_LEN, s * SECRET_CONSUME_RATE);
  accumulate512(acc, b, len - STRIPE_LEN, SECRET.length - STRIPE_LEN - 7);
  let result = mul(BigInt(len), P64_1);
  for (let i = 0; i < 4; i++) result += mulFold(acc[2 * i]! ^ r64(SECRET, 11 + 16 * i), acc[2 * i + 1]! ^ r64(SECRET, 11 + 16 * i + 8));
  return avalanche(result & M64);
}

/** XXH3-64 of `data` with seed 0, as an unsigned 64-bit value. */
export function xxh3(data: Buffer): bigint {
  if (data.length <= 16) return upTo16(data);
  if (data.length <= 128) return upTo128(data);
  if (data.length <= 240) return upTo240(data);
  return long(data);
}
