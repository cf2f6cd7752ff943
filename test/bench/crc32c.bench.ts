// CRC-32C throughput: @node-rs/crc32 (native, what record-batch.ts uses) vs the
// pure-JS crc-32/crc32c and kafkajs's crc32C. Bounded: ~250 ms per case.
//   node dist/test/bench/crc32c.bench.js
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

const require = createRequire(import.meta.url);
const sheetjs = require('crc-32/crc32c.js') as { buf(data: Uint8Array, seed?: number): number };
const kafkajs = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;

const impls: Array<[string, (b: Buffer) => number]> = [
  ['@node-rs/crc32 crc32c', (b) => nativeCrc32c(b) >>> 0],
  ['crc-32/crc32c (JS)', (b) => sheetjs.buf(b) >>> 0],
  ['kafkajs crc32C (JS)', (b) => kafkajs(b) >>> 0],
];

function measure(fn: (b: Buffer) => number, buf: Buffer, budgetMs: number): number {
  let bytes = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(budgetMs) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 8; i++) fn(buf);
    bytes += buf.length * 8;
    now = process.hrtime.bigint();
  }
  const seconds = Number(now - start) / 1e9;
  return bytes / seconds / (1024 * 1024);
}

for (const size of [1024, 64 * 1024, 1024 * 1024]) {
  const buf = randomBytes(size);
  const expected = impls[0]?.[1](buf);
  for (const [name, fn] of impls) {
    if (fn(buf) !== expected) throw new Error(`${name} disagrees on a ${size}-byte buffer`);
    fn(buf); // warm up
    const mbps = measure(fn, buf, 250);
    console.log(`crc32c ${String(size).padStart(8)} B  ${name.padEnd(24)} ${mbps.toFixed(0).padStart(7)} MiB/s`);
  }
}
