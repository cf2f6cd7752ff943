// Everything share groups (KIP-932) are on this broker, by role: membership
// (ShareGroupCoordinator), share sessions (ShareSessionCache), share-partitions
// (SharePartitionManager), group configs, and the state persister. The
// ShareFetch and ShareAcknowledge handlers call `fetch` and `acknowledge`
// here: the session bookkeeping, the acknowledgements, then the long-polled
// acquisition across the session's partitions.
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { Scheduler } from '../common/scheduler.js';
import type { ShareBrokerPort, ShareLogView } from './share-ports.js';
import { PartitionWaiters } from '../partition-waiters.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ShareGroupCoordinator, type InitializeOutcome, type ShareGroupRecordSink } from './share-group-coordinator.js';
import { ShareGroupConfigs } from './share-group-configs.js';
import { SharePartitionManager, type ShareStatePersister } from './share-partition-manager.js';
import { FINAL_SHARE_EPOCH, INITIAL_SHARE_EPOCH, partitionKeyString, ShareSessionCache, type SharePartitionKey, type ShareSession } from './share-session-cache.js';
import { ShareAdmin } from './share-admin.js';
import { AcknowledgeType, type AcknowledgementBatch, type AcquireMode, type AcquiredRange } from './share-partition.js';

export interface ShareGroupsOptions {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  readonly broker: ShareBrokerPort;
  readonly waiters: PartitionWaiters;
  readonly persister: ShareStatePersister;
  readonly configs: ShareGroupConfigs;
  readonly maxSize: number;
  readonly maxShareSessions: number;
  /** group.share.initialize.retry.interval.ms */
  readonly initializeRetryIntervalMs: number;
  /** The group coordinator's __consumer_offsets; absent: group records are not kept. */
  readonly records?: ShareGroupRecordSink;
}

export interface ShareTopicRequest {
  readonly topicId: string;
  readonly partitions: readonly { readonly partitionIndex: number; readonly acknowledgementBatches: readonly AcknowledgementBatch[] }[];
}

export interface ShareFetchParams {
  readonly groupId: string | null;
  readonly memberId: string | null;
  readonly shareSessionEpoch: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly maxRecords: number;
  readonly acquireMode: AcquireMode;
  readonly isRenewAck: boolean;
  /** Renew (4) is an acknowledge type from ShareFetch/ShareAcknowledge v2. */
  readonly renewAllowed: boolean;
  readonly topics: readonly ShareTopicRequest[];
  readonly forgotten: readonly { topicId: string; partitions: readonly number[] }[];
  readonly connectionId: number;
  readonly signal: AbortSignal;
}

export interface SharePartitionResult {
  readonly topicId: string;
  readonly partition: number;
  errorCode: number;
  errorMessage: string | null;
  acknowledgeErrorCode: number;
  acknowledgeErrorMessage: string | null;
  leaderId: number;
  leaderEpoch: number;
  records: Buffer;
  acquired: AcquiredRange[];
  /** Acknowledged in this request: answered with the outcome even with nothing fetched. */
  acknowledged: boolean;
}

export interface ShareFetchResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly partitions: SharePartitionResult[];
}

const EMPTY = Buffer.alloc(0);

function errorOf(err: unknown): { code: number; message: string } {
  return err instanceof KafkaError ? { code: err.code, message: err.message } : { code: ErrorCode.UNKNOWN_SERVER_ERROR, message: (err as Error).message };
}

export type { ShareBrokerPort } from './share-ports.js';

export class ShareGroups {
  readonly coordinator: ShareGroupCoordinator;
  readonly sessions: ShareSessionCache;
  readonly partitions: SharePartitionManager;
  readonly configs: ShareGroupConfigs;
  readonly admin: ShareAdmin;

