// Topics as a whole: the topic store (names, ids, partition counts, overrides)
// kept in step with the partition logs. Every change goes store first, then
// logs, so a crash between the two is repaired at start-up (logs are created
// for every stored partition; directories of unknown topics are not loaded).
import type { Logger } from 'pino';
import type { PartitionView, TopicService } from './broker-context.js';
import type { LogManager } from './log/log-manager.js';
import type { PartitionLog } from './log/partition-log.js';
import { LocalPartitionView, type RemoteTier } from './partition-view.js';
import type { TopicStore } from '../metadata/topic-store.js';
import type { CreateTopicRequest, MutationOptions, TopicRecord } from '../metadata/topics.js';
import type { AlterConfigOp } from '../metadata/config-alter.js';

/** What tiered storage needs to hear about partitions coming and going. */
export interface PartitionLifecycle {
  onPartitionAdded(log: PartitionLog, record: TopicRecord): void;
  /** `deletesRemote`: the partitions whose remote data this broker deletes (default: all; in a cluster, those it led). */
  onTopicDeleted(record: TopicRecord, logs: PartitionLog[], deletesRemote?: (partition: number) => boolean): Promise<void>;
  /** This broker no longer holds the partition (reassigned away): stop tiering it; its remote data stays. */
  onPartitionRemoved(log: PartitionLog): Promise<void>;
  onConfigChanged(log: PartitionLog, record: TopicRecord): void;
}

const viewKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class BrokerTopics implements TopicService {
  private readonly views = new Map<string, LocalPartitionView>();
  private remote: RemoteTier | null = null;
  private lifecycle: PartitionLifecycle | null = null;
  private epochSource: ((topic: string, partition: number) => number) | null = null;
  private readonly deletedListeners: ((record: TopicRecord) => void)[] = [];

  constructor(
    readonly store: TopicStore,
    private readonly logs: LogManager,
    private readonly internalTopics: ReadonlySet<string>,
    private readonly log: Logger,
  ) {}

  attachTiering(remote: RemoteTier, lifecycle: PartitionLifecycle): void {
    this.remote = remote;
    this.lifecycle = lifecycle;
    this.views.clear();
    for (const t of this.store.list()) {
      for (let i = 0; i < t.partitionCount; i++) {
        const l = this.logs.getLog(t.name, i);
        if (l !== undefined) lifecycle.onPartitionAdded(l, t);
      }
    }
  }

  /** In a cluster: the leader epoch of each partition (the image's), used for appends and answers. */
  setLeaderEpochSource(source: (topic: string, partition: number) => number): void {
    this.epochSource = source;
    this.views.clear();
  }

  /**
   * In a cluster: takes a topic record as the cluster holds it (id, partition
   * count, configs) into the local store, and opens the logs of the partitions
   * this broker is a replica of. Returns whether anything changed.
   */
  async adopt(record: TopicRecord, isReplica: (partition: number) => boolean): Promise<boolean> {
    const before = this.store.get(record.name);
    let changed = false;
    if (before === undefined || before.topicId !== record.topicId || before.partitionCount !== record.partitionCount || !sameConfigs(before.configs, record.configs)) {
      await this.store.adopt(record);
      changed = true;
      if (before !== undefined && !sameConfigs(before.configs, record.configs)) this.applyConfig(record);
    }
    const config = this.store.logConfig(record.name);
    for (let i = 0; i < record.partitionCount; i++) {
      if (!isReplica(i) || this.logs.getLog(record.name, i) !== undefined) continue;
      const l = await this.logs.getOrCreateLog(record.name, i, record.topicId, config);
      this.lifecycle?.onPartitionAdded(l, record);
      changed = true;
    }
    return changed;
  }

  /**
   * In a cluster: this broker is no longer a replica of the partition (a
   * reassignment moved it away): its local log is deleted (Kafka's StopReplica
   * with delete). Tiered data stays: it belongs to the partition, not to this
   * replica. Returns whether there was a log.
   */
  async removeReplica(name: string, partition: number): Promise<boolean> {
    const l = this.logs.getLog(name, partition);
    if (l === undefined) return false;
    this.views.delete(viewKey(name, partition));
    await this.lifecycle?.onPartitionRemoved(l);
    return this.logs.deleteLog(name, partition);
  }

  /**
   * Creates the logs of every stored partition that has none (start-up, and
   * repair after a crash); `only` limits it to some topics (in a cluster, the
   * topics each broker keeps for itself: the cluster's come from the image).
   */
  async ensureLogs(only: (name: string) => boolean = () => true): Promise<void> {
    for (const t of this.store.list()) if (only(t.name)) await this.openPartitions(t, 0);
  }

  partition(topic: string, partition: number): PartitionView | undefined {
    const k = viewKey(topic, partition);
    const cached = this.views.get(k);
    if (cached !== undefined) return cached;
    const l = this.logs.getLog(topic, partition);
    if (l === undefined) return undefined;
    const source = this.epochSource;
    const v = source === null ? new LocalPartitionView(l, this.remote) : new LocalPartitionView(l, this.remote, () => source(topic, partition));
    this.views.set(k, v);
    return v;
  }

  partitionLog(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.getLog(topic, partition);
  }

  isInternal(name: string): boolean {
    return this.internalTopics.has(name);
  }

  async createTopic(request: CreateTopicRequest, options: MutationOptions = {}): Promise<TopicRecord> {
    const record = await this.store.create(request, options);
    if (!options.validateOnly) await this.openPartitions(record, 0);
    return record;
  }

  /** Called once a topic is gone from the store (share groups drop it from their state metadata). */
  whenTopicDeleted(listener: (record: TopicRecord) => void): void {
    this.deletedListeners.push(listener);
  }

  /** `deletesRemote`: the partitions whose remote data this broker deletes (default: all; a cluster's topic sync names those this broker led). */
  async deleteTopic(name: string, deletesRemote?: (partition: number) => boolean): Promise<TopicRecord> {
    const record = await this.store.delete(name);
    for (const l of this.deletedListeners) l(record);
    const removed: PartitionLog[] = [];
    for (let i = 0; i < record.partitionCount; i++) {
      const l = this.logs.getLog(name, i);
      if (l !== undefined) removed.push(l);
      this.views.delete(viewKey(name, i));
    }
    // Remote objects first (they are found through the partitions' metadata), then local logs.
    if (this.lifecycle !== null) await this.lifecycle.onTopicDeleted(record, removed, deletesRemote);
    for (let i = 0; i < record.partitionCount; i++) await this.logs.deleteLog(name, i);
    return record;
  }

  async createPartitions(name: string, totalCount: number, options: MutationOptions = {}): Promise<TopicRecord> {
    const before = this.store.get(name)?.partitionCount ?? 0;
    const record = await this.store.createPartitions(name, totalCount, null, options);
    if (!options.validateOnly) await this.openPartitions(record, before);
    return record;
  }

  async alterConfigs(name: string, entries: readonly { name: string; value: string | null }[], options: MutationOptions = {}): Promise<TopicRecord> {
    const record = await this.store.alterConfigs(name, entries, options);
    if (!options.validateOnly) this.applyConfig(record);
    return record;
  }

  async incrementalAlterConfigs(name: string, ops: readonly AlterConfigOp[], options: MutationOptions = {}): Promise<TopicRecord> {
    const record = await this.store.incrementalAlterConfigs(name, ops, options);
    if (!options.validateOnly) this.applyConfig(record);
    return record;
  }

  /** The broker defaults changed (dynamic broker configs): every log takes its topic's config again. */
  reapplyConfigs(): void {
    for (const t of this.store.list()) this.applyConfig(t, false);
  }

  private applyConfig(record: TopicRecord, logIt = true): void {
    const config = this.store.logConfig(record.name);
    for (let i = 0; i < record.partitionCount; i++) {
      const l = this.logs.getLog(record.name, i);
      if (l === undefined) continue;
      l.updateConfig(config);
      this.lifecycle?.onConfigChanged(l, record);
    }
    if (logIt) this.log.info({ topic: record.name, configs: record.configs }, 'topic configs changed');
  }

  private async openPartitions(record: TopicRecord, from: number): Promise<void> {
    const config = this.store.logConfig(record.name);
    for (let i = from; i < record.partitionCount; i++) {
      const existed = this.logs.getLog(record.name, i) !== undefined;
      const l = await this.logs.getOrCreateLog(record.name, i, record.topicId, config);
      if (!existed) this.lifecycle?.onPartitionAdded(l, record);
    }
  }
}

function sameConfigs(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
