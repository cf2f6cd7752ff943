// KIP-1023 (follower.fetch.last.tiered.offset.enable): the decision, as Kafka's
// ReplicaFetcherThread.shouldFetchFromLastTieredOffset, the choice of the start
// offset, and a ReplicaFetcher over a fake leader (a real PartitionLog answering
// Fetch and ListOffsets -1/-6) and a fake remote tier: an empty follower with
// the config on starts at the leader's earliest pending upload offset and copies
// only what is above it; off, it copies everything.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { BrokerConfig } from '../../../broker/config.js';
import { DynamicBrokerConfig } from '../../../broker/dynamic-broker-config.js';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import type { FetchResponse } from '../../../broker/protocol/messages/fetch.js';
import { lastTieredStart, shouldFetchFromLastTieredOffset, type LastTieredOffsetState } from '../../../broker/replica/last-tiered-offset.js';
import { ReplicaFetcher, type FetchConnection, type FetcherEvent, type FollowedPartition } from '../../../broker/replica/replica-fetcher.js';
import { replicaManagerConfig } from '../../../broker/replica/replication.js';
import type { ReplicaRemoteTier } from '../../../broker/replica/tier-state.js';
import { logConfig, type LogConfig } from '../../../metadata/log-config.js';
import { batch } from '../log/helpers.js';

describe('shouldFetchFromLastTieredOffset', () => {
  const base: LastTieredOffsetState = { enabled: true, remoteStorageEnabled: true, compacted: false, replicaEndOffset: 0n, leaderEndOffset: 500n };

  it('holds for an empty follower of a tiered, non-compacted topic whose leader has records, with the config on', () => {
    assert.equal(shouldFetchFromLastTieredOffset(base), true);
  });

  it('does not hold when any condition fails', () => {
    assert.equal(shouldFetchFromLastTieredOffset({ ...base, enabled: false }), false, 'config off (the default)');
    assert.equal(shouldFetchFromLastTieredOffset({ ...base, remoteStorageEnabled: false }), false, 'topic not tiered');
    assert.equal(shouldFetchFromLastTieredOffset({ ...base, compacted: true }), false, 'compacted');
    assert.equal(shouldFetchFromLastTieredOffset({ ...base, replicaEndOffset: 1n }), false, 'follower already has records');
    assert.equal(shouldFetchFromLastTieredOffset({ ...base, leaderEndOffset: 0n }), false, 'leader is empty');
  });
});

describe('lastTieredStart', () => {
  const at = (offset: bigint, leaderEpoch = 3): { offset: bigint; leaderEpoch: number } => ({ offset, leaderEpoch });

  it('takes the pending upload offset when past the follower\'s end', () => {
    assert.deepEqual(lastTieredStart(0n, at(300n), null), at(300n));
    assert.deepEqual(lastTieredStart(0n, at(300n), at(150n)), at(300n));
    assert.deepEqual(lastTieredStart(0n, at(150n), at(150n)), at(150n));
  });

  it('falls back to the leader\'s local start when the pending offset is unknown, else fetches as usual', () => {
    assert.deepEqual(lastTieredStart(0n, at(-1n, -1), at(150n)), at(150n), 'leader does not know its uploaded segments yet');
    assert.equal(lastTieredStart(0n, at(-1n, -1), null), null);
    assert.equal(lastTieredStart(0n, at(0n), null), null, 'nothing uploaded and the local log is whole: from 0');
    assert.equal(lastTieredStart(0n, at(0n), at(0n)), null);
  });
});

const TIERED: Partial<LogConfig> = { segmentBytes: 4096, remoteStorageEnable: true, retentionMs: -1, retentionBytes: -1 };

