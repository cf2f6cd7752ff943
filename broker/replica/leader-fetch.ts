// The leader's answer to a follower's Fetch (replica id >= 0, in ReplicaState
// from v15), as Kafka's ReplicaManager.fetchMessages / Partition.fetchRecords
// answer a follower: sessionless, read up to the log end (not the HW), and per
// partition:
// - NOT_LEADER_OR_FOLLOWER unless this broker leads it; FENCED_LEADER_EPOCH /
//   UNKNOWN_LEADER_EPOCH when the follower's current leader epoch is older /
//   newer than the leader's;
// - with LastFetchedEpoch (v12+): when the leader's end offset for that epoch
//   is below the fetch offset, or the leader's largest epoch up to it is
//   smaller, the answer is DivergingEpoch (epoch, end offset) and no records:
//   the follower truncates there (KIP-320/595 fetch-based truncation);
// - OFFSET_OUT_OF_RANGE outside [log start, log end], with the log start;
//   OFFSET_MOVED_TO_TIERED_STORAGE below the local log start (the log start
//   counts both tiers: the follower then builds its state from the remote
//   tier, tier-state.ts);
// - otherwise the fetch offset is the follower's log end offset: recorded
//   (HW and ISR may move), then whole batches from it.
// Long-polls as a consumer fetch does (MinBytes / MaxWaitMs), woken by appends;
// answers at once while the follower's log start (sent with its fetch) is below
// the one it can take from this answer (DeleteRecords moved the leader's).
// Leader replication throttle (replication-quota.ts): a throttled partition of
// a follower outside the ISR is answered without records while the quota is
// exceeded; the bytes answered for throttled partitions count toward it.
import type { Clock } from '../common/clock.js';
import type { PartitionWaiters } from '../partition-waiters.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { FetchRequest, FetchRequestFetchPartition, FetchResponse, FetchResponsePartitionData } from '../protocol/messages/fetch.js';
import { recordsOf, type Records } from '../protocol/record-parts.js';
import type { ReplicaManager } from './replica-manager.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { ReplicationQuota } from './replication-quota.js';
import type { ReadLease } from '../common/read-buffer-pool.js';

export interface LeaderFetchContext {
  readonly replicas: ReplicaManager;
  readonly waiters: PartitionWaiters;
  readonly clock: Clock;
  /** Topic name by id (v13+), or undefined. */
  readonly topicNameById: (topicId: string) => string | undefined;
  /** The partition's leader and epoch from the image, for errors. */
  readonly currentLeader: (topic: string, partition: number) => { leaderId: number; leaderEpoch: number } | undefined;
  /** The partition's log start over both tiers (default: the local log's). */
  readonly logStartOffset?: (log: PartitionLog) => bigint;
  /** The leader-side replication throttle; absent: none. */
  readonly quota?: Pick<ReplicationQuota, 'isThrottled' | 'isQuotaExceeded' | 'record'>;
}

const NO_RECORDS = Buffer.alloc(0);

function failed(partitionIndex: number, errorCode: number, extra: Partial<FetchResponsePartitionData> = {}): FetchResponsePartitionData {
  return { partitionIndex, errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: null, preferredReadReplica: -1, records: NO_RECORDS, ...extra };
}

interface Target {
  readonly topic: string | undefined;
  readonly responseTopic: { topic: string; topicId: string };
  readonly p: FetchRequestFetchPartition;
}

