// The transaction coordinator (Kafka's TransactionCoordinator with the TV1
// protocol) for this single broker. Every state a transactional id reaches is
// appended to `__transaction_state` before it is acted on or answered;
// COMMIT/ABORT markers go straight into the involved partitions' local logs
// (no WriteTxnMarkers RPC: every partition is local). Start-up replays the
// topic and finishes the markers of transactions left in PrepareCommit or
// PrepareAbort. A scheduled check aborts transactions past their timeout
// (with an epoch bump, which fences the producer) and expires idle ids.
import type { Logger } from 'pino';
import { silentLogger } from '../common/logger.js';
import { systemClock, type Clock } from '../common/clock.js';
import { systemScheduler, type Scheduler, type TimerHandle } from '../common/scheduler.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { KeyedMutex } from '../group/keyed-mutex.js';
import { OffsetsTopicWriter, appendErrorCode, partitionForGroup, type CommittedWait, type OffsetsTopicLog } from '../group/offsets-topic.js';
import { decodeTxnRecord, encodeTxnRecord, encodeTxnTombstone } from './txn-records.js';
import {
  NO_PRODUCER_EPOCH,
  bumpedEpoch,
  newTxnMetadata,
  tpKey,
  transition,
  withPartitions,
  type TopicPartition,
  type TxnMetadata,
} from './txn-state.js';

export interface TxnCoordinatorConfig {
  /** transaction.state.log.num.partitions */
  readonly numPartitions: number;
  /** transaction.max.timeout.ms */
  readonly maxTimeoutMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  readonly abortTimedOutIntervalMs: number;
  /** transactional.id.expiration.ms */
  readonly idExpirationMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  readonly removeExpiredIntervalMs: number;
}

export const defaultTxnCoordinatorConfig: TxnCoordinatorConfig = {
  numPartitions: 50,
  maxTimeoutMs: 900_000,
  abortTimedOutIntervalMs: 10_000,
  idExpirationMs: 604_800_000,
  removeExpiredIntervalMs: 3_600_000,
};

export interface TxnMarker {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly type: 'COMMIT' | 'ABORT';
  readonly coordinatorEpoch: number;
}

export interface TxnCoordinatorOptions {
  /** `__transaction_state` (a compacted topic), or a memory log in tests. */
  readonly log: OffsetsTopicLog;
  /**
   * In a cluster: only the __transaction_state partitions loaded with
   * leadership (loadPartition / unloadPartition) are served. Alone (false),
   * every partition is loaded at start().
   */
  readonly partitioned?: boolean;
  /** In a cluster: a state record is answered once the ISR has it (TransactionStateManager.appendTransactionToLog appends with acks=all). */
  readonly committed?: CommittedWait;
  readonly producerIds: { nextProducerId(): Promise<bigint> };
  /** Appends a marker to a partition's log; UNKNOWN_TOPIC_OR_PARTITION when it is gone. */
  readonly writeMarker: (tp: TopicPartition, marker: TxnMarker) => Promise<void>;
  /** The `__consumer_offsets` partition of a group (AddOffsetsToTxn). */
  readonly offsetsPartitionFor?: (groupId: string) => number;
  /** Told once every marker of a transaction is written (pending transactional offsets). */
  readonly onTxnCompleted?: (producerId: bigint, committed: boolean) => Promise<void>;
  readonly config?: Partial<TxnCoordinatorConfig>;
  readonly clock?: Clock;
  readonly scheduler?: Scheduler;
  readonly logger?: Logger;
}

