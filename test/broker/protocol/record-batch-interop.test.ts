// Interop with real clients' encoders:
// - librdkafka 2.0.2 (confluent-kafka-python): batches captured byte-for-byte
//   from its mock cluster by fixtures/capture-librdkafka.py, one per codec;
// - Apache Kafka (kafka-clients, the reference release of test/support/kafka-ref): batches written by MemoryRecordsBuilder
//   (xerial snappy, KafkaLZ4BlockOutputStream, zstd-jni, GZIPOutputStream) and a
//   COMMIT marker, committed as fixtures by fixtures/KafkaBatchInterop.java; the
//   same program reads our batches back through Kafka's CRC check and iterators;
// - kafkajs: its own RecordBatch encoder and decoder, run in-process (gzip is
//   the only codec kafkajs ships).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  COMPRESSION_TYPES,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  decodeRecordBatch,
  isControl,
  isTransactional,
  iterateBatches,
  validateProduceRecords,
} from '../../../broker/protocol/record-batch.js';
import { decodeControlRecordKey, decodeEndTxnMarkerValue } from '../../../broker/protocol/records.js';
import { kafkaClasspath, requireTools, toolsFor } from '../../support/tools.js';

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('package.json not found above the test');
    dir = up;
  }
  return dir;
}

const fixtures = path.join(repoRoot(), 'test/broker/protocol/fixtures');
const fixture = (name: string): Buffer => readFileSync(path.join(fixtures, name));

for (const codec of COMPRESSION_TYPES) {
  test(`librdkafka ${codec} batch decodes, validates and matches what was produced`, () => {
    const buf = fixture(`librdkafka-${codec}.bin`);
    const scan = iterateBatches(buf);
    const batches = [...scan];
    assert.equal(scan.truncated, undefined);
    assert.equal(batches.length, 1);
    const d = decodeRecordBatch(buf, 0);
    assert.equal(d.compression, codec);
    // The produce side sees offset 0 (the mock assigns offsets like a broker).
    const copy = Buffer.from(buf);
    copy.writeBigInt64BE(0n, 0);
    validateProduceRecords(copy, 1024 * 1024, { level: 'deep' });
    assert.equal(d.records.length, 5);
    d.records.forEach((r, i) => {
      assert.equal(r.offset, BigInt(i));
      assert.equal(r.timestamp, 1700000000000n + BigInt(i));
      assert.equal(r.key?.toString() ?? null, i === 3 ? null : `key-${i}`);
      assert.equal(r.value?.toString(), `value-${i} `.repeat(20));
      const headers = r.headers.map((h) => [h.key, h.value?.toString() ?? null]);
      assert.deepEqual(headers, i % 2 === 0 ? [['h', `v${i}`], ['nullh', null]] : []);
    });
  });
}

test('librdkafka idempotent and transactional batches carry producer id, epoch and sequence', () => {
  const idem = decodeRecordBatch(fixture('librdkafka-idempotent-lz4.bin'));
  assert.ok(idem.header.producerId >= 0n);
  assert.equal(idem.header.baseSequence, 0);
  assert.equal(idem.header.lastOffsetDelta, 4);
  const txn = decodeRecordBatch(fixture('librdkafka-transactional.bin'));
  assert.ok(isTransactional(txn.header.attributes));
  assert.ok(txn.header.producerId >= 0n);
  assert.deepEqual(txn.records.map((r) => r.value?.toString()), ['tx0', 'tx1', 'tx2']);
});

