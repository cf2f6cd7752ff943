// The manager's lifecycle: scheduled runs on the injected clock, failures that
// never escape, readiness of the metadata, the local-deletion veto.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocalPartitionView, type RemoteTier } from '../../broker/partition-view.js';
import type { PartitionLog } from '../../broker/log/partition-log.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import type { PartitionLifecycle } from '../../broker/topic-service.js';
import {
  MemoryMetadataTopicLog,
  REMOTE_LOG_METADATA_TOPIC,
  type MetadataTopicLog,
  type MetadataTopicRecord,
} from '../../metadata/remote-log-metadata/metadata-topic-log.js';
import { RemoteLogMetadataManager } from '../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import { MemoryRemoteStorage } from '../../remote-log/memory/memory-remote-storage.js';
import { RemoteLogManager, remoteLogManagerConfig } from '../../remote-log/remote-log-manager.js';
import { finishedSegments, makeEnv, produce, rlmConfig, tpOf } from './helpers.js';

/** A metadata topic whose reads wait until open(): the replay cannot finish before. */
class GatedMetadataLog implements MetadataTopicLog {
  readonly partitionCount = 3;
  private readonly inner = new MemoryMetadataTopicLog(3);
  private release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  open(): void {
    this.release();
  }

  append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint> {
    return this.inner.append(partition, key, value);
  }

  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    await this.gate;
    yield* this.inner.read(partition, fromOffset);
  }
}

/**
 * A metadata topic read as a consumer reads it in a cluster: every read is a
 * Fetch of the metadata partition, whose answer carries the partition's log
 * start offset from its view (the broker's RemoteTier attached, as the Fetch
 * handler has it).
 */
class FetchedMetadataLog implements MetadataTopicLog {
  readonly partitionCount = 1;
  private readonly inner = new MemoryMetadataTopicLog(1);
  view: LocalPartitionView | undefined;

  append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint> {
    return this.inner.append(partition, key, value);
  }

  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    assert.ok(this.view !== undefined && this.view.logStartOffset <= fromOffset);
    yield* this.inner.read(partition, fromOffset);
  }
}

