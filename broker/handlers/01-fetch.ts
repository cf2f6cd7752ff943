// Fetch (key 1), versions 4-18.
// Consumer fetches here; a follower's fetch (replica id >= 0, in ReplicaState
// from v15) goes to broker/replica/leader-fetch.ts in a cluster and is refused
// (NOT_LEADER_OR_FOLLOWER) by a single broker, which has no followers.
// Fetch from the closest replica (KIP-392, replica/consumer-fetch.ts): in a
// cluster a follower serves v11+ consumer fetches of the partitions it
// replicates, up to its own high watermark (the one its leader last sent);
// elsewhere a broker that does not lead answers NOT_LEADER_OR_FOLLOWER. With
// replica.selector.class set, the leader answers a v11+ fetch whose rack_id
// has a better replica with that replica's id as preferred_read_replica and no
// records, at once. current_leader_epoch older than this broker's is
// FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH.
// Per partition: whole batches starting with the one containing the fetch
// offset, read from whichever tier holds it (local log, or remote storage for
// offsets below the local log start); the first partition that returns data
// gets at least one batch even above the byte limits; then the request's
// MaxBytes bounds the total. Long-poll: until MinBytes have accumulated or
// MaxWaitMs has passed, woken by appends to the fetched partitions. The
// visible end is the high watermark, or the last stable offset under
// read_committed, whose aborted transactions are listed (null otherwise).
// Fetch sessions (KIP-227): broker/fetch/ keeps them (at most
// max.incremental.fetch.session.cache.slots; 0 answers every fetch sessionless).
// An incremental fetch reads every partition of its session, waits on all of
// them, and answers only those with something new. From v13 topics are named
// by id (KIP-516), in sessions too: an id the broker does not know (or one of
// a deleted topic, whose name may since name a new topic) is UNKNOWN_TOPIC_ID
// for its partitions. v14's OffsetMovedToTieredStorage is internal to Kafka's
// replica fetcher (a consumer reads remote offsets like local ones here).
// KIP-951 (v16+): a partition answered NOT_LEADER_OR_FOLLOWER or
// FENCED_LEADER_EPOCH carries its CurrentLeader (id and epoch, from this
// broker's image) and the response those leaders' NodeEndpoints, so the
// consumer re-routes without a metadata round trip, as Kafka's
// handleFetchRequest answers. Errors are in every incremental answer, so a
// fetch session carries them too.
import { ReadBufferPool, type ReadLease } from '../common/read-buffer-pool.js';
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext, PartitionView } from '../broker-context.js';
import { PartitionWaiters } from '../partition-waiters.js';
import type { FetchRequest, FetchRequestFetchPartition, FetchResponse, FetchResponsePartitionData } from '../protocol/messages/fetch.js';
import { completeFetch, openFetchContext, usesTopicIds, type FetchResult, type FetchTarget } from '../fetch/fetch-context.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FileRecords, type Records } from '../protocol/record-parts.js';
import { releaseRegion, type SendfileBinding } from '../common/sendfile.js';
import { consumerFetchDecision, type ConsumerFetchDecision } from '../replica/consumer-fetch.js';
import { leaderEndpoints, type LeaderEndpoint } from './leader-endpoints.js';

const READ_COMMITTED = 1;
/** A partition's answer whose records are never null (a Buffer, or the tier's parts as read). */
type PartitionAnswer = FetchResponsePartitionData & { records: Records };
// Kafka never sends null records (librdkafka rejects a -1 size): empty is zero bytes.
const NO_RECORDS = Buffer.alloc(0);

function emptyPartition(partitionIndex: number, errorCode: number): FetchResponsePartitionData {
  return {
    partitionIndex,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: NO_RECORDS,
  };
}

