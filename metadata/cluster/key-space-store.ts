// The record-level operations of the port written once, over a minimal
// revisioned key space (get, range, and a commit guarded by mod revisions) that
// etcd and the in-memory twin both provide. So the two stores share every
// fencing rule and differ only in transport, leases and watches.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { IncompatibleLayoutError, InconsistentClusterIdError } from './errors.js';
import {
  CLUSTER_ID_KEY,
  CONTROLLER_KEY,
  LAYOUT_KEY,
  PRODUCER_IDS_KEY,
  brokerKey,
  configKey,
  decodeEntry,
  decodeLayout,
  decodeProducerIds,
  encodeBroker,
  encodeController,
  encodeLayout,
  encodePartition,
  encodeProducerIds,
  encodeTopic,
  isInvalid,
  partitionKey,
  partitionsPrefix,
  topicKey,
} from './layout.js';
import { initialPartitionState, nextPartitionState } from './partition-update.js';
import {
  LAYOUT_VERSION,
  type BrokerRegistration,
  type ConfigResource,
  type ControllerRecord,
  type MetadataChange,
  type MetadataSnapshot,
  type PartitionProposal,
  type PartitionState,
  type RegisteredBroker,
  type TopicPartitionRef,
  type TopicRecord,
} from './records.js';
import type { BrokerSession, ClusterMetadataStore, InitializeOptions, MetadataWatch, SessionOptions, WatchListener } from './store.js';

export interface KvEntry {
  readonly key: string;
  readonly value: string;
  readonly createRevision: bigint;
  readonly modRevision: bigint;
}

/** A change as a watch sees it; value null: deleted. */
export interface KvEvent {
  readonly key: string;
  readonly value: string | null;
  readonly createRevision: bigint;
  readonly modRevision: bigint;
}

export type KvOp =
  | { readonly type: 'put'; readonly key: string; readonly value: string; readonly lease?: LeaseId }
  | { readonly type: 'delete'; readonly key: string; readonly prefix?: boolean };

/** The key must still have this mod revision (0: must not exist). */
export interface KvGuard {
  readonly key: string;
  readonly modRevision: bigint;
}

/** A lease as the store names it: a number in the twin, etcd's int64 as a decimal string. */
export type LeaseId = number | string;

export interface KeySpace {
  get(key: string): Promise<KvEntry | undefined>;
  /** Keys under the prefix ('' = all), sorted, with the revision they were read at. */
  range(prefix: string): Promise<{ revision: bigint; entries: KvEntry[] }>;
  /** Applies ops atomically if every guard holds: the commit's revision, or undefined when a guard failed. */
  commitIf(guards: readonly KvGuard[], ops: readonly KvOp[]): Promise<bigint | undefined>;
}

/** Fewer than etcd's default --max-txn-ops (128), so one transaction never hits the limit. */
const MAX_OPS_PER_TXN = 100;
/** Retries of a read-check-commit whose guard lost a race (each retry re-reads). */
const MAX_CAS_ATTEMPTS = 20;

export abstract class KeySpaceStore implements ClusterMetadataStore {
  abstract readonly description: string;
  protected abstract keySpace(): KeySpace;
  abstract registerBroker(registration: BrokerRegistration, options: SessionOptions): Promise<BrokerSession>;
  abstract watch(afterRevision: bigint, listener: WatchListener): MetadataWatch;
  abstract close(): Promise<void>;
  /** The lease a session of this store holds, undefined for a session it did not create. */
  protected abstract leaseOf(session: BrokerSession): LeaseId | undefined;

