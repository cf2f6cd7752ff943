// Rebuilding a record batch in another codec, for topics whose compression.type
// names one (Kafka's LogValidator.buildRecordsAndAssignOffsets). Pure; no I/O.
//
// Only the append path calls this, and only when it must: a batch whose codec
// is the topic's (or any batch on a compression.type=producer topic) is stored
// verbatim. Like Kafka's MemoryRecordsBuilder the rebuilt batch keeps the
// producer id, epoch, base sequence and transactional flag, and every record's
// key, value, headers and absolute timestamp; offset deltas become 0, 1, 2...,
// the base timestamp becomes the first record's timestamp and maxTimestamp the
// largest, the timestamp type becomes CreateTime (a LogAppendTime topic stamps
// its time afterwards), and record attributes are 0. Header keys travel as
// UTF-8 strings, as Kafka's DefaultRecord reads and writes them.
import { type CompressionType, decodeRecordBatch, buildRecordBatch, isControl, isTransactional } from './record-batch.js';
import { KafkaError, ErrorCode } from './errors.js';

/** compression.type of a topic: Kafka's BrokerCompressionType, with 'none' for "uncompressed". */
export type TopicCompressionType = 'producer' | CompressionType;

export interface TopicCompression {
  readonly type: TopicCompressionType;
  /** compression.gzip.level; -1 = zlib's default (6), as java.util.zip.Deflater. */
  readonly gzipLevel?: number;
  /** compression.zstd.level (3 by default). */
  readonly zstdLevel?: number;
}

/** The codec a batch must be stored in, or null to store it as it came. */
export function targetCodec(topic: TopicCompression | undefined, batch: { readonly compression: CompressionType; readonly attributes: number; readonly rebuild?: boolean }): CompressionType | null {
  const target = topic === undefined || topic.type === 'producer' ? batch.compression : topic.type;
  // Kafka leaves an uncompressed control batch (a transaction marker) uncompressed.
  if (batch.compression === 'none' && isControl(batch.attributes)) return null;
  if (target !== batch.compression || batch.rebuild === true) return target;
  return null;
}

function levelFor(codec: CompressionType, topic: TopicCompression | undefined): number | undefined {
  if (codec === 'gzip') return topic?.gzipLevel === undefined || topic.gzipLevel === -1 ? undefined : topic.gzipLevel;
  if (codec === 'zstd') return topic?.zstdLevel;
  return undefined;
}

/**
 * The batch at `buf[pos, pos + size)` rebuilt in `codec`. Its header's
 * baseOffset and partitionLeaderEpoch are carried over (the append path
 * assigns both afterwards). Throws KafkaError(CORRUPT_MESSAGE) for a batch
 * that does not decode; callers pass batches that validation has accepted.
 */
export function rebuildBatch(buf: Buffer, pos: number, size: number, codec: CompressionType, topic?: TopicCompression, maxDecompressedBytes?: number): Buffer {
  const decoded = decodeRecordBatch(buf.subarray(pos, pos + size), 0, {
    verifyCrc: false,
    ...(maxDecompressedBytes === undefined ? {} : { maxDecompressedBytes }),
  });
  const h = decoded.header;
  if (decoded.records.length === 0) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, 'cannot rebuild a batch without records');
  const level = levelFor(codec, topic);
  return buildRecordBatch({
    records: decoded.records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })),
    baseOffset: h.baseOffset,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    compression: codec,
    ...(level === undefined ? {} : { compressionLevel: level }),
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    transactional: isTransactional(h.attributes),
  });
}
