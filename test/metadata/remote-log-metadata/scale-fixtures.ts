// A large remote log metadata topic for the scale test and its benchmark
// (test/bench/metadata-scale.bench.ts): 100k segments' events held packed, so
// the test's own storage does not weigh on the collector.
import { metadataPartition } from '../../../metadata/remote-log-metadata/metadata-partitioner.js';
import type { MetadataTopicLog, MetadataTopicRecord } from '../../../metadata/remote-log-metadata/metadata-topic-log.js';
import { RemoteLogMetadataCache } from '../../../metadata/remote-log-metadata/remote-log-metadata-cache.js';
import { serializeRemoteLogMetadata } from '../../../metadata/remote-log-metadata/serde.js';
import { TP0, segment, update } from './fixtures.js';

/**
 * A metadata topic held as one packed buffer per partition, so that the test's
 * own storage (400k record objects otherwise) does not weigh on the collector
 * while replay is timed. Records are materialised as views when read.
 */
export class PackedLog implements MetadataTopicLog {
  private readonly packed: Array<{ data: Buffer; ends: Int32Array }>;
  constructor(
    readonly partitionCount: number,
    values: Map<number, Buffer[]>,
  ) {
    this.packed = Array.from({ length: partitionCount }, (_, p) => {
      const list = values.get(p) ?? [];
      const ends = new Int32Array(list.length);
      let end = 0;
      list.forEach((v, i) => (ends[i] = end += v.length));
      return { data: Buffer.concat(list, end), ends };
    });
  }
  get size(): number {
    return this.packed.reduce((n, p) => n + p.ends.length, 0);
  }
  append(): Promise<bigint> {
    return Promise.reject(new Error('read-only'));
  }
  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    const { data, ends } = this.packed[partition] as { data: Buffer; ends: Int32Array };
    for (let i = Number(fromOffset); i < ends.length; i++) {
      const start = i === 0 ? 0 : (ends[i - 1] as number);
      yield { offset: BigInt(i), key: null, value: data.subarray(start, ends[i] as number) };
    }
  }
}

/**
 * The metadata topic after `live` segments were copied and `expired` more were
 * copied and then deleted: 2 records per live segment, 4 per expired one.
 */
export function buildLog(live: number, expired: number, partitions: number): PackedLog {
  const p = metadataPartition(TP0, partitions);
  const values: Buffer[] = [];
  let epoch = 0;
  for (let id = 0; id < live + expired; id++) {
    if (id % 1000 === 0) epoch++;
    const start = id * 1000;
    const meta = segment({ id, start, end: start + 999, epochs: [[epoch, start]], size: 1_048_576 });
    values.push(serializeRemoteLogMetadata({ type: 'segment', metadata: meta }));
    values.push(serializeRemoteLogMetadata({ type: 'segmentUpdate', update: update(id, 'COPY_SEGMENT_FINISHED') }));
    // Retention expires the oldest segments as new ones arrive.
    if (id >= live) {
      const old = id - live;
      values.push(serializeRemoteLogMetadata({ type: 'segmentUpdate', update: update(old, 'DELETE_SEGMENT_STARTED') }));
      values.push(serializeRemoteLogMetadata({ type: 'segmentUpdate', update: update(old, 'DELETE_SEGMENT_FINISHED') }));
    }
  }
  return new PackedLog(partitions, new Map([[p, values]]));
}

/** A cache of `n` finished segments of TP0, 1000 offsets and 1 MiB each, a new leader epoch every 1000. */
export function fillCache(n: number): RemoteLogMetadataCache {
  const cache = new RemoteLogMetadataCache(TP0);
  let epoch = 0;
  for (let id = 0; id < n; id++) {
    if (id % 1000 === 0) epoch++;
    const start = id * 1000;
    cache.addCopyInProgressSegment(segment({ id, start, end: start + 999, epochs: [[epoch, start]], size: 1_048_576 }));
    cache.updateRemoteLogSegmentMetadata(update(id, 'COPY_SEGMENT_FINISHED'));
  }
  return cache;
}
