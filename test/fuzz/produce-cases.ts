// Valid Produce requests carrying corrupted record batches (and a few valid
// ones as controls). Each case says what Kafka does with each partition:
// 'reject' (an error code, nothing appended), 'accept' (appended), or
// 'either' (Kafka's answer depends on details we do not pin down; whatever the
// broker answers must match what it stored).
import { encodeRequestMessage } from '../../broker/protocol/frame.js';
import { ZERO_UUID, apis } from '../../broker/protocol/messages/index.js';
import {
  BATCH_HEADER_SIZE,
  OFFSET_ATTRIBUTES,
  OFFSET_BASE_SEQUENCE,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_LAST_OFFSET_DELTA,
  OFFSET_MAGIC,
  OFFSET_PARTITION_LEADER_EPOCH,
  OFFSET_PRODUCER_EPOCH,
  OFFSET_PRODUCER_ID,
  OFFSET_RECORDS_COUNT,
  buildRecordBatch,
  rewriteBatchCrc,
  COMPRESSION_TYPES,
  type CompressionType,
} from '../../broker/protocol/record-batch.js';
import type { Prng } from './prng.js';

export type PartitionExpectation = 'reject' | 'accept' | 'either';

export interface ProducedPartition {
  readonly topic: string;
  readonly index: number;
  readonly expect: PartitionExpectation;
  /** Records appended if the broker accepts this partition's data. */
  readonly records: number;
  /** Keys of those records, in order. */
  readonly keys: readonly string[];
  /** The damage is inside a compressed payload whose CRC was fixed: only decompressing finds it. */
  readonly insideCompressedPayload?: boolean;
}

export interface ProduceCase {
  readonly frame: Buffer;
  readonly version: number;
  readonly correlationId: number;
  readonly acks: number;
  /** The target topic's id: from v13 the response names topics by id only. */
  readonly topicId: string;
  readonly partitions: readonly ProducedPartition[];
  readonly what: string;
}

export interface ProduceTarget {
  readonly topic: string;
  readonly partitions: number;
  /** The topic's id, which names it from Produce v13. */
  readonly topicId: string;
  /** Highest Produce version the broker advertises. */
  readonly maxVersion: number;
}

interface Batch {
  bytes: Buffer;
  keys: string[];
}

function validBatch(rng: Prng, caseId: number, tag: string, compression: CompressionType): Batch {
  const n = rng.int(1, 30);
  const keys: string[] = [];
  const now = Date.now();
  const records = Array.from({ length: n }, (_, k) => {
    const key = `fz-${caseId}-${tag}${k}`;
    keys.push(key);
    return {
      key,
      value: `v-${caseId}-${tag}${k}-${'z'.repeat(rng.int(0, 200))}`,
      headers: rng.bool(0.3) ? [{ key: 'h', value: `${k}` }] : [],
      timestamp: now - rng.int(0, 1000),
    };
  });
  return { bytes: buildRecordBatch({ records, compression }), keys };
}

type Corruption = { what: string; expect: PartitionExpectation; payload?: boolean; apply(b: Buffer, rng: Prng): Buffer };

const recrc = (b: Buffer): Buffer => {
  rewriteBatchCrc(b, 0, b.length);
  return b;
};