/** One partition's answer; throws for failures (mapped to a per-partition error by the caller). */
async function readPartition(
  partition: PartitionView,
  p: FetchRequestFetchPartition,
  requestRoom: number,
  first: boolean,
  readCommitted: boolean,
  signal: AbortSignal,
  lease?: ReadLease,
  sendfile?: SendfileBinding,
): Promise<PartitionAnswer> {
  const base = {
    partitionIndex: p.partition,
    highWatermark: partition.highWatermark,
    lastStableOffset: partition.lastStableOffset,
    logStartOffset: partition.logStartOffset,
    preferredReadReplica: -1,
  };
  const maxOffset = readCommitted ? partition.lastStableOffset : partition.highWatermark;
  if (p.fetchOffset < base.logStartOffset || p.fetchOffset > partition.logEndOffset) {
    return { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, abortedTransactions: null, records: NO_RECORDS };
  }
  const room = Math.min(p.partitionMaxBytes, requestRoom);
  if (p.fetchOffset >= maxOffset || (room <= 0 && !first)) {
    return { ...base, errorCode: 0, abortedTransactions: readCommitted ? [] : null, records: NO_RECORDS };
  }
  const r = await partition.read(p.fetchOffset, Math.max(0, room), {
    maxOffset,
    minOneBatch: first,
    signal,
    ...(lease === undefined ? {} : { lease }),
    ...(sendfile === undefined ? {} : { sendfile }),
  });
  return { ...base, errorCode: 0, abortedTransactions: readCommitted ? r.abortedTransactions : null, records: r.records ?? NO_RECORDS };
}

/** The topic a target names: by id from v13 (undefined when no topic has that id), else by name. */
function topicName(broker: BrokerContext, target: FetchTarget, byId: boolean): string | undefined {
  return byId ? broker.topics.store.getById(target.topicId)?.name : target.topic;
}

function partitionOf(broker: BrokerContext, target: FetchTarget, byId: boolean): PartitionView | undefined {
  const name = topicName(broker, target, byId);
  return name === undefined ? undefined : broker.topics.partition(name, target.request.partition);
}

/**
 * Who serves this partition here (KIP-392, replica/consumer-fetch.ts): read
 * it, send the client to a preferred replica, or an error. A partition that is
 * not replicated here keeps the leader-only rules (ClusterView.notLeader).
 */