export interface ProducerIdAndEpoch {
  readonly errorCode: number;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

const OFFSETS_TOPIC = '__consumer_offsets';
/** The coordinator epoch alone (one coordinator, never fenced). */
const STANDALONE_COORDINATOR_EPOCH = 0;
const MARKER_RETRY_MS = 1000;

export class TxnCoordinator {
  readonly config: TxnCoordinatorConfig;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly writer: OffsetsTopicWriter;
  private readonly locks = new KeyedMutex();
  private readonly txns = new Map<string, TxnMetadata>();
  private readonly byProducerId = new Map<bigint, string>();
  private phase: 'loading' | 'active' | 'closed' = 'loading';
  private abortTimer: TimerHandle | null = null;
  private expireTimer: TimerHandle | null = null;
  private readonly running = new Set<Promise<unknown>>();
  private readonly partitioned: boolean;
  /** Partitioned mode: the partitions served, with a token telling one load from the next. */
  private readonly owned = new Map<number, { readonly state: 'loading' | 'loaded'; readonly token: number; readonly coordinatorEpoch: number }>();
  private nextLoadToken = 1;

  constructor(private readonly options: TxnCoordinatorOptions) {
    this.config = { ...defaultTxnCoordinatorConfig, ...options.config };
    this.clock = options.clock ?? systemClock;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.logger = options.logger ?? silentLogger();
    this.writer = new OffsetsTopicWriter(options.log, {}, options.committed);
    this.partitioned = options.partitioned ?? false;
  }

  partitionFor(transactionalId: string): number {
    return partitionForGroup(transactionalId, this.config.numPartitions);
  }

  /** The metadata of a transactional id (tests, tools). */
  describe(transactionalId: string): TxnMetadata | undefined {
    return this.serves(transactionalId) ? this.txns.get(transactionalId) : undefined;
  }

  get transactionalIds(): string[] {
    return [...this.txns.keys()];
  }

  /** Every transactional id's current metadata (ListTransactions). */
  allTransactions(): TxnMetadata[] {
    return [...this.txns.values()].filter((m) => this.serves(m.transactionalId));
  }

  /** Whether the coordinator is still replaying its log, serving, or shut down (the admin APIs). */
  get status(): 'loading' | 'active' | 'closed' {
    return this.phase;
  }

  /** Replays `__transaction_state`, completes transactions left half-ended, starts the scheduled checks. */
  async start(): Promise<void> {
    if (this.partitioned) {
      // Partitions come with leadership (loadPartition); until then every id answers NOT_COORDINATOR.
      this.phase = 'active';
      this.scheduleAbortCheck();
      this.scheduleExpiry();
      return;
    }
    let records = 0;
    const loaded = new Map<string, TxnMetadata>();
    for (let p = 0; p < this.config.numPartitions; p++) records += await this.replayPartition(p, loaded, () => true);
    for (const m of loaded.values()) this.setCurrent(m);
    this.phase = 'active';
    await this.completeHalfEnded(() => true);
    this.scheduleAbortCheck();
    this.scheduleExpiry();
    this.logger.info({ transactionalIds: this.txns.size, records }, 'transaction coordinator loaded');
  }

  /** Reads one partition's records into `into` while `current()` holds; returns how many records it read. */
  private async replayPartition(p: number, into: Map<string, TxnMetadata>, current: () => boolean): Promise<number> {
    let records = 0;
    for await (const raw of this.options.log.readAll(p)) {
      if (!current()) break;
      records++;
      if (raw.marker !== undefined) continue;
      try {
        const { transactionalId, metadata } = decodeTxnRecord(raw);
        if (metadata === null) into.delete(transactionalId);
        else into.set(transactionalId, metadata);
      } catch (err) {
        this.logger.warn({ err, partition: p }, 'skipping undecodable __transaction_state record');
      }
    }
    return records;
  }

  /** Writes the markers of transactions a previous coordinator left prepared but not complete. */
  private async completeHalfEnded(which: (transactionalId: string) => boolean): Promise<void> {
    for (const m of [...this.txns.values()]) {
      if (!which(m.transactionalId) || !this.serves(m.transactionalId)) continue;
      if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') {
        await this.locks.run(m.transactionalId, () => this.writeMarkersAndComplete(m));
      }
    }
  }