for (const codec of COMPRESSION_TYPES) {
  test(`Java (kafka-clients) ${codec} batch decodes and validates here`, () => {
    const buf = fixture(`java-${codec}.bin`);
    const v = validateProduceRecords(buf, 1024 * 1024, { level: 'deep' });
    assert.equal(v.compression, codec);
    const d = decodeRecordBatch(buf);
    assert.equal(d.header.producerId, 1234n);
    assert.equal(d.header.producerEpoch, 5);
    assert.equal(d.header.baseSequence, 17);
    assert.deepEqual(
      d.records.map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value?.toString(), r.headers.map((h) => [h.key, h.value?.toString() ?? null])]),
      Array.from({ length: 5 }, (_, i) => [
        BigInt(i),
        1700000000000n + BigInt(i),
        i === 3 ? null : `key-${i}`,
        `value-${i} `.repeat(200),
        i % 2 === 0 ? [['h', `v${i}`], ['nullh', null]] : [],
      ]),
    );
  });
}

test('Java snappy is xerial-framed and librdkafka snappy is a raw block; both decode', () => {
  const java = fixture('java-snappy.bin');
  assert.equal(java.subarray(61, 69).toString('hex'), '82534e4150505900');
  assert.notEqual(fixture('librdkafka-snappy.bin').subarray(61, 69).toString('hex'), '82534e4150505900');
});

test('Java COMMIT marker batch decodes to the control record Kafka wrote', () => {
  const d = decodeRecordBatch(fixture('java-commit-marker.bin'));
  assert.ok(isControl(d.header.attributes) && isTransactional(d.header.attributes));
  assert.equal(d.header.partitionLeaderEpoch, 7);
  assert.equal(d.header.producerId, 4321n);
  const r = d.records[0];
  assert.ok(r !== undefined && d.records.length === 1);
  assert.deepEqual(decodeControlRecordKey(r.key), { version: 0, type: 1 });
  assert.deepEqual(decodeEndTxnMarkerValue(r.value), { version: 0, coordinatorEpoch: 11 });
  assert.equal(r.timestamp, 1700000000999n);
  // Our builder produces the same bytes for the same marker.
  const ours = buildEndTxnMarkerBatch({ type: 'COMMIT', coordinatorEpoch: 11, producerId: 4321n, producerEpoch: 2, timestamp: 1700000000999n, partitionLeaderEpoch: 7 });
  assert.deepEqual(ours, fixture('java-commit-marker.bin'));
});