/** Corruptions of one batch; the expectation is Kafka's answer for the partition. */
const corruptions: readonly Corruption[] = [
  // Kafka (UnifiedLog.analyzeAndValidateRecords): a client batch's baseOffset must be 0 (INVALID_RECORD).
  { what: 'non-zero baseOffset', expect: 'reject', apply: (b, rng) => (b.writeBigInt64BE(BigInt(rng.pick([1, -1, rng.int(2, 1_000_000_000)])), 0), b) },
  { what: 'flipped CRC', expect: 'reject', apply: (b, rng) => (b.writeUInt32BE((b.readUInt32BE(OFFSET_CRC) ^ (1 << rng.int(0, 31))) >>> 0, OFFSET_CRC), b) },
  { what: 'flipped bit after the CRC, CRC kept', expect: 'reject', apply: (b, rng) => {
    const i = rng.int(OFFSET_ATTRIBUTES, b.length - 1);
    b[i] = (b[i] ?? 0) ^ (1 << rng.int(0, 7));
    return b;
  } },
  { what: 'magic 0', expect: 'reject', apply: (b) => (b.writeInt8(0, OFFSET_MAGIC), b) },
  { what: 'magic 1', expect: 'reject', apply: (b) => (b.writeInt8(1, OFFSET_MAGIC), b) },
  { what: 'magic 3', expect: 'reject', apply: (b) => (b.writeInt8(3, OFFSET_MAGIC), b) },
  { what: 'magic -1', expect: 'reject', apply: (b) => (b.writeInt8(-1, OFFSET_MAGIC), b) },
  { what: 'batchLength beyond the data', expect: 'reject', apply: (b, rng) => (b.writeInt32BE(b.length - 12 + rng.int(1, 5000), OFFSET_BATCH_LENGTH), b) },
  { what: 'batchLength short of the data', expect: 'reject', apply: (b, rng) => (b.writeInt32BE(Math.max(0, b.length - 12 - rng.int(1, 40)), OFFSET_BATCH_LENGTH), b) },
  { what: 'batchLength negative', expect: 'reject', apply: (b, rng) => (b.writeInt32BE(rng.pick([-1, -12, -0x80000000]), OFFSET_BATCH_LENGTH), b) },
  { what: 'batchLength 0x7fffffff', expect: 'reject', apply: (b) => (b.writeInt32BE(0x7fffffff, OFFSET_BATCH_LENGTH), b) },
  { what: 'batchLength below the header', expect: 'reject', apply: (b, rng) => (b.writeInt32BE(rng.int(0, BATCH_HEADER_SIZE - 13), OFFSET_BATCH_LENGTH), b) },
  { what: 'record count off (CRC fixed)', expect: 'reject', payload: true, apply: (b, rng) => {
    const n = b.readInt32BE(OFFSET_RECORDS_COUNT);
    b.writeInt32BE(rng.pick([n + 1, n - 1, 0, -1, 0x7fffffff, n + 1000]), OFFSET_RECORDS_COUNT);
    return recrc(b);
  } },
  { what: 'lastOffsetDelta off (CRC fixed)', expect: 'reject', payload: true, apply: (b, rng) => {
    const d = b.readInt32BE(OFFSET_LAST_OFFSET_DELTA);
    b.writeInt32BE(rng.pick([d + 1, d + 100, -1, -0x80000000, 0x7fffffff].filter((v) => v !== d)), OFFSET_LAST_OFFSET_DELTA);
    return recrc(b);
  } },
  { what: 'unknown compression codec (CRC fixed)', expect: 'reject', apply: (b, rng) => {
    b.writeInt16BE((b.readInt16BE(OFFSET_ATTRIBUTES) & ~7) | rng.int(5, 7), OFFSET_ATTRIBUTES);
    return recrc(b);
  } },
  { what: 'control batch from a client (CRC fixed)', expect: 'reject', apply: (b) => {
    b.writeInt16BE(b.readInt16BE(OFFSET_ATTRIBUTES) | 0x20, OFFSET_ATTRIBUTES);
    return recrc(b);
  } },
  { what: 'producer id without a sequence (CRC fixed)', expect: 'reject', apply: (b, rng) => {
    b.writeBigInt64BE(BigInt(rng.int(1, 1_000_000)), OFFSET_PRODUCER_ID);
    b.writeInt16BE(0, OFFSET_PRODUCER_EPOCH);
    b.writeInt32BE(-1, OFFSET_BASE_SEQUENCE);
    return recrc(b);
  } },
  { what: 'records region truncated (length and CRC fixed)', expect: 'reject', payload: true, apply: (b, rng) => {
    const cut = rng.int(1, Math.max(1, b.length - BATCH_HEADER_SIZE));
    const out = Buffer.from(b.subarray(0, b.length - cut));
    out.writeInt32BE(out.length - 12, OFFSET_BATCH_LENGTH);
    return recrc(out);
  } },
  { what: 'first record length varint huge (CRC fixed)', expect: 'reject', apply: (b) => {
    // Uncompressed only (see below): the first record starts right after the header.
    b[BATCH_HEADER_SIZE] = 0xfe;
    b[BATCH_HEADER_SIZE + 1] = 0xff;
    b[BATCH_HEADER_SIZE + 2] = 0xff;
    b[BATCH_HEADER_SIZE + 3] = 0x0f;
    return recrc(b);
  } },
  { what: 'records replaced by random bytes (CRC fixed)', expect: 'reject', payload: true, apply: (b, rng) => {
    rng.bytes(b.length - BATCH_HEADER_SIZE).copy(b, BATCH_HEADER_SIZE);
    return recrc(b);
  } },
  { what: 'bytes after the last record inside the batch (length and CRC fixed)', expect: 'either', payload: true, apply: (b, rng) => {
    const out = Buffer.concat([b, rng.bytes(rng.int(1, 20))]);
    out.writeInt32BE(out.length - 12, OFFSET_BATCH_LENGTH);
    return recrc(out);
  } },
  { what: 'flipped bit in the records (CRC fixed)', expect: 'either', payload: true, apply: (b, rng) => {
    const i = rng.int(BATCH_HEADER_SIZE, b.length - 1);
    b[i] = (b[i] ?? 0) ^ (1 << rng.int(0, 7));
    return recrc(b);
  } },
];

