// Keeps this broker's local topic store and partition logs in step with the
// cluster image: every topic of the image is adopted locally (id, partition
// count, configs) and the logs of the partitions this broker is a replica of
// are opened; a local topic the image no longer has (deleted while this broker
// ran or was down) is deleted with its logs. An internal topic the image does
// not have (__remote_log_metadata, each broker's own) is left alone; one the
// image has (__consumer_offsets, __transaction_state) is the cluster's and
// replaces a local copy of another id (left from before the cluster had one).
// The log of a partition whose replicas no longer include this broker (moved
// away by a reassignment, also while this broker was down) is deleted. A
// deleted topic's remote data is deleted by one broker per partition (its
// leader as the last pass saw it, as Kafka's deleteRemoteLog), the other
// replicas only stop tiering it. Passes run one at a time, each over
// the whole image (level-triggered), skipping a topic whose image generation
// (record and partition states) is the one a previous pass brought in step
// and that the local store still holds with its id: a broker back into 3,000
// partitions of a 10,000-partition cluster gets thousands of watch events, and a pass per
// event over every partition was most of its start-up. Admin requests wait
// for the pass that makes their change visible (waitFor).
import type { Logger } from 'pino';
import type { MetadataImage } from '../../metadata/cluster/image.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { Scheduler } from '../common/scheduler.js';
import type { BrokerTopics } from '../topic-service.js';

interface Waiter {
  readonly done: () => boolean;
  readonly resolve: () => void;
}

export class TopicSync {
  private running: Promise<void> | null = null;
  private again = false;
  private readonly waiters = new Set<Waiter>();
  private readonly passListeners: Array<(topics: ReadonlySet<string>) => void> = [];
  private beforeRemoval: (topic: string, partition: number) => void = () => undefined;
  private stopped = false;
  /** Topic name -> the id and image generation a pass brought the local topic in step with. */
  private readonly inStep = new Map<string, { readonly topicId: string; readonly generation: number }>();
  /** Topic id -> each partition's leader and replicas as the last pass saw them: who deletes the remote data once the topic is gone. */
  private readonly lastSeen = new Map<string, ReadonlyArray<{ readonly leader: number; readonly replicas: readonly number[] } | undefined>>();

  constructor(
    private readonly local: BrokerTopics,
    private readonly image: MetadataImage,
    private readonly nodeId: number,
    private readonly scheduler: Scheduler,
    private readonly log: Logger,
  ) {}

  /** The image changed: run a pass (coalesced with one already running). */
  changed(): void {
    if (this.stopped) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Runs passes until none is pending; for start-up. */
  async syncNow(): Promise<void> {
    this.changed();
    while (this.running !== null) await this.running;
  }

  /** Resolves once `done()` holds after a pass; REQUEST_TIMED_OUT (retriable) after `timeoutMs`. */
  waitFor(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = this.scheduler.setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${what}: accepted by the cluster metadata but not yet visible on this broker after ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter: Waiter = {
        done,
        resolve: () => {
          this.scheduler.clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.add(waiter);
    });
  }

  /**
   * Called after every pass (the logs of the image's partitions are open): replication takes their roles, the coordinators follow leadership.
   * `topics`: the topics that pass brought in step (their record or a partition state changed since the pass before), the others are as they were.
   */
  onPass(listener: (topics: ReadonlySet<string>) => void): void {
    this.passListeners.push(listener);
  }

  /** Called before the log of a partition this broker no longer replicates is deleted (replication lets it go first). */
  beforeReplicaRemoved(fn: (topic: string, partition: number) => void): void {
    this.beforeRemoval = fn;
  }

  stop(): void {
    this.stopped = true;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      const topics = new Set<string>();
      try {
        await this.pass(topics);
      } catch (err) {
        // A log that cannot be opened (disk) is retried on the next change; the others went on.
        this.log.error({ err }, 'could not bring the local topics in step with the cluster metadata');
      }
      for (const l of this.passListeners) l(topics);
      for (const w of [...this.waiters]) {
        if (w.done()) {
          this.waiters.delete(w);
          w.resolve();
        }
      }
    } while (this.again && !this.stopped);
  }