test('Kafka (kafka-clients, the reference release) reads our batches: CRC valid, every codec, records and markers intact', () => {
  requireTools(toolsFor.kafkaReference);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-interop-'));
  try {
    const files: string[] = [];
    for (const compression of COMPRESSION_TYPES) {
      const buf = buildRecordBatch({
        baseOffset: 50n,
        compression,
        producerId: 8n,
        producerEpoch: 1,
        baseSequence: 3,
        records: [
          { key: 'k0', value: 'x'.repeat(3000), timestamp: 1_700_000_000_000, headers: [{ key: 'a', value: 'b' }, { key: 'n', value: null }] },
          { key: null, value: null, timestamp: 1_700_000_000_002 },
        ],
      });
      const f = path.join(dir, `ours-${compression}.bin`);
      writeFileSync(f, buf);
      files.push(f);
    }
    const marker = path.join(dir, 'ours-abort.bin');
    writeFileSync(marker, buildEndTxnMarkerBatch({ type: 'ABORT', coordinatorEpoch: 9, producerId: 8n, producerEpoch: 1, timestamp: 5, baseOffset: 52n }));
    files.push(marker);
    const out = execFileSync('java', ['-cp', kafkaClasspath(), path.join(fixtures, 'KafkaBatchInterop.java'), 'read', ...files], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const xs = Buffer.from('x'.repeat(3000)).toString('hex');
    const expected: string[] = [];
    for (const compression of COMPRESSION_TYPES) {
      expected.push(
        `batch 50 51 ${compression} 2 control=false txn=false pid=8 epoch=1 seq=3`,
        `record 50 1700000000000 ${Buffer.from('k0').toString('hex')} ${xs} a=62;n=null;`,
        'record 51 1700000000002 null null ',
      );
    }
    expected.push('batch 52 52 none 1 control=true txn=true pid=8 epoch=1 seq=-1', 'marker 52 5 ABORT 9');
    assert.deepEqual(out.trimEnd().split('\n'), expected);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

interface KjsEncoder {
  buffer: Buffer;
}
type KjsRecord = (r: { offsetDelta: number; timestampDelta: number; key: Buffer | null; value: Buffer | null; headers?: Record<string, Buffer> }) => KjsEncoder;
type KjsRecordBatch = (opts: {
  compression: number;
  firstOffset?: unknown;
  firstTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
  producerId?: unknown;
  producerEpoch?: number;
  firstSequence?: number;
  records: KjsEncoder[];
}) => Promise<KjsEncoder>;
interface KjsDecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | null>;
}
type KjsDecoderCtor = new (buf: Buffer) => unknown;
type KjsBatchDecoder = (d: unknown) => Promise<{ records: KjsDecodedRecord[]; lastOffsetDelta: number; producerId: string }>;

const require = createRequire(import.meta.url);
const kjs = {
  RecordBatch: (require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: KjsRecordBatch }).RecordBatch,
  Record: require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as KjsRecord,
  Decoder: require('kafkajs/src/protocol/decoder.js') as KjsDecoderCtor,
  decodeBatch: require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as KjsBatchDecoder,
  Long: require('kafkajs/src/utils/long.js') as { fromValue(v: number | string): unknown },
};

for (const [name, compression] of [['none', 0], ['gzip', 1]] as const) {
  test(`kafkajs-encoded ${name} batch decodes and validates here`, async () => {
    const records = Array.from({ length: 7 }, (_, i) =>
      kjs.Record({
        offsetDelta: i,
        timestampDelta: i * 3,
        key: i === 2 ? null : Buffer.from(`k${i}`),
        value: Buffer.from(`value ${i}`.repeat(i + 1)),
        headers: i === 4 ? { trace: Buffer.from('abc') } : {},
      }),
    );
    const enc = await kjs.RecordBatch({
      compression,
      firstTimestamp: 1_600_000_000_000,
      maxTimestamp: 1_600_000_000_018,
      lastOffsetDelta: 6,
      producerId: kjs.Long.fromValue(12),
      producerEpoch: 1,
      firstSequence: 40,
      records,
    });
    const buf = enc.buffer;
    const v = validateProduceRecords(buf, 1024 * 1024, { level: 'deep' });
    assert.equal(v.compression, name);
    const d = decodeRecordBatch(buf);
    assert.equal(d.header.producerId, 12n);
    assert.equal(d.header.baseSequence, 40);
    assert.deepEqual(
      d.records.map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value?.toString(), r.headers.map((h) => [h.key, h.value?.toString()])]),
      Array.from({ length: 7 }, (_, i) => [
        BigInt(i),
        1_600_000_000_000n + BigInt(i * 3),
        i === 2 ? null : `k${i}`,
        `value ${i}`.repeat(i + 1),
        i === 4 ? [['trace', 'abc']] : [],
      ]),
    );
  });

  test(`kafkajs decodes our ${name} batches`, async () => {
    const buf = buildRecordBatch({
      baseOffset: 100n,
      compression: name,
      producerId: 3n,
      producerEpoch: 0,
      baseSequence: 0,
      records: [
        { key: 'a', value: 'first', timestamp: 1_650_000_000_000, headers: [{ key: 'h', value: 'x' }] },
        { key: null, value: null, timestamp: 1_650_000_000_010 },
      ],
    });
    const out = await kjs.decodeBatch(new kjs.Decoder(buf));
    assert.equal(out.lastOffsetDelta, 1);
    assert.equal(out.producerId, '3');
    assert.deepEqual(
      out.records.map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value?.toString() ?? null, Object.keys(r.headers)]),
      [
        ['100', '1650000000000', 'a', 'first', ['h']],
        ['101', '1650000000010', null, null, []],
      ],
    );
  });
}