/** A field outside the CRC that the broker overwrites, and no change at all: valid batches. */
const harmless: readonly Corruption[] = [
  { what: 'garbage partitionLeaderEpoch', expect: 'accept', apply: (b, rng) => (b.writeInt32BE(rng.int(-1000, 1000), OFFSET_PARTITION_LEADER_EPOCH), b) },
  { what: 'valid', expect: 'accept', apply: (b) => b },
];

let nextCorrelationId = 1_000_000;

function frameOf(version: number, acks: number, data: Array<{ topic: string; index: number; records: Buffer | null }>, topicId: string): { frame: Buffer; correlationId: number } {
  const correlationId = nextCorrelationId++;
  const byTopic = new Map<string, Array<{ index: number; records: Buffer | null }>>();
  for (const d of data) {
    const list = byTopic.get(d.topic) ?? [];
    list.push({ index: d.index, records: d.records });
    byTopic.set(d.topic, list);
  }
  const chunks = encodeRequestMessage(apis.Produce, version, correlationId, 'sediment-fuzz', {
    transactionalId: null,
    acks,
    timeoutMs: 30_000,
    // v13+ names the topic by id only (every case produces to the one target topic).
    topicData: [...byTopic].map(([name, partitionData]) => ({ name, topicId: version >= 13 ? topicId : ZERO_UUID, partitionData })),
  });
  return { frame: Buffer.concat(chunks), correlationId };
}

/** One partition's records field: a batch (maybe corrupted), sometimes preceded by valid batches. */
function partitionData(
  rng: Prng,
  caseId: number,
  p: number,
  version: number,
): { records: Buffer | null; expect: PartitionExpectation; count: number; keys: string[]; what: string; insideCompressedPayload?: boolean } {
  const shape = rng.int(0, 99);
  if (shape < 3) return { records: null, expect: 'reject', count: 0, keys: [], what: 'null records' };
  if (shape < 6) return { records: Buffer.alloc(0), expect: 'reject', count: 0, keys: [], what: 'empty records' };
  const compression = rng.pick(COMPRESSION_TYPES);
  const batch = validBatch(rng, caseId, `p${p}b0-`, compression);
  if (shape < 10) {
    const n = rng.int(1, batch.bytes.length - 1);
    return { records: Buffer.from(batch.bytes.subarray(0, n)), expect: 'reject', count: 0, keys: [], what: `partial batch (${n} of ${batch.bytes.length} bytes, ${compression})` };
  }
  if (shape < 14) {
    // Kafka trims bytes after the last whole batch; a trailing size field below 14 is CORRUPT_MESSAGE.
    const junk = rng.bytes(rng.int(1, 30));
    return { records: Buffer.concat([batch.bytes, junk]), expect: 'either', count: batch.keys.length, keys: batch.keys, what: `valid ${compression} batch + ${junk.length} trailing bytes` };
  }
  // Kafka (ProduceRequest.validateRecords): zstd needs Produce v7+ (UNSUPPORTED_COMPRESSION_TYPE before).
  const zstdTooOld = compression === 'zstd' && version < 7;
  if (shape < 30) {
    const h = rng.pick(harmless);
    return { records: h.apply(batch.bytes, rng), expect: zstdTooOld ? 'reject' : h.expect, count: batch.keys.length, keys: batch.keys, what: `${h.what} (${compression})` };
  }
  if (shape < 33) {
    // Kafka (ProduceRequest.validateRecords): exactly one record batch per partition in Produce v3+.
    const second = validBatch(rng, caseId, `p${p}c-`, 'none');
    return { records: Buffer.concat([batch.bytes, second.bytes]), expect: 'reject', count: 0, keys: [], what: `two valid batches (${compression}, none)` };
  }
  let c = rng.pick(corruptions);
  // Record-level surgery only means something on uncompressed records.
  if (compression !== 'none' && c.what.startsWith('first record')) c = corruptions[0]!;
  const bad = c.apply(batch.bytes, rng);
  if (shape < 45) {
    // A valid batch first, the corrupt one after. A second whole batch is refused (one batch per
    // partition); an incomplete one is trimmed as Kafka does, and then only the first batch counts.
    const first = validBatch(rng, caseId, `p${p}a-`, rng.pick(COMPRESSION_TYPES.filter((x) => x !== 'zstd' || version >= 7)));
    const declared = bad.length >= 12 ? bad.readInt32BE(OFFSET_BATCH_LENGTH) + 12 : -1;
    const whole = declared >= BATCH_HEADER_SIZE && declared <= bad.length;
    return {
      records: Buffer.concat([first.bytes, bad]),
      expect: whole ? 'reject' : 'either',
      count: first.keys.length,
      keys: first.keys,
      what: `valid batch, then ${c.what} (${compression}, ${whole ? 'whole' : 'incomplete'})`,
    };
  }
  const expect = c.expect === 'either' && zstdTooOld ? 'reject' : c.expect;
  const inside = c.payload === true && compression !== 'none' && expect === 'reject' && !zstdTooOld;
  return { records: bad, expect, count: batch.keys.length, keys: batch.keys, what: `${c.what} (${compression})`, ...(inside ? { insideCompressedPayload: true } : {}) };
}