  async initialize(options: InitializeOptions): Promise<string> {
    const ks = this.keySpace();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const layout = await ks.get(LAYOUT_KEY);
      if (layout === undefined) {
        const existing = await ks.range('');
        // Another broker's initialization may have committed between the two reads: read again.
        if (existing.entries.some((e) => e.key === LAYOUT_KEY)) continue;
        if (existing.entries.length > 0) {
          throw new IncompatibleLayoutError(`(none; ${existing.entries.length} other keys, e.g. ${existing.entries[0]!.key})`, LAYOUT_VERSION, this.description);
        }
        const clusterId = options.expectedClusterId ?? options.proposedClusterId;
        const rev = await ks.commitIf(
          [{ key: LAYOUT_KEY, modRevision: 0n }, { key: CLUSTER_ID_KEY, modRevision: 0n }],
          [{ type: 'put', key: LAYOUT_KEY, value: encodeLayout(LAYOUT_VERSION) }, { type: 'put', key: CLUSTER_ID_KEY, value: clusterId }],
        );
        if (rev !== undefined) return clusterId;
        continue; // another broker initialized it meanwhile: read what it wrote
      }
      const version = decodeLayout(layout.value);
      if (version !== LAYOUT_VERSION) throw new IncompatibleLayoutError(String(version), LAYOUT_VERSION, this.description);
      const id = await ks.get(CLUSTER_ID_KEY);
      if (id === undefined || id.value === '') {
        throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `The cluster metadata at ${this.description} has a layout key but no ${CLUSTER_ID_KEY}`);
      }
      if (options.expectedClusterId !== undefined && options.expectedClusterId !== id.value) {
        throw new InconsistentClusterIdError(id.value, options.expectedClusterId);
      }
      return id.value;
    }
    throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Could not initialize ${this.description}: too many concurrent changes`);
  }

  async load(): Promise<MetadataSnapshot> {
    const { revision, entries } = await this.keySpace().range('');
    const records: MetadataChange[] = [];
    const problems: string[] = [];
    for (const e of entries) {
      const change = decodeEntry(e.key, e.value, e.createRevision);
      if (isInvalid(change)) problems.push(change.invalid);
      else if (change !== null) records.push(change);
    }
    return { revision, records, problems };
  }

  async createTopic(topic: TopicRecord, partitions: readonly PartitionProposal[]): Promise<bigint> {
    if (partitions.length !== topic.partitionCount || topic.partitionCount < 1) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic ${topic.name}: ${partitions.length} partition states for a partition count of ${topic.partitionCount}`);
    }
    const states = partitions.map((p, i) => initialPartitionState(`${topic.name}-${i}`, p));
    const ks = this.keySpace();
    const nameFree: KvGuard = { key: topicKey(topic.name), modRevision: 0n };
    const partitionOps: KvOp[] = states.map((s, i) => ({ type: 'put', key: partitionKey(topic.topicId, i), value: encodePartition(s) }));
    const topicOp: KvOp = { type: 'put', key: topicKey(topic.name), value: encodeTopic(topic) };
    // Partitions first in batches when there are many; the topic record, written
    // last under the name guard, is what makes them visible.
    const written = await this.writeThenCommit(ks, [nameFree], partitionOps, topicOp);
    if (written !== undefined) return written;
    await ks.commitIf([], [{ type: 'delete', key: partitionsPrefix(topic.topicId), prefix: true }]);
    throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${topic.name}' already exists.`);
  }

  async deleteTopic(name: string, topicId: string): Promise<void> {
    const ks = this.keySpace();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const { entry } = await this.readTopic(ks, name, topicId);
      const rev = await ks.commitIf(
        [{ key: entry.key, modRevision: entry.modRevision }],
        [{ type: 'delete', key: entry.key }, { type: 'delete', key: partitionsPrefix(topicId), prefix: true }],
      );
      if (rev !== undefined) return;
    }
    throw this.tooManyRaces(`delete topic ${name}`);
  }

  async createPartitions(name: string, topicId: string, expectedCount: number, added: readonly PartitionProposal[]): Promise<TopicRecord> {
    const ks = this.keySpace();
    const { entry, topic } = await this.readTopic(ks, name, topicId);
    if (topic.partitionCount !== expectedCount) {
      throw new KafkaError(ErrorCode.INVALID_UPDATE_VERSION, `Topic ${name} has ${topic.partitionCount} partitions, not the ${expectedCount} the change is based on`);
    }
    if (added.length === 0) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic ${name}: no partitions to add`);
    const next: TopicRecord = { ...topic, partitionCount: topic.partitionCount + added.length };
    const ops: KvOp[] = added.map((p, i) => {
      const id = topic.partitionCount + i;
      return { type: 'put', key: partitionKey(topicId, id), value: encodePartition(initialPartitionState(`${name}-${id}`, p)) };
    });
    const rev = await this.writeThenCommit(ks, [{ key: entry.key, modRevision: entry.modRevision }], ops, { type: 'put', key: entry.key, value: encodeTopic(next) });
    if (rev === undefined) throw new KafkaError(ErrorCode.INVALID_UPDATE_VERSION, `Topic ${name} changed while its partitions were being added; retry`);
    return next;
  }

  async alterTopicConfigs(name: string, topicId: string, configs: Readonly<Record<string, string>>): Promise<TopicRecord> {
    const ks = this.keySpace();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const { entry, topic } = await this.readTopic(ks, name, topicId);
      const next: TopicRecord = { ...topic, configs: { ...configs } };
      const rev = await ks.commitIf([{ key: entry.key, modRevision: entry.modRevision }], [{ type: 'put', key: entry.key, value: encodeTopic(next) }]);
      if (rev !== undefined) return next;
    }
    throw this.tooManyRaces(`alter the configs of topic ${name}`);
  }

  async alterPartition(
    ref: TopicPartitionRef,
    expected: { readonly leaderEpoch: number; readonly partitionEpoch: number },
    proposal: PartitionProposal,
  ): Promise<PartitionState> {
    const ks = this.keySpace();
    const key = partitionKey(ref.topicId, ref.partition);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await ks.get(key);
      if (entry === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, `No partition ${ref.partition} of topic id ${ref.topicId}`);
      const decoded = decodeEntry(key, entry.value, entry.createRevision);
      if (decoded === null || isInvalid(decoded) || decoded.kind !== 'partition' || decoded.state === null) {
        throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Unreadable partition record: ${isInvalid(decoded) ? decoded.invalid : key}`);
      }
      const next = nextPartitionState(ref, decoded.state, expected, proposal);
      const rev = await ks.commitIf([{ key, modRevision: entry.modRevision }], [{ type: 'put', key, value: encodePartition(next) }]);
      if (rev !== undefined) return next;
      // Lost a race: the re-read fences this writer unless the other change kept both epochs.
    }
    throw this.tooManyRaces(`alter partition ${ref.topicId}-${ref.partition}`);
  }

  async alterConfigs(resource: ConfigResource, changes: Readonly<Record<string, string | null>>): Promise<bigint> {
    const ops: KvOp[] = [];
    for (const [name, value] of Object.entries(changes)) {
      if (name === '' || name.includes('/')) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid config name '${name}'`);
      const key = configKey(resource, name);
      ops.push(value === null ? { type: 'delete', key } : { type: 'put', key, value });
    }
    if (ops.length > MAX_OPS_PER_TXN) throw new KafkaError(ErrorCode.INVALID_REQUEST, `At most ${MAX_OPS_PER_TXN} config changes at once`);
    if (ops.length === 0) return 0n;
    return (await this.keySpace().commitIf([], ops)) ?? 0n;
  }

  async allocateProducerIds(nodeId: number, blockSize: number, atLeast = 0n): Promise<bigint> {
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Producer id block size ${blockSize} is not a positive integer`);
    const ks = this.keySpace();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await ks.get(PRODUCER_IDS_KEY);
      let next = 0n;
      if (current !== undefined) {
        try {
          next = decodeProducerIds(current.value).nextBlockStart;
        } catch (e) {
          // Never overwritten: a counter we cannot read could hand out ids twice.
          throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Unreadable ${PRODUCER_IDS_KEY} key at ${this.description}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      const start = next > atLeast ? next : atLeast;
      const end = start + BigInt(blockSize);
      // Kafka's limit: a producer id is a non-negative int64.
      if (end > 0x7fffffffffffffffn) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'The producer id space is exhausted');
      const rev = await ks.commitIf(
        [{ key: PRODUCER_IDS_KEY, modRevision: current?.modRevision ?? 0n }],
        [{ type: 'put', key: PRODUCER_IDS_KEY, value: encodeProducerIds({ nextBlockStart: end, brokerId: nodeId, blockSize }) }],
      );
      if (rev !== undefined) return start;
      // Another broker took a block meanwhile: read the counter again.
    }
    throw this.tooManyRaces('allocate a producer id block');
  }

  async campaignController(session: BrokerSession): Promise<ControllerRecord | null> {
    const lease = this.leaseOf(session);
    if (lease === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `The session of node ${session.nodeId} was not created by ${this.description}`);
    const ks = this.keySpace();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (session.state !== 'live') throw new KafkaError(ErrorCode.NOT_CONTROLLER, `Node ${session.nodeId} cannot campaign: its session is ${session.state}`);
      const current = await ks.get(CONTROLLER_KEY);
      if (current !== undefined) {
        const held = this.controllerFrom(current);
        // An unreadable key is another version's: refused like any layout it does not know, never overwritten.
        if (held === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Unreadable ${CONTROLLER_KEY} key at ${this.description}: ${current.value}`);
        return held.nodeId === session.nodeId && held.brokerEpoch === session.brokerEpoch ? held : null;
      }
      const rev = await ks.commitIf(
        [{ key: CONTROLLER_KEY, modRevision: 0n }],
        [{ type: 'put', key: CONTROLLER_KEY, value: encodeController(session.nodeId, session.brokerEpoch), lease }],
      );
      if (rev !== undefined) return { nodeId: session.nodeId, brokerEpoch: session.brokerEpoch, controllerEpoch: rev };
      // Another broker won (or it just expired): read who holds it now.
    }
    throw this.tooManyRaces('campaign for controller');
  }

  async requestControlledShutdown(session: BrokerSession): Promise<void> {
    const lease = this.leaseOf(session);
    if (lease === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `The session of node ${session.nodeId} was not created by ${this.description}`);
    const ks = this.keySpace();
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (session.state !== 'live') throw new KafkaError(ErrorCode.STALE_BROKER_EPOCH, `Node ${session.nodeId}'s session is ${session.state}`);
      const entry = await ks.get(brokerKey(session.nodeId));
      // The key must still be this session's registration (created at its broker epoch).
      if (entry === undefined || entry.createRevision !== session.brokerEpoch) {
        throw new KafkaError(ErrorCode.STALE_BROKER_EPOCH, `Node ${session.nodeId} is no longer registered with broker epoch ${session.brokerEpoch}`);
      }
      const reg = this.registeredFrom(entry);
      if (reg.inControlledShutdown === true) return;
      const { brokerEpoch: _epoch, ...registration } = reg;
      const value = encodeBroker({ ...registration, inControlledShutdown: true });
      const rev = await ks.commitIf([{ key: entry.key, modRevision: entry.modRevision }], [{ type: 'put', key: entry.key, value, lease }]);
      if (rev !== undefined) return;
    }
    throw this.tooManyRaces(`mark node ${session.nodeId} as shutting down`);
  }

  async resignController(session: BrokerSession): Promise<void> {
    const ks = this.keySpace();
    const current = await ks.get(CONTROLLER_KEY);
    if (current === undefined) return;
    const held = this.controllerFrom(current);
    if (held?.nodeId !== session.nodeId || held.brokerEpoch !== session.brokerEpoch) return;
    await ks.commitIf([{ key: CONTROLLER_KEY, modRevision: current.modRevision }], [{ type: 'delete', key: CONTROLLER_KEY }]);
  }

  // ---- for the implementations ----

  private controllerFrom(entry: KvEntry): ControllerRecord | undefined {
    const decoded = decodeEntry(entry.key, entry.value, entry.createRevision);
    return decoded !== null && !isInvalid(decoded) && decoded.kind === 'controller' && decoded.controller !== null ? decoded.controller : undefined;
  }

  protected brokerKeyOf(nodeId: number): string {
    return brokerKey(nodeId);
  }

  protected encodeRegistration(reg: BrokerRegistration): string {
    return encodeBroker(reg);
  }

  /** The registration an existing broker key holds (for the duplicate-registration refusal). */
  protected registeredFrom(entry: KvEntry): RegisteredBroker {
    const decoded = decodeEntry(entry.key, entry.value, entry.createRevision);
    if (decoded !== null && !isInvalid(decoded) && decoded.kind === 'broker' && decoded.broker !== null) return decoded.broker;
    return { nodeId: -1, incarnationId: `(unreadable registration at ${entry.key})`, rack: null, endpoints: [], brokerEpoch: entry.createRevision };
  }

  /** Decodes one revision's events and hands them to the listener. */
  protected deliver(revision: bigint, events: readonly KvEvent[], listener: WatchListener): void {
    const changes: MetadataChange[] = [];
    for (const e of events) {
      const change = decodeEntry(e.key, e.value, e.createRevision);
      if (isInvalid(change)) listener.onInvalid?.(change.invalid);
      else if (change !== null) changes.push(change);
    }
    listener.onChanges(revision, changes);
  }

  private async readTopic(ks: KeySpace, name: string, topicId: string): Promise<{ entry: KvEntry; topic: TopicRecord }> {
    const entry = await ks.get(topicKey(name));
    const decoded = entry === undefined ? null : decodeEntry(entry.key, entry.value, entry.createRevision);
    if (entry === undefined || decoded === null || isInvalid(decoded) || decoded.kind !== 'topic' || decoded.topic === null || decoded.topic.topicId !== topicId) {
      throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, `Topic ${name} with id ${topicId} does not exist`);
    }
    return { entry, topic: decoded.topic };
  }

  /**
   * Writes `ops` and then `last` under `guards`: in one transaction when they
   * fit, else `ops` in batches (each under the guards, so a lost race stops
   * early) and `last` alone. Undefined when a guard failed.
   */
  private async writeThenCommit(ks: KeySpace, guards: readonly KvGuard[], ops: readonly KvOp[], last: KvOp): Promise<bigint | undefined> {
    if (ops.length + 1 <= MAX_OPS_PER_TXN) return ks.commitIf(guards, [...ops, last]);
    for (let i = 0; i < ops.length; i += MAX_OPS_PER_TXN) {
      if ((await ks.commitIf(guards, ops.slice(i, i + MAX_OPS_PER_TXN))) === undefined) return undefined;
    }
    return ks.commitIf(guards, [last]);
  }

  private tooManyRaces(what: string): KafkaError {
    return new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `Could not ${what}: the record kept changing (${MAX_CAS_ATTEMPTS} attempts)`);
  }
}