describe('RemoteLogManager', () => {
  it('runs every remote.log.manager.task.interval.ms on the injected scheduler, through store failures, until stopped', async () => {
    const env = await makeEnv({ config: { taskIntervalMs: 1000 } });
    try {
      const log = await env.openLog();
      await produce(log, 20);
      await env.rlm.start();
      env.clock.advance(999);
      await env.rlm.settled();
      assert.equal(finishedSegments(env.metadata, tpOf(log)).length, 0, 'not before the interval');
      env.clock.advance(1);
      await env.rlm.settled();
      assert.equal(finishedSegments(env.metadata, tpOf(log)).length, log.closedSegments().length);

      env.faulty.set('fail');
      await produce(log, 20);
      for (let i = 0; i < 3; i++) {
        env.clock.advance(1000);
        await env.rlm.settled();
      }
      assert.ok(env.rlm.lastError(log) !== undefined);
      assert.equal(env.scheduler.pending, 1, 'still scheduled after failures');
      env.faulty.set('ok');
      env.clock.advance(1000);
      await env.rlm.settled();
      assert.equal(env.rlm.highestRemoteOffset(log), log.activeSegment().baseOffset - 1n, 'caught up');
      const stats = env.rlm.partitionStats(log)!;
      assert.equal(stats.copyLagSegments, 0);
      assert.ok(stats.copyErrors >= 1 && stats.copyRequests > stats.copyErrors);

      await env.rlm.stop();
      assert.equal(env.scheduler.pending, 0);
    } finally {
      await env.cleanup();
    }
  });

  it('answers with a retriable REPLICA_NOT_AVAILABLE while the metadata replay is unfinished, and vetoes local deletion', async () => {
    const env = await makeEnv();
    try {
      const log = await env.openLog();
      await produce(log, 20);
      // A second manager whose metadata topic cannot be read yet.
      const gated = new GatedMetadataLog();
      const metadata = new RemoteLogMetadataManager({ log: gated });
      const rlm = RemoteLogManager.create({ storage: new MemoryRemoteStorage(), metadata, clock: env.clock, scheduler: env.scheduler, config: rlmConfig() });
      rlm.onPartitionAdded(log);
      const notReady = (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.REPLICA_NOT_AVAILABLE;
      await assert.rejects(rlm.read(log, 0n, 100, true), notReady);
      assert.throws(() => rlm.highestRemoteOffset(log), notReady);
      assert.equal(rlm.canDeleteLocalSegment(log, log.closedSegments()[0]!), false);
      await rlm.runPartition(log); // skipped, not failed
      assert.equal(rlm.lastError(log), undefined);
      gated.open();
      await metadata.start();
      assert.equal(rlm.highestRemoteOffset(log), -1n);
      await rlm.stop();
    } finally {
      await env.cleanup();
    }
  });

  it('serves the metadata topic and untiered partitions without waiting for the metadata replay (no Fetch of __remote_log_metadata waits for itself)', async () => {
    const env = await makeEnv();
    try {
      const metadataPartition = await env.openLog(REMOTE_LOG_METADATA_TOPIC, { remoteStorageEnable: false });
      const tiered = await env.openLog('tiered-behind-fetch');
      await produce(tiered, 20);
      // Every partition maps to metadata partition 0: replaying it fetches __remote_log_metadata-0 through this very manager.
      const fetched = new FetchedMetadataLog();
      const metadata = new RemoteLogMetadataManager({ log: fetched });
      const rlm = RemoteLogManager.create({ storage: new MemoryRemoteStorage(), metadata, clock: env.clock, scheduler: env.scheduler, config: rlmConfig(), replayAllOnStart: false });
      fetched.view = new LocalPartitionView(metadataPartition as PartitionLog, rlm);
      rlm.onPartitionAdded(metadataPartition);
      rlm.onPartitionAdded(tiered);
      assert.equal(rlm.logStartOffset(metadataPartition), null);
      assert.equal(rlm.highestRemoteOffset(metadataPartition), -1n);
      await metadata.whenReady(tpOf(tiered));
      await rlm.runPartition(tiered);
      assert.equal(rlm.lastError(tiered), undefined);
      assert.equal(finishedSegments(metadata, tpOf(tiered)).length, tiered.closedSegments().length, 'copied once the metadata was read');
      assert.ok(tiered.closedSegments().length > 0);

      // An untiered partition answers from its local log while its metadata cannot be read.
      const plain = await env.openLog('plain-untiered', { remoteStorageEnable: false });
      await produce(plain, 20);
      const gated = new GatedMetadataLog();
      const waiting = RemoteLogManager.create({ storage: new MemoryRemoteStorage(), metadata: new RemoteLogMetadataManager({ log: gated }), clock: env.clock, scheduler: env.scheduler, config: rlmConfig() });
      waiting.onPartitionAdded(plain);
      const view = new LocalPartitionView(plain as PartitionLog, waiting);
      assert.equal(view.logStartOffset, plain.logStartOffset);
      assert.equal(view.highestRemoteOffset(), -1n);
      gated.open();
      await rlm.stop();
      await waiting.stop();
    } finally {
      await env.cleanup();
    }
  });

  it('does not veto local deletion on untiered partitions or with remote.log.copy.disable', async () => {
    const env = await makeEnv();
    try {
      const plain = await env.openLog('plain', { remoteStorageEnable: false });
      const frozen = await env.openLog('frozen', { remoteLogCopyDisable: true });
      const tiered = await env.openLog('tiered');
      for (const l of [plain, frozen, tiered]) await produce(l, 20);
      await env.rlm.runOnce();
      assert.equal(env.rlm.canDeleteLocalSegment(plain, plain.closedSegments()[0]!), true);
      assert.equal(env.rlm.canDeleteLocalSegment(frozen, frozen.closedSegments()[0]!), true);
      assert.equal(finishedSegments(env.metadata, tpOf(plain)).length, 0, 'untiered: nothing copied');
      assert.equal(finishedSegments(env.metadata, tpOf(frozen)).length, 0, 'copy disabled: nothing copied');
      assert.equal(env.rlm.canDeleteLocalSegment(tiered, tiered.closedSegments()[0]!), true);
      assert.equal(env.rlm.canDeleteLocalSegment(tiered, tiered.activeSegment()), false);
    } finally {
      await env.cleanup();
    }
  });

  it('is the remote tier and partition lifecycle the broker attaches (type-level)', async () => {
    const env = await makeEnv();
    try {
      const tier: RemoteTier = env.rlm;
      const lifecycle: PartitionLifecycle = env.rlm;
      const log = await env.openLog('gone');
      await produce(log, 20);
      await env.rlm.runPartition(log);
      assert.equal(tier.highestRemoteOffset(log), log.activeSegment().baseOffset - 1n);
      await lifecycle.onTopicDeleted({ name: 'gone', topicId: log.topicId, partitionCount: 1, configs: {} }, [log]);
      assert.deepEqual(await env.storage.listSegments(), []);
    } finally {
      await env.cleanup();
    }
  });

  it('a deleted topic\'s partition this broker does not delete the remote data of (another replica led it) only stops tiering: objects and metadata stay for the one that does', async () => {
    const env = await makeEnv();
    try {
      const log = await env.openLog('gone');
      await produce(log, 20);
      await env.rlm.runPartition(log);
      const objects = await env.storage.listSegments();
      const finished = finishedSegments(env.metadata, tpOf(log)).length;
      assert.ok(objects.length > 0 && finished > 0);
      await env.rlm.onTopicDeleted({ name: 'gone', topicId: log.topicId, partitionCount: 1 }, [log], () => false);
      assert.deepEqual(await env.storage.listSegments(), objects, 'nothing deleted by a replica that did not lead');
      assert.equal(finishedSegments(env.metadata, tpOf(log)).length, finished, 'no metadata written by it');
      assert.equal(env.rlm.partitionStats(log), undefined, 'it no longer tiers the partition');
      await env.rlm.onTopicDeleted({ name: 'gone', topicId: log.topicId, partitionCount: 1 }, [], () => true);
      assert.deepEqual(await env.storage.listSegments(), [], 'the leader deletes it all');
    } finally {
      await env.cleanup();
    }
  });

  it('builds its settings from broker settings and rsm.config.*', () => {
    const c = remoteLogManagerConfig(
      {
        remoteLogManagerTaskIntervalMs: 30_000,
        remoteLogManagerCopyMaxBytesPerSecond: 9223372036854775807,
        remoteLogManagerFetchMaxBytesPerSecond: 1_000_000,
        remoteFetchMaxWaitMs: 500,
        remoteLogIndexFileCacheTotalSizeBytes: 1 << 30,
      },
      { chunkSizeBytes: 1 << 20, chunkCacheSizeBytes: 1 << 28, chunkCachePrefetchChunks: 2 },
    );
    assert.deepEqual(c, {
      taskIntervalMs: 30_000,
      copyBytesPerSec: 9223372036854775807,
      fetchBytesPerSec: 1_000_000,
      fetchMaxWaitMs: 500,
      indexCacheBytes: 1 << 30,
      chunkCacheBytes: 1 << 28,
      chunkSize: 1 << 20,
      readAheadChunks: 2,
    });
  });
});