export function produceCase(rng: Prng, caseId: number, target: ProduceTarget): ProduceCase {
  const version = rng.int(3, target.maxVersion);
  const nParts = rng.int(1, Math.min(3, target.partitions));
  const indexes = [...new Set(Array.from({ length: nParts }, () => rng.int(0, target.partitions - 1)))];
  const parts: ProducedPartition[] = [];
  const data: Array<{ topic: string; index: number; records: Buffer | null }> = [];
  const what: string[] = [];
  for (const index of indexes) {
    const d = partitionData(rng, caseId, index, version);
    parts.push({ topic: target.topic, index, expect: d.expect, records: d.count, keys: d.keys, ...(d.insideCompressedPayload === true ? { insideCompressedPayload: true } : {}) });
    data.push({ topic: target.topic, index, records: d.records });
    what.push(`p${index}: ${d.what}`);
  }
  if (rng.bool(0.1)) {
    // A partition that does not exist.
    const b = validBatch(rng, caseId, 'x-', 'none');
    const index = target.partitions + rng.int(0, 5);
    parts.push({ topic: target.topic, index, expect: 'reject', records: b.keys.length, keys: b.keys });
    data.push({ topic: target.topic, index, records: b.bytes });
    what.push(`p${index} (no such partition): valid batch`);
  }
  const acks = rng.pick([1, -1]);
  const { frame, correlationId } = frameOf(version, acks, data, target.topicId);
  return { frame, version, correlationId, acks, topicId: target.topicId, partitions: parts, what: `Produce v${version} acks=${acks}: ${what.join(' | ')}` };
}

/** acks=0 with a batch Kafka rejects: no response; Kafka closes the connection. */
export function produceAcks0Case(rng: Prng, caseId: number, target: ProduceTarget): ProduceCase {
  const version = rng.int(3, target.maxVersion);
  const index = rng.int(0, target.partitions - 1);
  const batch = validBatch(rng, caseId, 'z-', 'none');
  const c = rng.pick(corruptions.filter((x) => x.expect === 'reject'));
  const { frame, correlationId } = frameOf(version, 0, [{ topic: target.topic, index, records: c.apply(batch.bytes, rng) }], target.topicId);
  return { frame, version, correlationId, acks: 0, topicId: target.topicId, partitions: [{ topic: target.topic, index, expect: 'reject', records: 0, keys: [] }], what: `Produce v${version} acks=0: p${index}: ${c.what}` };
}