  constructor(private readonly o: ShareGroupsOptions) {
    this.configs = o.configs;
    
    this.sessions = new ShareSessionCache(o.maxShareSessions);
    this.partitions = new SharePartitionManager({
      clock: o.clock,
      scheduler: o.scheduler,
      log: o.log,
      persister: o.persister,
      groupConfigs: o.configs,
      partition: (topicId, p) => {
        const name = o.broker.topicName(topicId);
        return name === undefined ? undefined : o.broker.partition(name, p);
      },
      onAvailable: (topicId, p) => {
        const name = o.broker.topicName(topicId);
        if (name !== undefined) o.waiters.notify(name, p);
      },
    });
    this.coordinator = new ShareGroupCoordinator({
      clock: o.clock,
      scheduler: o.scheduler,
      topics: { byName: (n) => o.broker.topicByName(n), nameOf: (id) => o.broker.topicName(id) },
      config: { maxSize: o.maxSize, sessionTimeoutMs: (g) => o.configs.sessionTimeoutMs(g), heartbeatIntervalMs: (g) => o.configs.heartbeatIntervalMs(g) },
      otherGroupExists: (g) => o.broker.otherGroupExists(g),
      onMemberRemoved: (g, m) => {
        for (const s of this.sessions.ofMember(g, m)) this.sessions.remove(s);
        void this.partitions.releaseMember(g, m).catch((err: unknown) => o.log.warn({ err, groupId: g, memberId: m }, 'releasing a departed member\'s records failed'));
      },
      stateInitializer: { initialize: (g, epoch, start, topics) => this.initializeStates(g, epoch, start, topics) },
      initializeRetryIntervalMs: o.initializeRetryIntervalMs,
      onInitializeError: (g, err) => o.log.warn({ err, groupId: g }, 'initializing share-partition state (or writing its record) failed; a later heartbeat retries'),
      ...(o.records === undefined ? {} : { records: o.records }),
    });
    this.admin = new ShareAdmin({ coordinator: this.coordinator, partitions: this.partitions, persister: o.persister, configs: o.configs }, o.broker);
  }

  /**
   * InitializeShareGroupState of the group coordinator's plan. The group's
   * records in __consumer_offsets say what was initialised, so an initialised
   * partition is not planned again after a load. A partition that has state
   * all the same (read: a start offset, or loaded here) keeps it and counts as
   * initialised, and FENCED_STATE_EPOCH (state at a later epoch) does too:
   * state written by a Sediment that kept no records, before an upgrade.
   */
  private async initializeStates(groupId: string, stateEpoch: number, startOffset: bigint, topics: readonly { topicId: string; partitions: readonly number[] }[]): Promise<InitializeOutcome[]> {
    return Promise.all(topics.flatMap((t) => t.partitions.map(async (partition): Promise<InitializeOutcome> => {
      try {
        const has = this.partitions.loaded(groupId, t.topicId, partition) !== undefined || (await this.o.persister.read(groupId, t.topicId, partition)) !== null;
        if (!has) await this.o.persister.initialize(groupId, t.topicId, partition, stateEpoch, startOffset);
        return { topicId: t.topicId, partition, errorCode: ErrorCode.NONE, errorMessage: null };
      } catch (err) {
        const e = errorOf(err);
        if (e.code === ErrorCode.FENCED_STATE_EPOCH) return { topicId: t.topicId, partition, errorCode: ErrorCode.NONE, errorMessage: null };
        return { topicId: t.topicId, partition, errorCode: e.code, errorMessage: e.message };
      }
    })));
  }

  get persister(): ShareStatePersister {
    return this.o.persister;
  }

  close(): void {
    this.coordinator.close();
    this.partitions.close();
  }

  /** The connection closed: its share sessions end and their records go back (as Kafka does on disconnect). */
  connectionClosed(connectionId: number): void {
    for (const s of this.sessions.ofConnection(connectionId)) {
      this.sessions.remove(s);
      void this.partitions.releaseMember(s.groupId, s.memberId, [...s.partitions.values()].map((p) => ({ topicId: p.topicId, partition: p.partition }))).catch(() => undefined);
    }
  }

  private resolve(topicId: string, partition: number): { view: ShareLogView; name: string } | { errorCode: number; message: string; leaderId: number; leaderEpoch: number } {
    const name = this.o.broker.topicName(topicId);
    if (name === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, message: `unknown topic id ${topicId}`, leaderId: -1, leaderEpoch: -1 };
    const nl = this.o.broker.notLeader(name, partition);
    if (nl !== null) return { errorCode: nl.errorCode, message: `this broker does not lead ${name}-${partition}`, leaderId: nl.leaderId, leaderEpoch: nl.leaderEpoch };
    const view = this.o.broker.partition(name, partition);
    if (view === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `unknown partition ${name}-${partition}`, leaderId: -1, leaderEpoch: -1 };
    return { view, name };
  }

  private result(topicId: string, partition: number): SharePartitionResult {
    return { topicId, partition, errorCode: 0, errorMessage: null, acknowledgeErrorCode: 0, acknowledgeErrorMessage: null, leaderId: -1, leaderEpoch: -1, records: EMPTY, acquired: [], acknowledged: false };
  }

  /**
   * What a ShareFetch answers: the partitions it acquired records of, those with an
   * error and those it acknowledged. As Kafka 4.3.1, a partition with nothing to say is
   * left out, even one the request names (a session's first fetch names them all).
   */
  private static answered(results: Map<string, SharePartitionResult>): SharePartitionResult[] {
    return [...results.values()].filter((r) => r.acknowledged || r.errorCode !== 0 || r.acknowledgeErrorCode !== 0 || r.acquired.length > 0);
  }