  /**
   * Partitioned mode: this broker became the leader of __transaction_state
   * partition `p`. Its ids answer COORDINATOR_LOAD_IN_PROGRESS until it is
   * replayed; then transactions left prepared are completed, as Kafka's
   * coordinator does after loading.
   */
  async loadPartition(p: number, coordinatorEpoch = STANDALONE_COORDINATOR_EPOCH): Promise<void> {
    if (!this.partitioned || this.phase === 'closed' || this.owned.has(p)) return;
    const token = this.nextLoadToken++;
    this.owned.set(p, { state: 'loading', token, coordinatorEpoch });
    const current = (): boolean => this.owned.get(p)?.token === token && this.phase !== 'closed';
    const loaded = new Map<string, TxnMetadata>();
    let records: number;
    try {
      records = await this.replayPartition(p, loaded, current);
    } catch (err) {
      this.logger.warn({ err, partition: p }, 'could not load __transaction_state partition; its transactional ids stay unavailable');
      if (current()) this.owned.delete(p);
      throw err;
    }
    if (!current()) return;
    for (const m of loaded.values()) this.setCurrent(m);
    this.owned.set(p, { state: 'loaded', token, coordinatorEpoch });
    this.logger.info({ partition: p, transactionalIds: loaded.size, records }, 'transaction coordinator loaded __transaction_state partition');
    const ofPartition = (id: string): boolean => this.partitionFor(id) === p;
    this.track(this.completeHalfEnded(ofPartition));
  }

  /** Partitioned mode: leadership of `p` went; its ids are forgotten here and answer NOT_COORDINATOR. */
  unloadPartition(p: number): void {
    if (!this.owned.delete(p)) return;
    for (const m of [...this.txns.values()]) {
      if (this.partitionFor(m.transactionalId) !== p) continue;
      this.txns.delete(m.transactionalId);
      if (this.byProducerId.get(m.producerId) === m.transactionalId) this.byProducerId.delete(m.producerId);
    }
    this.logger.info({ partition: p }, 'transaction coordinator unloaded __transaction_state partition');
  }

  /** The partitions loaded or loading (partitioned mode), for tests and tools. */
  ownedPartitions(): ReadonlyMap<number, 'loading' | 'loaded'> {
    return new Map([...this.owned].map(([p, l]) => [p, l.state] as const));
  }

  /**
   * The coordinator epoch its markers carry: the leader epoch of the id's
   * __transaction_state partition (as Kafka), so a partition leader refuses a
   * deposed coordinator's markers (TRANSACTION_COORDINATOR_FENCED). 0 alone.
   */
  private coordinatorEpochOf(transactionalId: string): number {
    return this.owned.get(this.partitionFor(transactionalId))?.coordinatorEpoch ?? STANDALONE_COORDINATOR_EPOCH;
  }

  /** Whether the id's partition is served here and loaded (always, alone). */
  private serves(transactionalId: string): boolean {
    return !this.partitioned || this.owned.get(this.partitionFor(transactionalId))?.state === 'loaded';
  }

  async close(): Promise<void> {
    this.phase = 'closed';
    if (this.abortTimer !== null) this.scheduler.clearTimeout(this.abortTimer);
    if (this.expireTimer !== null) this.scheduler.clearTimeout(this.expireTimer);
    this.abortTimer = this.expireTimer = null;
    await Promise.allSettled([...this.running]);
  }

