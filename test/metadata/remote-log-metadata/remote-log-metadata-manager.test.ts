import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import {
  IllegalStateTransitionError,
  InvalidRemoteLogMetadataError,
  RemoteLogMetadataNotReadyError,
  RemoteResourceNotFoundError,
} from '../../../metadata/remote-log-metadata/errors.js';
import {
  MemoryMetadataTopicLog,
  type MetadataTopicLog,
  type MetadataTopicRecord,
} from '../../../metadata/remote-log-metadata/metadata-topic-log.js';
import {
  RemoteLogMetadataManager,
  type SkippedRecord,
} from '../../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import { metadataPartition } from '../../../metadata/remote-log-metadata/metadata-partitioner.js';
import { deserializeRemoteLogMetadata, serializeRemoteLogMetadata } from '../../../metadata/remote-log-metadata/serde.js';
import type { RemotePartitionDeleteMetadata, TopicIdPartition } from '../../../metadata/remote-log-metadata/types.js';
import { TOPIC_ID, TP0, TP1, segment, segmentId, update } from './fixtures.js';

async function started(log: MetadataTopicLog, skipped?: SkippedRecord[]): Promise<RemoteLogMetadataManager> {
  const manager = new RemoteLogMetadataManager({ log, ...(skipped ? { onSkippedRecord: (s) => skipped.push(s) } : {}) });
  await manager.start();
  return manager;
}

function partitionDelete(tp: TopicIdPartition, state: RemotePartitionDeleteMetadata['state']): RemotePartitionDeleteMetadata {
  return { topicIdPartition: tp, state, brokerId: 1, eventTimestampMs: 1_700_000_300_000 };
}

/** Everything observable about a partition, for comparing two managers. */
function snapshot(m: RemoteLogMetadataManager, tp: TopicIdPartition, epochs: number[]): unknown {
  return {
    all: m.listRemoteLogSegments(tp),
    byEpoch: epochs.map((e) => m.listRemoteLogSegments(tp, e)),
    highestForEpoch: epochs.map((e) => m.highestOffsetForEpoch(tp, e)),
    highest: m.highestRemoteOffset(tp),
    earliest: m.earliestRemoteOffset(tp),
    bytes: m.remoteLogSizeBytes(tp),
    deleteState: m.remotePartitionDeleteState(tp),
  };
}

/** A log whose reads of chosen partitions wait until released. */
class GatedLog implements MetadataTopicLog {
  private readonly gates = new Map<number, { promise: Promise<void>; release: () => void }>();
  constructor(readonly inner: MemoryMetadataTopicLog) {}
  get partitionCount(): number {
    return this.inner.partitionCount;
  }
  gate(partition: number): void {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.gates.set(partition, { promise, release });
  }
  release(partition: number): void {
    this.gates.get(partition)?.release();
    this.gates.delete(partition);
  }
  append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint> {
    return this.inner.append(partition, key, value);
  }
  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    const gate = this.gates.get(partition);
    if (gate) await gate.promise;
    yield* this.inner.read(partition, fromOffset);
  }
}

/** Appends, then fails: the caller cannot tell whether the record was written. */
class AmbiguousLog extends MemoryMetadataTopicLog {
  ambiguousNext = false;
  override async append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint> {
    const offset = await super.append(partition, key, value);
    if (this.ambiguousNext) {
      this.ambiguousNext = false;
      throw new Error('connection reset after write');
    }
    return offset;
  }
}

/** A log whose next read of one partition fails after yielding its first record. */
class FlakyReadLog extends MemoryMetadataTopicLog {
  failPartition: number | undefined;
  override async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    const fail = partition === this.failPartition;
    let n = 0;
    for await (const record of super.read(partition, fromOffset)) {
      if (fail && n++ === 1) {
        this.failPartition = undefined;
        throw new Error('I/O error');
      }
      yield record;
    }
  }
}