  /** Applies the acknowledgements of each named partition into its result's acknowledge error. */
  private async applyAcks(groupId: string, memberId: string, topics: readonly ShareTopicRequest[], renewAllowed: boolean, results: Map<string, SharePartitionResult>): Promise<void> {
    await Promise.all(topics.flatMap((t) => t.partitions.map(async (p) => {
      const k = partitionKeyString({ topicId: t.topicId, partition: p.partitionIndex });
      let r = results.get(k);
      if (r === undefined) results.set(k, (r = this.result(t.topicId, p.partitionIndex)));
      if (p.acknowledgementBatches.length === 0) return;
      r.acknowledged = true;
      const target = this.resolve(t.topicId, p.partitionIndex);
      if (!('view' in target)) {
        r.acknowledgeErrorCode = target.errorCode;
        r.acknowledgeErrorMessage = target.message;
        r.leaderId = target.leaderId;
        r.leaderEpoch = target.leaderEpoch;
        return;
      }
      try {
        if (!renewAllowed && p.acknowledgementBatches.some((b) => b.acknowledgeTypes.includes(AcknowledgeType.RENEW))) {
          throw new KafkaError(ErrorCode.INVALID_REQUEST, 'the renew acknowledge type needs version 2');
        }
        await this.partitions.acknowledge(groupId, memberId, t.topicId, p.partitionIndex, target.view, p.acknowledgementBatches);
      } catch (err) {
        const e = errorOf(err);
        r.acknowledgeErrorCode = e.code;
        r.acknowledgeErrorMessage = e.message;
      }
    })));
  }

  private async releaseSession(s: ShareSession, keys?: readonly SharePartitionKey[]): Promise<void> {
    await this.partitions.releaseMember(s.groupId, s.memberId, (keys ?? [...s.partitions.values()]).map((p) => ({ topicId: p.topicId, partition: p.partition })));
  }

  private readonly watched = new Set<number>();

  /** Registers once per connection that its close ends its share sessions. */
  private watchConnection(connectionId: number, signal: AbortSignal): void {
    if (this.watched.has(connectionId)) return;
    this.watched.add(connectionId);
    const closed = (): void => {
      this.watched.delete(connectionId);
      this.connectionClosed(connectionId);
    };
    if (signal.aborted) closed();
    else signal.addEventListener('abort', closed, { once: true });
  }