  /** NONE when the id can be served here, else the code its answer carries. */
  unavailable(transactionalId: string): number {
    if (this.phase === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    if (this.phase === 'closed') return ErrorCode.NOT_COORDINATOR;
    if (!this.partitioned) return ErrorCode.NONE;
    switch (this.owned.get(this.partitionFor(transactionalId))?.state) {
      case 'loaded':
        return ErrorCode.NONE;
      case 'loading':
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      case undefined:
        return ErrorCode.NOT_COORDINATOR;
    }
  }

  // ================================================================ requests

  /** InitProducerId with a transactional id. `expected` is the producer's current id/epoch (KIP-360), or null. */
  async initProducerId(transactionalId: string, txnTimeoutMs: number, expected: { producerId: bigint; producerEpoch: number } | null): Promise<ProducerIdAndEpoch> {
    const fail = (errorCode: number): ProducerIdAndEpoch => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    const unavailable = this.unavailable(transactionalId);
    if (unavailable !== ErrorCode.NONE) return fail(unavailable);
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    if (txnTimeoutMs <= 0 || txnTimeoutMs > this.config.maxTimeoutMs) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    return this.locks.run(transactionalId, async () => {
      let m = this.txns.get(transactionalId);
      if (m === undefined) m = newTxnMetadata(transactionalId, await this.options.producerIds.nextProducerId(), txnTimeoutMs, this.clock.now());
      // Kafka's isValidProducerId: the epoch is checked when it is bumped below.
      if (
        expected !== null &&
        !(m.producerEpoch === NO_PRODUCER_EPOCH || expected.producerId === m.producerId || (expected.producerId === m.lastProducerId && bumpedEpoch(expected.producerEpoch) === null))
      ) {
        return fail(ErrorCode.PRODUCER_FENCED);
      }
      switch (m.state) {
        case 'PrepareCommit':
        case 'PrepareAbort':
        case 'PrepareEpochFence':
        case 'Dead':
          return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
        case 'Ongoing':
          // Fence the previous producer and abort its transaction; the client retries.
          await this.fenceAndAbort(m);
          return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
        default:
      }
      const now = this.clock.now();
      let producerId = m.producerId;
      let lastProducerId = m.lastProducerId;
      let producerEpoch: number;
      let lastProducerEpoch: number;
      if (m.producerEpoch !== NO_PRODUCER_EPOCH && bumpedEpoch(m.producerEpoch) === null && (expected === null || expected.producerEpoch === m.producerEpoch)) {
        // Epoch exhausted: rotate to a new producer id.
        lastProducerId = m.producerId;
        producerId = await this.options.producerIds.nextProducerId();
        producerEpoch = 0;
        lastProducerEpoch = expected === null ? NO_PRODUCER_EPOCH : m.producerEpoch;
      } else {
        const bumped = m.producerEpoch === NO_PRODUCER_EPOCH ? 0 : (bumpedEpoch(m.producerEpoch) ?? m.producerEpoch);
        if (expected === null) {
          producerEpoch = bumped;
          lastProducerEpoch = NO_PRODUCER_EPOCH;
        } else if (m.producerEpoch === NO_PRODUCER_EPOCH || expected.producerEpoch === m.producerEpoch) {
          producerEpoch = bumped;
          lastProducerEpoch = m.producerEpoch;
        } else if (expected.producerEpoch === m.lastProducerEpoch) {
          // A retry of a bump whose answer the producer missed: the same id and epoch again.
          producerEpoch = m.producerEpoch;
          lastProducerEpoch = m.lastProducerEpoch;
        } else {
          return fail(ErrorCode.PRODUCER_FENCED);
        }
      }
      const next = transition(m, 'Empty', {
        producerId,
        lastProducerId,
        producerEpoch,
        lastProducerEpoch,
        txnTimeoutMs,
        txnStartTimestampMs: -1,
        txnLastUpdateTimestampMs: now,
      });
      const code = await this.persist(next);
      if (code !== ErrorCode.NONE) return fail(code);
      return { errorCode: ErrorCode.NONE, producerId, producerEpoch };
    });
  }

  /** AddPartitionsToTxn (and AddOffsetsToTxn with the group's offsets partition): the error code for every partition. */
  async addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartition[]): Promise<number> {
    return this.withProducer(transactionalId, producerId, producerEpoch, async (m) => {
      if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort' || m.state === 'PrepareEpochFence') return ErrorCode.CONCURRENT_TRANSACTIONS;
      if (m.state === 'Dead') return ErrorCode.INVALID_TXN_STATE;
      if (m.state === 'Ongoing' && partitions.every((tp) => m.partitions.has(tpKey(tp.topic, tp.partition)))) return ErrorCode.NONE;
      const now = this.clock.now();
      const next = transition(m, 'Ongoing', {
        partitions: withPartitions(m, partitions),
        txnStartTimestampMs: m.state === 'Ongoing' ? m.txnStartTimestampMs : now,
        txnLastUpdateTimestampMs: now,
      });
      return this.persist(next);
    });
  }