async function readOne(c: LeaderFetchContext, replicaId: number, brokerEpoch: bigint, t: Target, room: number, first: boolean, record: boolean, lease?: ReadLease): Promise<{ data: FetchResponsePartitionData; bytes: number; error: boolean; throttled?: boolean; logStartBehind?: boolean }> {
  const p = t.p;
  const fail = (code: number, extra: Partial<FetchResponsePartitionData> = {}) => ({ data: failed(p.partition, code, extra), bytes: 0, error: true });
  if (t.topic === undefined) return fail(ErrorCode.UNKNOWN_TOPIC_ID);
  const led = c.replicas.leaderState(t.topic, p.partition);
  if (led === undefined) {
    const cur = c.currentLeader(t.topic, p.partition);
    return fail(cur === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NOT_LEADER_OR_FOLLOWER, cur === undefined ? {} : { currentLeader: cur });
  }
  const { replica, state } = led;
  const log = replica.log;
  if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch < state.leaderEpoch) return fail(ErrorCode.FENCED_LEADER_EPOCH);
  if (p.currentLeaderEpoch > state.leaderEpoch) return fail(ErrorCode.UNKNOWN_LEADER_EPOCH);
  const logStart = c.logStartOffset?.(log) ?? log.logStartOffset;
  const base = { partitionIndex: p.partition, highWatermark: log.highWatermark, lastStableOffset: log.lastStableOffset, logStartOffset: logStart, abortedTransactions: null, preferredReadReplica: -1 };
  // Below the local log start the epoch history is gone with the local segments (it is truncated with them):
  // divergence cannot be decided there, and the follower rebuilds from the remote tier anyway (OFFSET_MOVED_TO_TIERED_STORAGE).
  if (p.lastFetchedEpoch >= 0 && p.fetchOffset >= log.localLogStartOffset) {
    const end = log.endOffsetForEpoch(p.lastFetchedEpoch);
    if (end.epoch < p.lastFetchedEpoch || end.endOffset < p.fetchOffset) {
      return { data: { ...base, errorCode: ErrorCode.NONE, divergingEpoch: { epoch: end.epoch, endOffset: end.endOffset }, records: NO_RECORDS }, bytes: 0, error: false };
    }
  }
  if (p.fetchOffset < logStart || p.fetchOffset > log.logEndOffset) return fail(ErrorCode.OFFSET_OUT_OF_RANGE, { logStartOffset: logStart, highWatermark: log.highWatermark });
  if (p.fetchOffset < log.localLogStartOffset) return fail(ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE, { logStartOffset: logStart, highWatermark: log.highWatermark });
  if (record && !c.replicas.followerFetched(replica, state, replicaId, p.fetchOffset, brokerEpoch, p.logStartOffset)) {
    // Kafka: a fetch from a broker that is not a replica is refused.
    return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  }
  const maxBytes = Math.min(p.partitionMaxBytes, room);
  let records: Records = NO_RECORDS;
  const throttled = c.quota?.isThrottled(t.topic, p.partition) ?? false;
  // Kafka's shouldLeaderThrottle: only replicas outside the ISR are held back.
  const held = throttled && !state.isr.includes(replicaId) && c.quota!.isQuotaExceeded();
  if (!held && p.fetchOffset < log.logEndOffset && (maxBytes > 0 || first)) {
    try {
      const r = await log.read(p.fetchOffset, Math.max(0, maxBytes), { maxOffset: log.logEndOffset, minOneBatch: first, ...(lease === undefined ? {} : { lease }) });
      records = recordsOf(r.records) ?? NO_RECORDS;
    } catch (err) {
      return fail(err instanceof KafkaError ? err.code : ErrorCode.KAFKA_STORAGE_ERROR);
    }
  }
  // The follower can move its log start up to ours (at most its HW, which this answer caps at its fetch offset):
  // while it is below, answer at once, so a DeleteRecords waiting for the low watermark is not held by the long poll.
  const reachable = minOf(logStart, log.highWatermark, p.fetchOffset);
  const logStartBehind = p.logStartOffset >= 0n && p.logStartOffset < reachable;
  // The HW after this follower's fetch was recorded: it may have just moved.
  return { data: { ...base, highWatermark: log.highWatermark, lastStableOffset: log.lastStableOffset, errorCode: ErrorCode.NONE, records }, bytes: records.length, error: false, throttled, logStartBehind };
}

/** With `lease`, segment bytes are read into its pooled buffers (released once the answer is written). */
export async function answerReplicaFetch(c: LeaderFetchContext, req: FetchRequest, apiVersion: number, signal: AbortSignal, lease?: ReadLease): Promise<FetchResponse> {
  const replicaId = req.replicaState !== undefined && req.replicaState.replicaId >= 0 ? req.replicaState.replicaId : req.replicaId;
  const brokerEpoch = req.replicaState?.replicaEpoch ?? -1n;
  const byId = apiVersion >= 13;
  const targets: Target[] = [];
  for (const t of req.topics) {
    const name = byId ? c.topicNameById(t.topicId) : t.topic;
    for (const p of t.partitions) targets.push({ topic: name, responseTopic: { topic: t.topic, topicId: t.topicId }, p });
  }
  const deadline = c.clock.now() + req.maxWaitMs;
  const keys = targets.filter((t) => t.topic !== undefined).map((t) => `${t.topic}\u0000${t.p.partition}`);
  let record = true;
  for (;;) {
    let bytes = 0;
    let throttledBytes = 0;
    let errors = false;
    const answers: Array<{ t: Target; data: FetchResponsePartitionData }> = [];
    for (const t of targets) {
      const r = await readOne(c, replicaId, brokerEpoch, t, req.maxBytes - bytes, bytes === 0, record, lease);
      bytes += r.bytes;
      if (r.throttled === true) throttledBytes += r.bytes;
      errors ||= r.error || r.data.divergingEpoch !== undefined || r.logStartBehind === true;
      answers.push({ t, data: r.data });
    }
    record = false;
    const remaining = deadline - c.clock.now();
    if (keys.length === 0 || bytes >= req.minBytes || errors || remaining <= 0 || signal.aborted) {
      c.quota?.record(throttledBytes);
      return respond(answers);
    }
    await c.waiters.wait(keys, remaining, signal);
  }
}

function minOf(...xs: bigint[]): bigint {
  return xs.reduce((a, b) => (b < a ? b : a));
}

function respond(answers: ReadonlyArray<{ t: Target; data: FetchResponsePartitionData }>): FetchResponse {
  const topics = new Map<string, FetchResponse['responses'][number]>();
  for (const { t, data } of answers) {
    const k = `${t.responseTopic.topicId}\u0000${t.responseTopic.topic}`;
    let rt = topics.get(k);
    if (rt === undefined) topics.set(k, (rt = { topic: t.responseTopic.topic, topicId: t.responseTopic.topicId, partitions: [] }));
    rt.partitions.push(data);
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses: [...topics.values()] };
}