  async fetch(p: ShareFetchParams): Promise<ShareFetchResult> {
    if (p.groupId === null || p.groupId === '' || p.memberId === null || p.memberId === '') {
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'GroupId and MemberId must be set', partitions: [] };
    }
    const groupId = p.groupId;
    const memberId = p.memberId;
    this.watchConnection(p.connectionId, p.signal);
    const hasAcks = p.topics.some((t) => t.partitions.some((q) => q.acknowledgementBatches.length > 0));
    const named = p.topics.flatMap((t) => t.partitions.map((q) => ({ topicId: t.topicId, partition: q.partitionIndex })));
    const results = new Map<string, SharePartitionResult>();
    let session: ShareSession;
    try {
      if (p.shareSessionEpoch === FINAL_SHARE_EPOCH) {
        // A final fetch only acknowledges: nothing is fetched, the session closes.
        const closing = this.sessions.closing(groupId, memberId);
        await this.applyAcks(groupId, memberId, p.topics, p.renewAllowed, results);
        this.sessions.remove(closing);
        await this.releaseSession(closing);
        return { errorCode: 0, errorMessage: null, partitions: ShareGroups.answered(results) };
      }
      if (p.shareSessionEpoch === INITIAL_SHARE_EPOCH) {
        if (hasAcks) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Acknowledge data present in the initial share fetch request', partitions: [] };
        const { session: opened, replaced } = this.sessions.open(groupId, memberId, named, p.connectionId);
        if (replaced !== undefined) await this.releaseSession(replaced);
        session = opened;
      } else {
        session = this.sessions.continue(groupId, memberId, p.shareSessionEpoch, p.connectionId);
        for (const n of named) session.partitions.set(partitionKeyString(n), n);
        const forgotten = p.forgotten.flatMap((f) => f.partitions.map((partition) => ({ topicId: f.topicId, partition })));
        for (const f of forgotten) session.partitions.delete(partitionKeyString(f));
        if (forgotten.length > 0) await this.releaseSession(session, forgotten);
      }
    } catch (err) {
      const e = errorOf(err);
      return { errorCode: e.code, errorMessage: e.message, partitions: [] };
    }
    await this.applyAcks(groupId, memberId, p.topics, p.renewAllowed, results);
    // Renewing acknowledgements are answered at once, without acquiring more (KIP-1222).
    if (p.isRenewAck) return { errorCode: 0, errorMessage: null, partitions: ShareGroups.answered(results) };
    const targets = [...session.partitions.values()];
    const deadline = this.o.clock.now() + p.maxWaitMs;
    for (;;) {
      const got = await this.acquireOnce(groupId, memberId, targets, p, results);
      const remaining = deadline - this.o.clock.now();
      if (got.bytes >= Math.max(1, p.minBytes) || got.errors || remaining <= 0 || p.signal.aborted || targets.length === 0) break;
      const keys = targets.map((t) => PartitionWaiters.key(this.o.broker.topicName(t.topicId) ?? '', t.partition));
      await this.o.waiters.wait(keys, remaining, p.signal);
      if (this.o.clock.now() >= deadline || p.signal.aborted) {
        await this.acquireOnce(groupId, memberId, targets, p, results);
        break;
      }
    }
    return { errorCode: 0, errorMessage: null, partitions: ShareGroups.answered(results) };
  }

  /** One pass over the session's partitions, sharing MaxRecords and MaxBytes among them. */
  private async acquireOnce(groupId: string, memberId: string, targets: readonly SharePartitionKey[], p: ShareFetchParams, results: Map<string, SharePartitionResult>): Promise<{ bytes: number; errors: boolean }> {
    let bytes = 0;
    let records = 0;
    let errors = false;
    for (const r of results.values()) {
      bytes += r.records.length;
      records += r.acquired.reduce((n, a) => n + Number(a.lastOffset - a.firstOffset + 1n), 0);
    }
    for (const t of targets) {
      const k = partitionKeyString(t);
      let r = results.get(k);
      if (r === undefined) results.set(k, (r = this.result(t.topicId, t.partition)));
      if (r.acquired.length > 0) continue;
      const target = this.resolve(t.topicId, t.partition);
      if (!('view' in target)) {
        r.errorCode = target.errorCode;
        r.errorMessage = target.message;
        r.leaderId = target.leaderId;
        r.leaderEpoch = target.leaderEpoch;
        errors = true;
        continue;
      }
      r.errorCode = 0;
      r.errorMessage = null;
      r.leaderId = -1;
      r.leaderEpoch = target.view.leaderEpoch;
      if (records >= p.maxRecords || (bytes >= p.maxBytes && bytes > 0)) continue;
      try {
        const got = await this.partitions.fetch(groupId, memberId, t.topicId, t.partition, target.view, {
          maxRecords: p.maxRecords - records,
          maxBytes: bytes === 0 ? p.maxBytes : p.maxBytes - bytes,
          mode: p.acquireMode,
          signal: p.signal,
        });
        r.records = got.records;
        r.acquired = got.acquired;
        bytes += got.records.length;
        records += got.acquired.reduce((n, a) => n + Number(a.lastOffset - a.firstOffset + 1n), 0);
      } catch (err) {
        const e = errorOf(err);
        if (!(err instanceof KafkaError)) this.o.log.error({ err, topicId: t.topicId, partition: t.partition }, 'share fetch failed');
        r.errorCode = e.code === ErrorCode.UNKNOWN_SERVER_ERROR ? ErrorCode.KAFKA_STORAGE_ERROR : e.code;
        r.errorMessage = e.message;
        errors = true;
      }
    }
    return { bytes, errors };
  }

  /** ShareAcknowledge: the session's epoch moves on (or it closes at -1) and the acknowledgements apply. */
  async acknowledge(p: Pick<ShareFetchParams, 'groupId' | 'memberId' | 'shareSessionEpoch' | 'topics' | 'connectionId' | 'renewAllowed'>): Promise<ShareFetchResult> {
    if (p.groupId === null || p.groupId === '' || p.memberId === null || p.memberId === '') {
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'GroupId and MemberId must be set', partitions: [] };
    }
    const groupId = p.groupId;
    const memberId = p.memberId;
    let closing: ShareSession | null = null;
    try {
      if (p.shareSessionEpoch === INITIAL_SHARE_EPOCH) throw new KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'ShareAcknowledge cannot open a share session (epoch 0)');
      if (p.shareSessionEpoch === FINAL_SHARE_EPOCH) closing = this.sessions.closing(groupId, memberId);
      else this.sessions.continue(groupId, memberId, p.shareSessionEpoch, p.connectionId);
    } catch (err) {
      const e = errorOf(err);
      return { errorCode: e.code, errorMessage: e.message, partitions: [] };
    }
    const results = new Map<string, SharePartitionResult>();
    await this.applyAcks(groupId, memberId, p.topics, p.renewAllowed, results);
    if (closing !== null) {
      this.sessions.remove(closing);
      await this.releaseSession(closing);
    }
    return { errorCode: 0, errorMessage: null, partitions: [...results.values()] };
  }
}
