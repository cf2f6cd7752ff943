// Scale figures for the remote log metadata index: heap per remote segment with
// 100k segments in one partition, and replay time of 100k segments' events
// (400k records) against a quarter of that, to show replay grows linearly.
// Prints the figures; the assertions are loose bounds, not benchmarks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { metadataPartition } from '../../../metadata/remote-log-metadata/metadata-partitioner.js';
import type { MetadataTopicLog, MetadataTopicRecord } from '../../../metadata/remote-log-metadata/metadata-topic-log.js';
import { RemoteLogMetadataCache } from '../../../metadata/remote-log-metadata/remote-log-metadata-cache.js';
import { RemoteLogMetadataManager } from '../../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import { serializeRemoteLogMetadata } from '../../../metadata/remote-log-metadata/serde.js';
import { TP0, segment, update } from './fixtures.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function usedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * A metadata topic held as one packed buffer per partition, so that the test's
 * own storage (400k record objects otherwise) does not weigh on the collector
 * while replay is timed. Records are materialised as views when read.
 */
class PackedLog implements MetadataTopicLog {
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
function buildLog(live: number, expired: number, partitions: number): PackedLog {
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

/**
 * The CPU time (this process's, user + system) of one replay of `log`: unlike
 * wall time it does not grow with load from other processes on the machine.
 */
async function timeReplay(log: MetadataTopicLog): Promise<{ ms: number; manager: RemoteLogMetadataManager }> {
  const c0 = process.cpuUsage();
  const manager = new RemoteLogMetadataManager({ log });
  await manager.start();
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1000, manager };
}

describe('remote log metadata at scale', () => {
  it('holds 100k remote segments of one partition compactly', () => {
    const n = 100_000;
    const before = usedBytes();
    const cache = new RemoteLogMetadataCache(TP0);
    let epoch = 0;
    for (let id = 0; id < n; id++) {
      if (id % 1000 === 0) epoch++;
      const start = id * 1000;
      cache.addCopyInProgressSegment(segment({ id, start, end: start + 999, epochs: [[epoch, start]], size: 1_048_576 }));
      cache.updateRemoteLogSegmentMetadata(update(id, 'COPY_SEGMENT_FINISHED'));
    }
    const after = usedBytes();
    const perSegment = (after - before) / n;
    console.log(
      `remote log metadata index: ${n} segments, ${(perSegment).toFixed(0)} bytes/segment retained ` +
        `(typed arrays ${(cache.indexByteLength / n).toFixed(0)} bytes/segment incl. growth slack)`,
    );
    assert.equal(cache.segmentCount, n);
    assert.equal(cache.remoteLogSizeBytes(), n * 1_048_576);
    assert.ok(perSegment < 300, `${perSegment} bytes per segment`);
  });

  it('replays 400k records (100k segments) in time linear in the record count', async () => {
    // One log at a time, so that the other's 400k buffers do not slow the collector.
    let small: PackedLog | undefined = buildLog(25_000, 12_500, 50);
    const smallSize = small.size;
    await timeReplay(small); // warm up the JIT
    // The faster of two runs: a collection that happens to fall in one run does not decide the verdict.
    const s1 = await timeReplay(small);
    const s2 = await timeReplay(small);
    const s = s1.ms <= s2.ms ? s1 : s2;
    small = undefined;
    const big = buildLog(100_000, 50_000, 50);
    assert.equal(big.size, 400_000);
    const b1 = await timeReplay(big);
    const b2 = await timeReplay(big);
    const b = b1.ms <= b2.ms ? b1 : b2;
    const perRecordSmall = (s.ms * 1000) / smallSize;
    const perRecordBig = (b.ms * 1000) / big.size;
    console.log(
      `remote log metadata replay (CPU time): ${smallSize} records in ${s.ms.toFixed(0)} ms (${perRecordSmall.toFixed(2)} us/record), ` +
        `${big.size} records in ${b.ms.toFixed(0)} ms (${perRecordBig.toFixed(2)} us/record)`,
    );
    assert.equal(b.manager.segmentCount(TP0), 100_000);
    assert.equal(b.manager.stats.recordsApplied, 400_000);
    assert.equal(b.manager.earliestRemoteOffset(TP0), 50_000_000n);
    assert.equal(b.manager.highestRemoteOffset(TP0), 149_999_999n);
    assert.equal(b.manager.remoteLogSegmentMetadata(TP0, 150, 149_999_000n)?.startOffset, 149_999_000n);
    // Linear: 4x the records may not cost much more than 4x the time (loose, for noisy machines).
    assert.ok(perRecordBig < perRecordSmall * 2.5, `${perRecordBig} vs ${perRecordSmall} us/record`);
  });
});