describe('RemoteLogMetadataManager', () => {
  it('places every partition where the partitioner does, asked once or many times', async () => {
    const m = await started(new MemoryMetadataTopicLog(50));
    for (let round = 0; round < 2; round++) {
      for (let partition = 0; partition < 200; partition++) {
        const tp = { topicId: TOPIC_ID, topic: 't', partition };
        assert.equal(m.metadataPartition(tp), metadataPartition(tp, 50), `partition ${partition}, round ${round}`);
      }
    }
  });

  it('writes each event as a Kafka record (null key) to the partition Kafka would choose, then serves it', async () => {
    const log = new MemoryMetadataTopicLog(50);
    const m = await started(log);
    const p = m.metadataPartition(TP0);
    await m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 99, size: 500 }));
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 10n), undefined, 'not served while copying');
    await m.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED'));
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 10n)?.remoteLogSegmentId.id, segmentId(1));
    assert.equal(m.highestRemoteOffset(TP0), 99n);
    assert.equal(m.highestOffsetForEpoch(TP0, 0), 99n);
    assert.equal(m.remoteLogSizeBytes(TP0), 500);
    assert.equal(m.earliestRemoteOffset(TP0), 0n);
    assert.equal(m.segmentCount(TP0), 1);
    const records = log.records(p);
    assert.equal(records.length, 2);
    assert.equal(log.size, 2, 'nothing written elsewhere');
    assert.deepEqual(records.map((r) => r.key), [null, null]);
    assert.deepEqual(deserializeRemoteLogMetadata((records[0] as MetadataTopicRecord).value), {
      type: 'segment',
      metadata: segment({ id: 1, start: 0, end: 99, size: 500 }),
    });
    assert.deepEqual(deserializeRemoteLogMetadata((records[1] as MetadataTopicRecord).value), {
      type: 'segmentUpdate',
      update: update(1, 'COPY_SEGMENT_FINISHED'),
    });
    // A partition with no remote data answers empty.
    assert.deepEqual(m.listRemoteLogSegments(TP1), []);
    assert.equal(m.highestRemoteOffset(TP1), undefined);
    assert.equal(m.remoteLogSizeBytes(TP1), 0);
  });

  it('rejects illegal events without writing anything', async () => {
    const log = new MemoryMetadataTopicLog(3);
    const m = await started(log);
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED')), RemoteResourceNotFoundError);
    await m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 }));
    await assert.rejects(m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 })), IllegalStateTransitionError);
    await assert.rejects(
      m.addRemoteLogSegmentMetadata({ ...segment({ id: 2, start: 0, end: 9 }), state: 'COPY_SEGMENT_FINISHED' }),
      IllegalStateTransitionError,
    );
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_FINISHED')), IllegalStateTransitionError);
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_STARTED')), IllegalStateTransitionError);
    await assert.rejects(m.addRemoteLogSegmentMetadata(segment({ id: 3, start: 9, end: 0 })), InvalidRemoteLogMetadataError);
    await assert.rejects(m.putRemotePartitionDeleteMetadata(partitionDelete(TP0, 'DELETE_PARTITION_FINISHED')), IllegalStateTransitionError);
    assert.equal(log.size, 1);
    // The failed-copy path is legal: STARTED -> DELETE_SEGMENT_STARTED -> DELETE_SEGMENT_FINISHED.
    await m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_STARTED'));
    await m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_FINISHED'));
    assert.equal(m.segmentCount(TP0), 0);
    assert.equal(log.size, 3);
  });

  it('answers REPLICA_NOT_AVAILABLE (retriable) until the partition is replayed', async () => {
    const memory = new MemoryMetadataTopicLog(50);
    const writer = await started(memory);
    await writer.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 }));
    await writer.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED'));
    // TP1 must live in another metadata partition for this test to mean anything.
    let other: TopicIdPartition = TP1;
    for (let p = 1; writer.metadataPartition(other) === writer.metadataPartition(TP0); p++) other = { ...TP0, partition: p };
    const log = new GatedLog(memory);
    log.gate(writer.metadataPartition(TP0));
    const m = new RemoteLogMetadataManager({ log });
    const notReady = (e: unknown): boolean =>
      e instanceof RemoteLogMetadataNotReadyError && e.code === ErrorCode.REPLICA_NOT_AVAILABLE && e.retriable;
    assert.throws(() => m.listRemoteLogSegments(TP0), notReady, 'before start');
    const start = m.start();
    const otherReady = m.whenReady(other);
    await otherReady;
    assert.equal(m.isReady(other), true);
    assert.deepEqual(m.listRemoteLogSegments(other), []);
    assert.equal(m.isReady(TP0), false);
    assert.throws(() => m.remoteLogSegmentMetadata(TP0, 0, 5n), notReady);
    assert.throws(() => m.highestOffsetForEpoch(TP0, 0), notReady);
    assert.throws(() => m.highestRemoteOffset(TP0), notReady);
    assert.throws(() => m.remoteLogSizeBytes(TP0), notReady);
    assert.throws(() => m.earliestRemoteOffset(TP0), notReady);
    assert.throws(() => m.listRemoteLogSegments(TP0, 0), notReady);
    await assert.rejects(m.addRemoteLogSegmentMetadata(segment({ id: 2, start: 10, end: 19 })), notReady);
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_STARTED')), notReady);
    log.release(writer.metadataPartition(TP0));
    await start;
    assert.equal(m.isReady(TP0), true);
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 5n)?.remoteLogSegmentId.id, segmentId(1));
  });

  it('reports a failed replay as KAFKA_STORAGE_ERROR, keeps that partition unready, and retries on start()', async () => {
    const log = new FlakyReadLog(3);
    const writer = await started(log);
    for (let id = 0; id < 3; id++) {
      await writer.addRemoteLogSegmentMetadata(segment({ id, start: id * 10, end: id * 10 + 9 }));
      await writer.updateRemoteLogSegmentMetadata(update(id, 'COPY_SEGMENT_FINISHED'));
    }
    log.failPartition = writer.metadataPartition(TP0);
    const m = new RemoteLogMetadataManager({ log });
    await assert.rejects(
      m.start(),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.KAFKA_STORAGE_ERROR && (e.cause as Error).message === 'I/O error',
    );
    assert.equal(m.isReady(TP0), false);
    assert.throws(() => m.listRemoteLogSegments(TP0), RemoteLogMetadataNotReadyError);
    await m.start();
    assert.equal(m.isReady(TP0), true);
    assert.deepEqual(m.listRemoteLogSegments(TP0), writer.listRemoteLogSegments(TP0));
    assert.equal(m.stats.recordsApplied, 6);
  });

  it('replays the topic into exactly the live state', async () => {
    const log = new MemoryMetadataTopicLog(4);
    const live = await started(log);
    const tps: TopicIdPartition[] = [0, 1, 2, 3, 4, 5].map((partition) => ({ topicId: TOPIC_ID, topic: 'orders', partition }));
    // A deterministic pseudo-random history: copies (some failing), leader epoch changes, expirations.
    let seed = 12345;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let nextId = 0;
    for (const tp of tps) {
      let offset = 0;
      let epoch = 0;
      const finishedIds: number[] = [];
      for (let i = 0; i < 60; i++) {
        const id = nextId++;
        const length = 10 + random(50);
        const epochs: Array<[number, number]> = [[epoch, offset]];
        if (random(5) === 0) epochs.push([++epoch, offset + random(length)]);
        await live.addRemoteLogSegmentMetadata(segment({ id, tp, start: offset, end: offset + length - 1, epochs, size: length * 100 }));
        if (random(6) === 0) {
          await live.updateRemoteLogSegmentMetadata(update(id, 'DELETE_SEGMENT_STARTED', tp));
          if (random(2) === 0) await live.updateRemoteLogSegmentMetadata(update(id, 'DELETE_SEGMENT_FINISHED', tp));
          continue;
        }
        await live.updateRemoteLogSegmentMetadata({ ...update(id, 'COPY_SEGMENT_FINISHED', tp), customMetadata: Buffer.from([id & 0xff]) });
        finishedIds.push(id);
        offset += length;
        if (random(4) === 0 && finishedIds.length > 3) {
          const oldest = finishedIds.shift() as number;
          await live.updateRemoteLogSegmentMetadata(update(oldest, 'DELETE_SEGMENT_STARTED', tp));
          await live.updateRemoteLogSegmentMetadata(update(oldest, 'DELETE_SEGMENT_FINISHED', tp));
        }
      }
    }
    await live.putRemotePartitionDeleteMetadata(partitionDelete(tps[5] as TopicIdPartition, 'DELETE_PARTITION_STARTED'));
    await live.putRemotePartitionDeleteMetadata(partitionDelete(tps[4] as TopicIdPartition, 'DELETE_PARTITION_MARKED'));
    await live.putRemotePartitionDeleteMetadata(partitionDelete(tps[4] as TopicIdPartition, 'DELETE_PARTITION_STARTED'));
    await live.putRemotePartitionDeleteMetadata(partitionDelete(tps[4] as TopicIdPartition, 'DELETE_PARTITION_FINISHED'));
    const skipped: SkippedRecord[] = [];
    const replayed = await started(log, skipped);
    assert.deepEqual(skipped, []);
    assert.equal(replayed.stats.recordsApplied, log.size);
    const epochs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    for (const tp of tps) assert.deepEqual(snapshot(replayed, tp, epochs), snapshot(live, tp, epochs), `partition ${tp.partition}`);
    assert.deepEqual(replayed.listRemoteLogSegments(tps[4] as TopicIdPartition), []);
    assert.equal(replayed.remotePartitionDeleteState(tps[4] as TopicIdPartition), 'DELETE_PARTITION_FINISHED');
    assert.ok((live.listRemoteLogSegments(tps[0] as TopicIdPartition).length) > 20);
  });

  it('tolerates on replay what crashes and retries leave in the topic', async () => {
    const log = new MemoryMetadataTopicLog(1);
    const value = (e: Parameters<typeof serializeRemoteLogMetadata>[0]): Buffer => serializeRemoteLogMetadata(e);
    await log.append(0, null, value({ type: 'segment', metadata: segment({ id: 1, start: 0, end: 9 }) }));
    await log.append(0, null, value({ type: 'segmentUpdate', update: update(1, 'COPY_SEGMENT_FINISHED') }));
    await log.append(0, null, value({ type: 'segmentUpdate', update: update(1, 'COPY_SEGMENT_FINISHED') })); // duplicate
    await log.append(0, null, value({ type: 'segmentUpdate', update: update(9, 'DELETE_SEGMENT_FINISHED') })); // unknown segment
    await log.append(0, null, Buffer.from([1, 42, 0])); // not a record Kafka knows
    await log.append(0, null, value({ type: 'segment', metadata: segment({ id: 2, start: 0, end: 9, tp: TP1 }) }));
    await log.append(0, null, value({ type: 'partitionDelete', delete: partitionDelete(TP1, 'DELETE_PARTITION_STARTED') }));
    await log.append(0, null, value({ type: 'partitionDelete', delete: partitionDelete(TP1, 'DELETE_PARTITION_FINISHED') }));
    await log.append(0, null, value({ type: 'segmentUpdate', update: update(2, 'DELETE_SEGMENT_STARTED', TP1) })); // after deletion
    await log.append(0, null, value({ type: 'segment', metadata: segment({ id: 3, start: 10, end: 19, tp: TP1 }) })); // after deletion
    const skipped: SkippedRecord[] = [];
    const m = await started(log, skipped);
    assert.deepEqual(skipped.map((s) => s.offset), [2n, 3n, 4n, 8n, 9n]);
    assert.match(skipped[0]?.reason ?? '', /COPY_SEGMENT_FINISHED -> COPY_SEGMENT_FINISHED/);
    assert.match(skipped[2]?.reason ?? '', /undecodable/);
    assert.equal(m.stats.recordsSkipped, 5);
    assert.equal(m.stats.recordsApplied, 5);
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 5n)?.state, 'COPY_SEGMENT_FINISHED');
    assert.deepEqual(m.listRemoteLogSegments(TP1), []);
    await assert.rejects(m.addRemoteLogSegmentMetadata(segment({ id: 4, start: 0, end: 9, tp: TP1 })), InvalidRemoteLogMetadataError);
  });

  it('changes nothing when an append fails, and catches up after an ambiguous one', async () => {
    const log = new AmbiguousLog(2);
    const m = await started(log);
    log.failNextAppend = new Error('disk full');
    await assert.rejects(
      m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 })),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.KAFKA_STORAGE_ERROR && (e.cause as Error).message === 'disk full',
    );
    assert.equal(m.segmentCount(TP0), 0);
    await m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 }));
    log.ambiguousNext = true;
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED')), KafkaError);
    // The record did land: the next write first applies it, so a retry is refused as a duplicate...
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED')), IllegalStateTransitionError);
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 5n)?.state, 'COPY_SEGMENT_FINISHED');
    // ...and the log and the index agree.
    const replayed = await started(log);
    assert.deepEqual(replayed.listRemoteLogSegments(TP0), m.listRemoteLogSegments(TP0));
  });

  it('applies records other brokers appended, in offset order', async () => {
    const log = new MemoryMetadataTopicLog(1);
    const m = await started(log);
    await m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 }));
    // Another broker (replicated into our log) finishes the copy and starts one of its own.
    await log.append(0, null, serializeRemoteLogMetadata({ type: 'segmentUpdate', update: update(1, 'COPY_SEGMENT_FINISHED') }));
    await log.append(0, null, serializeRemoteLogMetadata({ type: 'segment', metadata: segment({ id: 2, start: 10, end: 19 }) }));
    // Our next write is applied after theirs.
    await m.updateRemoteLogSegmentMetadata(update(2, 'COPY_SEGMENT_FINISHED'));
    assert.equal(m.highestRemoteOffset(TP0), 19n);
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 5n)?.remoteLogSegmentId.id, segmentId(1));
    await log.append(0, null, serializeRemoteLogMetadata({ type: 'segmentUpdate', update: update(1, 'DELETE_SEGMENT_STARTED') }));
    await m.onPartitionLeadershipChanges([], [TP0]);
    assert.equal(m.remoteLogSegmentMetadata(TP0, 0, 5n), undefined);
    assert.equal(m.stats.recordsApplied, 5);
  });

  it('onPartitionLeadershipChanges starts the replay and resolves once the partitions are ready', async () => {
    const log = new MemoryMetadataTopicLog(5);
    const writer = await started(log);
    await writer.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 }));
    const m = new RemoteLogMetadataManager({ log });
    await m.onPartitionLeadershipChanges([TP0], [TP1]);
    assert.equal(m.isReady(TP0), true);
    assert.equal(m.isReady(TP1), true);
    assert.equal(m.listRemoteLogSegments(TP0).length, 1);
    assert.deepEqual(m.listRemoteLogSegments(TP1), []);
  });

  it('drops a partition at DELETE_PARTITION_FINISHED and refuses new segments while deleting', async () => {
    const log = new MemoryMetadataTopicLog(3);
    const m = await started(log);
    await m.addRemoteLogSegmentMetadata(segment({ id: 1, start: 0, end: 9 }));
    await m.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED'));
    await m.putRemotePartitionDeleteMetadata(partitionDelete(TP0, 'DELETE_PARTITION_STARTED'));
    await assert.rejects(m.addRemoteLogSegmentMetadata(segment({ id: 2, start: 10, end: 19 })), InvalidRemoteLogMetadataError);
    await m.putRemotePartitionDeleteMetadata(partitionDelete(TP0, 'DELETE_PARTITION_STARTED')); // a retried deletion
    await m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_STARTED'));
    await m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_FINISHED'));
    await m.putRemotePartitionDeleteMetadata(partitionDelete(TP0, 'DELETE_PARTITION_FINISHED'));
    assert.deepEqual(m.listRemoteLogSegments(TP0), []);
    assert.equal(m.remotePartitionDeleteState(TP0), 'DELETE_PARTITION_FINISHED');
    await assert.rejects(m.putRemotePartitionDeleteMetadata(partitionDelete(TP0, 'DELETE_PARTITION_STARTED')), IllegalStateTransitionError);
    await assert.rejects(m.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_FINISHED')), RemoteResourceNotFoundError);
  });
});