function decide(broker: BrokerContext, name: string, partition: PartitionView | undefined, p: FetchRequestFetchPartition, apiVersion: number, rackId: string): ConsumerFetchDecision {
  const notLeader = broker.cluster?.notLeader(name, p.partition) ?? null;
  let standing = broker.replication?.consumerStanding(name, p.partition);
  if (standing === undefined || (standing === 'leader' && notLeader !== null)) {
    if (notLeader !== null) return { kind: 'error', errorCode: notLeader.errorCode };
    standing = 'leader';
  }
  // A follower without a live cluster session serves nothing (its fetchers stop with it).
  if (standing === 'follower' && broker.cluster?.isLive !== true) standing = 'not-replica';
  if (standing !== 'not-replica' && partition === undefined) return { kind: 'error', errorCode: broker.cluster?.notHostedError(name) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
  return consumerFetchDecision({
    standing,
    leaderEpoch: partition?.leaderEpoch ?? 0,
    currentLeaderEpoch: p.currentLeaderEpoch,
    apiVersion,
    preferredReadReplica: () => broker.replication?.preferredReadReplica(name, p.partition, rackId, p.fetchOffset) ?? -1,
  });
}

/** The leader's answer that sends the client to another replica: its offsets, no records (as Kafka skips the read). */
function redirected(partition: PartitionView, partitionIndex: number, preferredReadReplica: number): PartitionAnswer {
  return {
    partitionIndex,
    errorCode: ErrorCode.NONE,
    highWatermark: partition.highWatermark,
    lastStableOffset: partition.lastStableOffset,
    logStartOffset: partition.logStartOffset,
    abortedTransactions: null,
    preferredReadReplica,
    records: NO_RECORDS,
  };
}

interface ReadOnce {
  readonly results: FetchResult[];
  readonly bytes: number;
  readonly errors: boolean;
  /** A partition was answered with a preferred read replica: Kafka answers at once. */
  readonly redirected: boolean;
}

async function readOnce(
  broker: BrokerContext,
  targets: readonly FetchTarget[],
  req: FetchRequest,
  apiVersion: number,
  signal: AbortSignal,
  lease?: ReadLease,
  sendfile?: SendfileBinding,
): Promise<ReadOnce> {
  let bytes = 0;
  let errors = false;
  let anyRedirect = false;
  const byId = usesTopicIds(apiVersion);
  const readCommitted = req.isolationLevel === READ_COMMITTED;
  const results: FetchResult[] = [];
  const decisions = new Map<FetchTarget, { partition: PartitionView | undefined; decision: ConsumerFetchDecision | null }>();
  for (const target of targets) {
    const name = topicName(broker, target, byId);
    const partition = partitionOf(broker, target, byId);
    decisions.set(target, { partition, decision: name === undefined ? null : decide(broker, name, partition, target.request, apiVersion, req.rackId) });
  }
  // Partitions below their local log start are read from remote storage: start
  // those reads together so one slow object store read does not serialise the rest.
  const prefetched = new Map<FetchTarget, Promise<PartitionAnswer>>();
  for (const target of targets) {
    const p = target.request;
    const { partition, decision } = decisions.get(target)!;
    if (decision?.kind !== 'read' || partition === undefined || p.fetchOffset >= partition.localLogStartOffset) continue;
    const pending = readPartition(partition, p, req.maxBytes, true, readCommitted, signal);
    pending.catch(() => undefined);
    prefetched.set(target, pending);
  }
  for (const target of targets) {
    const p = target.request;
    const { partition, decision } = decisions.get(target)!;
    if (decision?.kind === 'error') {
      errors = true;
      results.push({ target, data: emptyPartition(p.partition, decision.errorCode) });
      continue;
    }
    if (partition === undefined) {
      errors = true;
      results.push({ target, data: emptyPartition(p.partition, decision === null ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) });
      continue;
    }
    if (decision?.kind === 'redirect') {
      anyRedirect = true;
      results.push({ target, data: redirected(partition, p.partition, decision.preferredReadReplica) });
      continue;
    }
    try {
      const pre = prefetched.get(target);
      let r: PartitionAnswer;
      if (pre !== undefined) {
        r = await pre;
        // Read ahead of its turn: keep it only while it fits what is left.
        if (bytes > 0 && r.records.length > Math.min(p.partitionMaxBytes, req.maxBytes - bytes)) r = { ...r, records: NO_RECORDS };
      } else {
        // Local reads only, each awaited here: no read into the lease is still running when the answer is built.
        r = await readPartition(partition, p, req.maxBytes - bytes, bytes === 0, readCommitted, signal, lease, sendfile);
      }
      if (r.errorCode !== 0) errors = true;
      bytes += r.records.length;
      results.push({ target, data: r });
    } catch (err) {
      errors = true;
      const code = err instanceof KafkaError ? err.code : ErrorCode.KAFKA_STORAGE_ERROR;
      if (!(err instanceof KafkaError)) broker.log.error({ err, topic: partition.topic, partition: p.partition }, 'fetch read failed');
      results.push({ target, data: emptyPartition(p.partition, code) });
    }
  }
  return { results, bytes, errors, redirected: anyRedirect };
}

/** The first version whose answers name the current leader of a partition refused for leadership (KIP-951). */
const CURRENT_LEADER_VERSION = 16;

/**
 * KIP-951 (v16+): the current leader of each partition answered
 * NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH (this broker itself for a
 * stale epoch on a partition it leads), and the endpoints of those leaders.
 */
function withCurrentLeaders(broker: BrokerContext, results: readonly FetchResult[], apiVersion: number): { results: readonly FetchResult[]; nodeEndpoints: LeaderEndpoint[] } {
  if (apiVersion < CURRENT_LEADER_VERSION) return { results, nodeEndpoints: [] };
  const byId = usesTopicIds(apiVersion);
  const leaders: number[] = [];
  const out = results.map((r) => {
    if (r.data.errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER && r.data.errorCode !== ErrorCode.FENCED_LEADER_EPOCH) return r;
    const name = topicName(broker, r.target, byId);
    if (name === undefined) return r;
    const index = r.target.request.partition;
    const currentLeader = broker.cluster?.currentLeader(name, index) ?? { leaderId: broker.nodeId, leaderEpoch: broker.topics.partition(name, index)?.leaderEpoch ?? -1 };
    leaders.push(currentLeader.leaderId);
    return { ...r, data: { ...r.data, currentLeader: { leaderId: currentLeader.leaderId, leaderEpoch: currentLeader.leaderEpoch } } };
  });
  return { results: out, nodeEndpoints: leaderEndpoints(broker, leaders) };
}

/** Closes the descriptors of file regions read for an answer that is not sent. */
function releaseFiles(results: readonly FetchResult[]): void {
  for (const r of results) if (r.data.records instanceof FileRecords) releaseRegion(r.data.records);
}

/** Shared by every Fetch of this process: buffers go back once their response is written. */
const readBuffers = new ReadBufferPool();

export const handler: ApiHandler<FetchRequest, FetchResponse, BrokerContext> = {
  apiKey: 1,
  minVersion: 4,
  maxVersion: 18,
  async handle(broker, req, ctx) {
    // Segment bytes are read into pooled buffers, given back once the answer is on the socket.
    let lease: ReadLease | undefined;
    if (ctx.afterResponseWritten !== undefined) {
      const l = readBuffers.lease();
      ctx.afterResponseWritten(() => l.release());
      lease = l;
    }
    if (req.replicaId >= 0 || (req.replicaState?.replicaId ?? -1) >= 0) {
      if (broker.replication != null) return broker.replication.answerReplicaFetch(req, ctx.apiVersion, ctx.signal, lease);
      return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, sessionId: 0, responses: [] };
    }
    const context = openFetchContext(broker.fetchSessions, req, ctx.apiVersion);
    const answer = (read: readonly FetchResult[]): FetchResponse => {
      const { results, nodeEndpoints } = withCurrentLeaders(broker, read, ctx.apiVersion);
      return { throttleTimeMs: 0, ...completeFetch(broker.fetchSessions, context, results), ...(nodeEndpoints.length === 0 ? {} : { nodeEndpoints }) };
    };
    if (context.kind === 'sessionError') return answer([]);
    const targets = context.targets;
    const deadline = broker.clock.now() + req.maxWaitMs;
    const byId = usesTopicIds(ctx.apiVersion);
    // Woken by appends to the named partitions (on a follower, by its HW moving); an unknown one answers at once (an error).
    const keys = targets.map((t) => PartitionWaiters.key(topicName(broker, t, byId) ?? '', t.request.partition));
    for (;;) {
      const result = await readOnce(broker, targets, req, ctx.apiVersion, ctx.signal, lease, ctx.sendfile);
      const remaining = deadline - broker.clock.now();
      // Nothing to wait for (no partitions named): answer now, as Kafka does. Waiting on no
      // keys would return at once and turn this loop into a busy spin until the deadline.
      if (keys.length === 0 || result.bytes >= req.minBytes || result.errors || result.redirected || remaining <= 0 || ctx.signal.aborted) return answer(result.results);
      // Read again after the wait: this read's file regions are not sent.
      releaseFiles(result.results);
      await broker.waiters.wait(keys, remaining, ctx.signal);
      if (broker.clock.now() >= deadline || ctx.signal.aborted) {
        return answer((await readOnce(broker, targets, req, ctx.apiVersion, ctx.signal, lease, ctx.sendfile)).results);
      }
    }
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: req.topics.map((t) => ({ topic: t.topic, topicId: t.topicId, partitions: t.partitions.map((p) => emptyPartition(p.partition, errorCode)) })),
    };
  },
};