  private async pass(topics: Set<string>): Promise<void> {
    const wanted = new Map(this.image.topics().map((t) => [t.name, t] as const));
    for (const local of this.local.store.list()) {
      const remote = wanted.get(local.name);
      if (this.local.isInternal(local.name) && remote === undefined) continue;
      if (remote !== undefined && remote.topicId === local.topicId) continue;
      this.log.info({ topic: local.name, topicId: local.topicId }, 'deleting the local topic: the cluster metadata no longer has it (with this id)');
      this.inStep.delete(local.name);
      topics.add(local.name);
      const seen = this.lastSeen.get(local.topicId);
      this.lastSeen.delete(local.topicId);
      await this.local.deleteTopic(local.name, (partition) => this.deletesRemoteData(seen?.[partition]));
    }
    for (const name of [...this.inStep.keys()]) if (!wanted.has(name)) this.inStep.delete(name);
    const ids = new Set([...wanted.values()].map((t) => t.topicId));
    for (const id of [...this.lastSeen.keys()]) if (!ids.has(id)) this.lastSeen.delete(id);
    for (const t of wanted.values()) {
      if (this.stopped) return;
      const generation = this.image.topicGeneration(t.topicId) ?? -1;
      this.lastSeen.set(
        t.topicId,
        Array.from({ length: t.partitionCount }, (_, i) => {
          const state = this.image.partition(t.topicId, i);
          return state === undefined ? undefined : { leader: state.leader, replicas: state.replicas };
        }),
      );
      const was = this.inStep.get(t.name);
      if (was !== undefined && was.topicId === t.topicId && was.generation === generation && this.local.store.get(t.name)?.topicId === t.topicId) continue;
      this.inStep.delete(t.name);
      topics.add(t.name);
      const changed = await this.local.adopt(
        { topicId: t.topicId, name: t.name, partitionCount: t.partitionCount, configs: t.configs },
        (i) => this.image.partition(t.topicId, i)?.replicas.includes(this.nodeId) ?? false,
      );
      if (changed) this.log.info({ topic: t.name, partitions: t.partitionCount }, 'topic taken from the cluster metadata');
      await this.removeStrayReplicas(t.name, t.topicId, t.partitionCount);
      this.inStep.set(t.name, { topicId: t.topicId, generation });
    }
  }

  /**
   * Whether this broker deletes a deleted topic's remote data of one partition
   * (`seen`: its state as the last pass saw it): as Kafka, its leader then;
   * with that leader gone from the image (or none), the registered replica with
   * the smallest id, so that data is not left behind. Unknown (this broker never
   * saw the topic in this process, e.g. deleted while it was down): not this
   * broker, its leader did.
   */
  private deletesRemoteData(seen: { readonly leader: number; readonly replicas: readonly number[] } | undefined): boolean {
    if (seen === undefined) return false;
    if (seen.leader >= 0 && this.image.broker(seen.leader) !== undefined) return seen.leader === this.nodeId;
    const live = seen.replicas.filter((r) => this.image.broker(r) !== undefined);
    return live.length > 0 && Math.min(...live) === this.nodeId;
  }

  /** Deletes the local logs of partitions whose replicas (the image's) no longer include this broker. */
  private async removeStrayReplicas(topic: string, topicId: string, partitionCount: number): Promise<void> {
    for (let i = 0; i < partitionCount; i++) {
      const state = this.image.partition(topicId, i);
      // No state: a store-side partial write, not a decision to move the partition away.
      if (state === undefined || state.replicas.includes(this.nodeId) || this.local.partitionLog(topic, i) === undefined) continue;
      this.beforeRemoval(topic, i);
      if (await this.local.removeReplica(topic, i)) {
        this.log.info({ topic, partition: i, replicas: state.replicas }, 'deleted the local replica: this broker is no longer one of the partition\'s replicas');
      }
    }
  }
}
