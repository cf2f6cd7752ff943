// A broker's in-memory image of the cluster metadata: built from a snapshot,
// advanced by the watch's changes, read by request handlers (never the store).
// Pure data structure: no I/O, no timers.
import type {
  ConfigResource,
  ControllerRecord,
  MetadataChange,
  MetadataSnapshot,
  PartitionState,
  RegisteredBroker,
  TopicPartitionRef,
  TopicRecord,
} from './records.js';

function configScope(resource: ConfigResource): string {
  switch (resource.type) {
    case 'cluster': return 'cluster';
    case 'broker': return `broker:${resource.nodeId}`;
    case 'group': return `group:${resource.groupId}`;
  }
}

const EMPTY_CONFIGS: ReadonlyMap<string, string> = new Map();

export class MetadataImage {
  private rev = 0n;
  private cluster: string | null = null;
  private controllerRecord: ControllerRecord | null = null;
  private readonly brokerMap = new Map<number, RegisteredBroker>();
  private readonly topicsByName = new Map<string, TopicRecord>();
  private readonly topicsById = new Map<string, TopicRecord>();
  private readonly partitionMap = new Map<string, Map<number, PartitionState>>();
  private readonly configMap = new Map<string, Map<string, string>>();
  /** Per topic id, a number that grows whenever its record or one of its partitions changes (never reused, also across reset). */
  private readonly topicChanges = new Map<string, number>();
  private changeCount = 0;

  static fromSnapshot(snapshot: MetadataSnapshot): MetadataImage {
    const image = new MetadataImage();
    image.reset(snapshot);
    return image;
  }

  /** The store revision this image reflects. */
  get revision(): bigint {
    return this.rev;
  }

  get clusterId(): string | null {
    return this.cluster;
  }

  /** The elected controller, null while there is none (between one's session end and the next election). */
  get controller(): ControllerRecord | null {
    return this.controllerRecord;
  }

  /** The controller's node id, -1 when there is none (Metadata's and DescribeCluster's controller_id). */
  get controllerId(): number {
    return this.controllerRecord?.nodeId ?? -1;
  }

  /** Replaces everything with a snapshot (start-up, and the reload after a compaction). */
  reset(snapshot: MetadataSnapshot): void {
    this.cluster = null;
    this.controllerRecord = null;
    this.brokerMap.clear();
    this.topicsByName.clear();
    this.topicsById.clear();
    this.partitionMap.clear();
    this.configMap.clear();
    this.topicChanges.clear();
    for (const r of snapshot.records) this.applyOne(r);
    this.rev = snapshot.revision;
  }

  /**
   * Applies one revision's changes. A revision at or below the image's is
   * ignored (false): after a reload, a watch may repeat what the snapshot had.
   */
  apply(revision: bigint, changes: readonly MetadataChange[]): boolean {
    if (revision <= this.rev) return false;
    for (const c of changes) this.applyOne(c);
    this.rev = revision;
    return true;
  }

  // ---- reads ----

  broker(nodeId: number): RegisteredBroker | undefined {
    return this.brokerMap.get(nodeId);
  }

  /** Registered (live) brokers by node id. */
  brokers(): RegisteredBroker[] {
    return [...this.brokerMap.values()].sort((a, b) => a.nodeId - b.nodeId);
  }

  topic(name: string): TopicRecord | undefined {
    return this.topicsByName.get(name);
  }

  topicById(topicId: string): TopicRecord | undefined {
    return this.topicsById.get(topicId);
  }

  topics(): TopicRecord[] {
    return [...this.topicsByName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Changes whenever the topic's record or any of its partition states changes
   * (undefined for an unknown id): a reader that handled one value of it has
   * nothing new to handle for that topic until it differs.
   */
  topicGeneration(topicId: string): number | undefined {
    return this.topicChanges.get(topicId);
  }

  partition(topicId: string, partition: number): PartitionState | undefined {
    const topic = this.topicsById.get(topicId);
    if (topic === undefined || partition < 0 || partition >= topic.partitionCount) return undefined;
    return this.partitionMap.get(topicId)?.get(partition);
  }

  /**
   * The partitions of a known topic, index = partition id, `undefined` where a
   * state is missing (possible only mid-way through a store-side partial write).
   * Partitions beyond the topic's partition count are not shown.
   */
  partitions(topicId: string): Array<PartitionState | undefined> {
    const topic = this.topicsById.get(topicId);
    if (topic === undefined) return [];
    const states = this.partitionMap.get(topicId);
    return Array.from({ length: topic.partitionCount }, (_, i) => states?.get(i));
  }

  /** Partitions whose leader is `nodeId`, in topic-name then partition order. */
  partitionsLedBy(nodeId: number): TopicPartitionRef[] {
    const out: TopicPartitionRef[] = [];
    for (const t of this.topics()) {
      this.partitions(t.topicId).forEach((s, partition) => {
        if (s?.leader === nodeId) out.push({ topicId: t.topicId, partition });
      });
    }
    return out;
  }

  configs(resource: ConfigResource): ReadonlyMap<string, string> {
    return this.configMap.get(configScope(resource)) ?? EMPTY_CONFIGS;
  }

  private applyOne(c: MetadataChange): void {
    switch (c.kind) {
      case 'cluster-id':
        this.cluster = c.clusterId;
        return;
      case 'controller':
        this.controllerRecord = c.controller;
        return;
      case 'broker':
        if (c.broker === null) this.brokerMap.delete(c.nodeId);
        else this.brokerMap.set(c.nodeId, c.broker);
        return;
      case 'topic': {
        const old = this.topicsByName.get(c.name);
        if (old !== undefined) {
          this.topicsById.delete(old.topicId);
          this.topicChanges.set(old.topicId, ++this.changeCount);
        }
        if (c.topic !== null) this.topicChanges.set(c.topic.topicId, ++this.changeCount);
        if (c.topic === null) {
          this.topicsByName.delete(c.name);
        } else {
          this.topicsByName.set(c.name, c.topic);
          this.topicsById.set(c.topic.topicId, c.topic);
        }
        return;
      }
      case 'partition': {
        this.topicChanges.set(c.topicId, ++this.changeCount);
        let states = this.partitionMap.get(c.topicId);
        if (c.state === null) {
          states?.delete(c.partition);
          if (states?.size === 0) this.partitionMap.delete(c.topicId);
          return;
        }
        if (states === undefined) {
          states = new Map();
          this.partitionMap.set(c.topicId, states);
        }
        states.set(c.partition, c.state);
        return;
      }
      case 'config': {
        const scope = configScope(c.resource);
        let map = this.configMap.get(scope);
        if (c.value === null) {
          map?.delete(c.name);
          if (map?.size === 0) this.configMap.delete(scope);
          return;
        }
        if (map === undefined) {
          map = new Map();
          this.configMap.set(scope, map);
        }
        map.set(c.name, c.value);
        return;
      }
    }
  }
}