describe('ReplicaFetcher with follower.fetch.last.tiered.offset.enable', () => {
  let dir: string;
  let clock: ManualClock;
  let leader: PartitionLog;
  const topicId = 'AAAAAAAAAAAAAAAAAAAAAQ';

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kip1023-'));
    clock = new ManualClock(1_700_000_000_000);
    leader = await PartitionLog.open({ dir: path.join(dir, 'leader', 't-0'), topic: 't', partition: 0, topicId, config: logConfig(TIERED), clock });
    await leader.assignEpochStartOffset(3);
    for (let i = 0; i < 40; i++) await leader.append(batch({ count: 5, valueSize: 80, tag: `b${i}` }), { leaderEpoch: 3, isFromClient: true });
    leader.setHighWatermark(leader.logEndOffset);
  });

  afterEach(async () => {
    await leader.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A leader over `leader`: Fetch from its log (OFFSET_MOVED_TO_TIERED_STORAGE below `localStart`),
   * ListOffsets -1 (its HW), -4 (`localStart`) and -6 (`pending` in turn, the last repeated; -1: unknown).
   */
  function fakeLeader(pendings: readonly bigint[], localStart: bigint, asked: bigint[]): FetchConnection {
    let closed: (() => void) | null = null;
    let nextPending = 0;
    const listOffset = async (_t: string, _p: number, _e: number, timestamp: bigint): Promise<{ offset: bigint; leaderEpoch: number }> => {
      asked.push(timestamp);
      if (timestamp === -1n) return { offset: leader.highWatermark, leaderEpoch: 3 };
      if (timestamp === -6n) {
        const pending = pendings[Math.min(nextPending++, pendings.length - 1)]!;
        return pending < 0n ? { offset: -1n, leaderEpoch: -1 } : { offset: pending, leaderEpoch: 3 };
      }
      if (timestamp === -4n) return { offset: localStart, leaderEpoch: 3 };
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `timestamp ${timestamp}`);
    };
    return {
      async fetch(build): Promise<FetchResponse> {
        const req = build(17);
        const p = req.topics[0]?.partitions[0];
        assert.ok(p !== undefined);
        if (p.fetchOffset >= leader.logEndOffset) {
          // Caught up: a long poll, answered by close.
          await new Promise<void>((resolve) => (closed = resolve));
          return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses: [], nodeEndpoints: [] } as FetchResponse;
        }
        if (p.fetchOffset < localStart) {
          return {
            throttleTimeMs: 0,
            errorCode: ErrorCode.NONE,
            sessionId: 0,
            responses: [{ topic: 't', topicId, partitions: [{ partitionIndex: 0, errorCode: ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE, highWatermark: leader.highWatermark, lastStableOffset: leader.highWatermark, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: null }] }],
            nodeEndpoints: [],
          } as FetchResponse;
        }
        const read = await leader.read(p.fetchOffset, 16_384, { maxOffset: leader.logEndOffset, minOneBatch: true });
        return {
          throttleTimeMs: 0,
          errorCode: ErrorCode.NONE,
          sessionId: 0,
          responses: [{ topic: 't', topicId, partitions: [{ partitionIndex: 0, errorCode: ErrorCode.NONE, highWatermark: leader.highWatermark, lastStableOffset: leader.highWatermark, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: Buffer.concat(read.records) }] }],
          nodeEndpoints: [],
        } as FetchResponse;
      },
      earliestLocalOffset: (t, p, e) => listOffset(t, p, e, -4n),
      listOffset,
      close: () => closed?.(),
    };
  }

  /** Remote aux state at `offset`: epoch 3 from 0, no producers. */
  const tier = (built: bigint[]): ReplicaRemoteTier => ({
    async remoteAuxState(_log, offset) {
      built.push(offset);
      return { nextOffset: offset, leaderEpochCheckpoint: Buffer.from('0\n1\n3 0\n'), producerSnapshot: Buffer.alloc(0) };
    },
    logStartOffset: () => 0n,
  });

  let followers = 0;
  /** `enabled`: the flag, or its live value (a dynamic config) read by the fetcher when it needs it. */
  async function replicate(enabled: boolean | (() => boolean), pending: bigint | readonly bigint[], config: Partial<LogConfig> = TIERED, localStart = 0n): Promise<{ follower: PartitionLog; bytes: number; asked: bigint[]; built: bigint[] }> {
    const pendings = typeof pending === 'bigint' ? [pending] : pending;
    const follower = await PartitionLog.open({ dir: path.join(dir, `follower-${followers++}`, 't-0'), topic: 't', partition: 0, topicId, config: logConfig(config), clock });
    const asked: bigint[] = [];
    const built: bigint[] = [];
    let bytes = 0;
    let caughtUp: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (caughtUp = resolve));
    const fetcher = new ReplicaFetcher({
      nodeId: 2,
      brokerEpoch: () => 1n,
      leaderId: 1,
      fetcherId: 0,
      connect: async () => fakeLeader(pendings, localStart, asked),
      config: { fetchMaxBytes: 16_384, responseMaxBytes: 65_536, waitMaxMs: 500, minBytes: 1, backoffMs: 100 },
      clock,
      scheduler: new ManualScheduler(clock),
      log: pino({ level: 'silent' }),
      remoteTier: () => tier(built),
      fetchFromLastTieredOffset: typeof enabled === 'boolean' ? () => enabled : enabled,
      onEvent: (e: FetcherEvent) => {
        if (e.type === 'fetched') bytes += e.appendedBytes;
        if (e.partition.log.logEndOffset === leader.logEndOffset) caughtUp();
      },
    });
    const p: FollowedPartition = { topic: 't', topicId, partition: 0, log: follower, leaderEpoch: 3 };
    fetcher.add(p);
    await done;
    await fetcher.stop();
    return { follower, bytes, asked, built };
  }

  it('on: starts at the earliest pending upload offset and copies only from there', async () => {
    const pending = 120n;
    const r = await replicate(true, pending);
    try {
      assert.deepEqual(r.asked, [-1n, -6n]);
      assert.deepEqual(r.built, [pending], 'aux state built at the pending offset');
      assert.equal(r.follower.logStartOffset, pending);
      assert.equal(r.follower.logEndOffset, leader.logEndOffset);
      // Every batch has the same size (values padded): 80 of the 200 records are above the pending offset.
      assert.equal(r.bytes, r.follower.size, 'what it holds is what it fetched');
      assert.equal(r.bytes * 200, leader.size * 80, `copied only the batches from the pending offset: ${r.bytes} of ${leader.size} bytes`);
      assert.deepEqual(r.follower.leaderEpochEntries(), [{ epoch: 3, startOffset: 0n }]);
    } finally {
      await r.follower.close();
    }
  });

  it('dynamic: the flag is read when a replica is taken on, so a change reaches the next new replica without a restart', async () => {
    const dynamic = new DynamicBrokerConfig(BrokerConfig.fromProperties({ 'node.id': '2', 'log.dirs': dir }));
    const live = replicaManagerConfig(dynamic.staticConfig, () => dynamic.current).fetchFromLastTieredOffset!;
    const before = await replicate(live, 120n);
    // kafka-configs.sh --entity-type brokers --entity-default --add-config follower.fetch.last.tiered.offset.enable=true
    assert.deepEqual(dynamic.apply({ defaults: new Map([['follower.fetch.last.tiered.offset.enable', 'true']]), perBroker: new Map() }), ['follower.fetch.last.tiered.offset.enable']);
    const after = await replicate(live, 120n);
    try {
      assert.deepEqual(before.asked, [], 'off at start-up: the first replica copies the whole log');
      assert.equal(before.follower.logStartOffset, 0n);
      assert.equal(before.bytes, leader.size);
      assert.deepEqual(after.asked, [-1n, -6n], 'on: the next replica asks for the pending offset');
      assert.equal(after.follower.logStartOffset, 120n);
      assert.equal(after.follower.logEndOffset, leader.logEndOffset);
    } finally {
      await before.follower.close();
      await after.follower.close();
    }
  });

  it('off (the default): copies the leader\'s whole log and asks no offsets', async () => {
    const r = await replicate(false, 120n);
    try {
      assert.deepEqual(r.asked, []);
      assert.deepEqual(r.built, []);
      assert.equal(r.follower.logStartOffset, 0n);
      assert.equal(r.follower.logEndOffset, leader.logEndOffset);
      assert.equal(r.bytes, leader.size, 'every byte of the leader\'s log');
    } finally {
      await r.follower.close();
    }
  });

  it('on, but nothing uploaded (the pending offset is the log start): copies everything', async () => {
    const r = await replicate(true, 0n);
    try {
      assert.deepEqual(r.asked, [-1n, -6n]);
      assert.deepEqual(r.built, []);
      assert.equal(r.follower.logStartOffset, 0n);
      assert.equal(r.bytes, leader.size);
    } finally {
      await r.follower.close();
    }
  });

  it('on, for a compacted topic: copies everything and asks nothing', async () => {
    const r = await replicate(true, 120n, { ...TIERED, cleanupPolicy: { delete: true, compact: true } });
    try {
      assert.deepEqual(r.asked, []);
      assert.equal(r.follower.logStartOffset, 0n);
      assert.equal(r.bytes, leader.size);
    } finally {
      await r.follower.close();
    }
  });

  // Below the leader's local log start (OFFSET_MOVED_TO_TIERED_STORAGE at 80; 120 is the pending offset).
  it('off, below the leader\'s local start: starts at the local start (-4), as before KIP-1023', async () => {
    const r = await replicate(false, 120n, TIERED, 80n);
    try {
      assert.deepEqual(r.asked, [-4n]);
      assert.deepEqual(r.built, [80n]);
      assert.equal(r.bytes * 200, leader.size * 120);
    } finally {
      await r.follower.close();
    }
  });

  it('on, the pending offset unknown before the first fetch: the OMTS answer goes on to it once the leader knows it', async () => {
    const r = await replicate(true, [-1n, 120n], TIERED, 80n);
    try {
      assert.deepEqual(r.asked, [-1n, -6n, -4n, -6n]);
      assert.deepEqual(r.built, [120n]);
      assert.equal(r.follower.logStartOffset, 120n);
      assert.equal(r.bytes * 200, leader.size * 80);
    } finally {
      await r.follower.close();
    }
  });

  it('on, the pending offset never known: the OMTS answer falls back to the leader\'s local start', async () => {
    const r = await replicate(true, [-1n], TIERED, 80n);
    try {
      assert.deepEqual(r.asked, [-1n, -6n, -4n, -6n]);
      assert.deepEqual(r.built, [80n]);
      assert.equal(r.bytes * 200, leader.size * 120);
    } finally {
      await r.follower.close();
    }
  });
});