  async addOffsets(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    const partition = this.options.offsetsPartitionFor?.(groupId);
    if (partition === undefined) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    return this.addPartitions(transactionalId, producerId, producerEpoch, [{ topic: OFFSETS_TOPIC, partition }]);
  }

  /** EndTxn: commits or aborts the ongoing transaction; answers once the markers are written. */
  async endTxn(transactionalId: string, producerId: bigint, producerEpoch: number, committed: boolean): Promise<number> {
    return this.withProducer(transactionalId, producerId, producerEpoch, async (m) => {
      switch (m.state) {
        case 'Ongoing':
          return this.endOngoing(m, committed);
        case 'CompleteCommit':
          return committed ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE;
        case 'CompleteAbort':
          return committed ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE;
        case 'PrepareCommit':
          return committed ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE;
        case 'PrepareAbort':
          return committed ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS;
        case 'PrepareEpochFence':
          return ErrorCode.CONCURRENT_TRANSACTIONS;
        default:
          return ErrorCode.INVALID_TXN_STATE;
      }
    });
  }

  /**
   * Whether a producer's transactional batch may be appended to a partition:
   * its transaction must be ongoing with the partition added (Kafka's
   * produce-side verification, INVALID_TXN_STATE), with the current epoch
   * (else PRODUCER_FENCED).
   */
  verifyProduce(producerId: bigint, producerEpoch: number, topic: string, partition: number): number {
    const id = this.byProducerId.get(producerId);
    // In a cluster the producer's coordinator may be another broker: only a producer coordinated here can be
    // checked (as Kafka with transaction.partition.verification.enable=false for the others).
    if (this.partitioned && id === undefined) return ErrorCode.NONE;
    const m = id === undefined ? undefined : this.txns.get(id);
    if (m === undefined || m.producerId !== producerId) return ErrorCode.INVALID_TXN_STATE;
    // As the coordinator answers Kafka's verification (AddPartitionsToTxn verifyOnly): another epoch is fenced.
    if (producerEpoch !== m.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (m.state !== 'Ongoing' || !m.partitions.has(tpKey(topic, partition))) return ErrorCode.INVALID_TXN_STATE;
    return ErrorCode.NONE;
  }

  /**
   * TxnOffsetCommit's precondition: the producer owns the id with its current
   * epoch and the group's offsets partition is in its ongoing transaction.
   */
  verifyTxnOffsetCommit(transactionalId: string, producerId: bigint, producerEpoch: number, offsetsPartition: number): number {
    // In a cluster the id's coordinator may be another broker: nothing to check here (as Kafka without KIP-890 verification).
    if (this.partitioned && this.phase === 'active' && !this.owned.has(this.partitionFor(transactionalId))) return ErrorCode.NONE;
    const unavailable = this.unavailable(transactionalId);
    if (unavailable !== ErrorCode.NONE) return unavailable;
    const m = this.txns.get(transactionalId);
    const invalid = this.checkProducer(m, producerId, producerEpoch);
    if (invalid !== ErrorCode.NONE || m === undefined) return invalid;
    if (m.state !== 'Ongoing' || !m.partitions.has(tpKey(OFFSETS_TOPIC, offsetsPartition))) return ErrorCode.INVALID_TXN_STATE;
    return ErrorCode.NONE;
  }

  // ================================================================ internals

  /**
   * Runs `fn` under the transactional id's lock with its metadata, once the
   * coordinator is available and the producer id and epoch are the current ones;
   * otherwise answers the error.
   */
  private async withProducer(transactionalId: string, producerId: bigint, producerEpoch: number, fn: (m: TxnMetadata) => Promise<number>): Promise<number> {
    const unavailable = this.unavailable(transactionalId);
    if (unavailable !== ErrorCode.NONE) return unavailable;
    return this.locks.run(transactionalId, async () => {
      const m = this.txns.get(transactionalId);
      const invalid = this.checkProducer(m, producerId, producerEpoch);
      if (invalid !== ErrorCode.NONE || m === undefined) return invalid;
      return fn(m);
    });
  }

  private checkProducer(m: TxnMetadata | undefined, producerId: bigint, producerEpoch: number): number {
    if (m === undefined || m.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (m.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    return ErrorCode.NONE;
  }

  /** Appends `next` to the log, then makes it current. Returns the error a client should see. */
  private async persist(next: TxnMetadata): Promise<number> {
    try {
      await this.writer.append(this.partitionFor(next.transactionalId), [encodeTxnRecord(next)]);
    } catch (err) {
      this.logger.warn({ err, transactionalId: next.transactionalId }, 'failed to persist transaction state');
      return appendErrorCode(err);
    }
    this.setCurrent(next);
    return ErrorCode.NONE;
  }

  private setCurrent(m: TxnMetadata): void {
    const previous = this.txns.get(m.transactionalId);
    if (previous !== undefined && previous.producerId !== m.producerId) this.byProducerId.delete(previous.producerId);
    this.txns.set(m.transactionalId, m);
    this.byProducerId.set(m.producerId, m.transactionalId);
  }

  private async endOngoing(m: TxnMetadata, committed: boolean): Promise<number> {
    const prepared = transition(m, committed ? 'PrepareCommit' : 'PrepareAbort', { txnLastUpdateTimestampMs: this.clock.now() });
    const code = await this.persist(prepared);
    if (code !== ErrorCode.NONE) return code;
    await this.writeMarkersAndComplete(prepared);
    return ErrorCode.NONE;
  }

  /** Bumps the epoch (PrepareEpochFence, in memory only, as Kafka) and aborts with it. Runs under the id's lock. */
  private async fenceAndAbort(m: TxnMetadata): Promise<void> {
    const epoch = bumpedEpoch(m.producerEpoch) ?? m.producerEpoch;
    const fenced = transition(m, 'PrepareEpochFence', { producerEpoch: epoch, lastProducerEpoch: NO_PRODUCER_EPOCH });
    this.setCurrent(fenced);
    const prepared = transition(fenced, 'PrepareAbort', { txnLastUpdateTimestampMs: this.clock.now() });
    const code = await this.persist(prepared);
    if (code !== ErrorCode.NONE) {
      this.setCurrent(m);
      return;
    }
    await this.writeMarkersAndComplete(prepared);
  }

  /** Writes the markers of a PrepareCommit/PrepareAbort transaction, then its Complete state. Retries later on failure. */
  private async writeMarkersAndComplete(m: TxnMetadata): Promise<void> {
    const committed = m.state === 'PrepareCommit';
    const marker: TxnMarker = { producerId: m.producerId, producerEpoch: m.producerEpoch, type: committed ? 'COMMIT' : 'ABORT', coordinatorEpoch: this.coordinatorEpochOf(m.transactionalId) };
    try {
      for (const tp of m.partitions.values()) {
        try {
          await this.options.writeMarker(tp, marker);
        } catch (err) {
          if (!(err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) throw err;
          this.logger.info({ topic: tp.topic, partition: tp.partition }, 'partition gone: no transaction marker written');
        }
      }
      await this.options.onTxnCompleted?.(m.producerId, committed);
    } catch (err) {
      this.logger.warn({ err, transactionalId: m.transactionalId }, 'writing transaction markers failed; retrying');
      this.retryLater(m.transactionalId);
      return;
    }
    const done = transition(m, committed ? 'CompleteCommit' : 'CompleteAbort', { txnLastUpdateTimestampMs: this.clock.now() });
    if ((await this.persist(done)) !== ErrorCode.NONE) this.retryLater(m.transactionalId);
  }

  private retryLater(transactionalId: string): void {
    if (this.phase === 'closed') return;
    this.scheduler.setTimeout(() => {
      this.track(
        this.locks.run(transactionalId, async () => {
          const m = this.txns.get(transactionalId);
          if (this.phase === 'active' && m !== undefined && this.serves(transactionalId) && (m.state === 'PrepareCommit' || m.state === 'PrepareAbort')) await this.writeMarkersAndComplete(m);
        }),
      );
    }, MARKER_RETRY_MS);
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((err: unknown) => this.logger.warn({ err }, 'transaction coordinator task failed'));
    this.running.add(t);
    void t.finally(() => this.running.delete(t));
  }

  private scheduleAbortCheck(): void {
    if (this.phase !== 'active') return;
    this.abortTimer = this.scheduler.setTimeout(() => {
      this.abortTimer = null;
      this.track(this.abortTimedOutTransactions().finally(() => this.scheduleAbortCheck()));
    }, this.config.abortTimedOutIntervalMs);
  }

  private scheduleExpiry(): void {
    if (this.phase !== 'active') return;
    this.expireTimer = this.scheduler.setTimeout(() => {
      this.expireTimer = null;
      this.track(this.expireTransactionalIds().finally(() => this.scheduleExpiry()));
    }, this.config.removeExpiredIntervalMs);
  }

  /** Aborts, with an epoch bump, every Ongoing transaction older than its timeout. */
  async abortTimedOutTransactions(): Promise<void> {
    const now = this.clock.now();
    for (const m of [...this.txns.values()]) {
      if (m.state !== 'Ongoing' || m.txnStartTimestampMs + m.txnTimeoutMs >= now || !this.serves(m.transactionalId)) continue;
      await this.locks.run(m.transactionalId, async () => {
        const current = this.txns.get(m.transactionalId);
        if (this.phase !== 'active' || current === undefined || current.state !== 'Ongoing' || current.txnStartTimestampMs + current.txnTimeoutMs >= this.clock.now()) return;
        this.logger.info({ transactionalId: current.transactionalId, producerId: current.producerId }, 'aborting timed-out transaction');
        await this.fenceAndAbort(current);
      });
    }
  }

  /** Removes (tombstones) ids idle in Empty/CompleteCommit/CompleteAbort for transactional.id.expiration.ms. */
  async expireTransactionalIds(): Promise<void> {
    const now = this.clock.now();
    for (const m of [...this.txns.values()]) {
      if (!(m.state === 'Empty' || m.state === 'CompleteCommit' || m.state === 'CompleteAbort')) continue;
      if (m.txnLastUpdateTimestampMs + this.config.idExpirationMs > now || !this.serves(m.transactionalId)) continue;
      await this.locks.run(m.transactionalId, async () => {
        const current = this.txns.get(m.transactionalId);
        if (current !== m) return;
        try {
          await this.writer.append(this.partitionFor(m.transactionalId), [encodeTxnTombstone(m.transactionalId)]);
        } catch (err) {
          this.logger.warn({ err, transactionalId: m.transactionalId }, 'failed to expire transactional id');
          return;
        }
        this.txns.delete(m.transactionalId);
        if (this.byProducerId.get(m.producerId) === m.transactionalId) this.byProducerId.delete(m.producerId);
      });
    }
  }
}
