// What request handlers ask about the cluster when the broker is one of an
// etcd cluster: the live brokers, the controller, and each partition's leader,
// replicas and ISR, all read from this broker's MetadataImage (never etcd).
// Without etcd.connect handlers have no ClusterView and answer as the single
// broker. Topics that are not in the image (a local topic left from before the
// broker joined a cluster) are answered as local partitions.
import type { MetadataImage } from '../../metadata/cluster/image.js';
import type { PartitionState } from '../../metadata/cluster/records.js';
import { ErrorCode } from '../protocol/errors.js';

export interface NodeEndpoint {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

/** Why this broker does not serve a partition, with what a client needs to re-route (KIP-951). */
export interface NotLeader {
  readonly errorCode: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

export class ClusterView {
  /** Whether this broker holds a live cluster session: before it registers, or once its session is lost, it leads nothing. */
  private liveCheck: () => boolean = () => false;

  constructor(
    private readonly image: MetadataImage,
    readonly nodeId: number,
    /** The listener name whose endpoints clients are given (the first advertised listener's). */
    private readonly listenerName: string,
  ) {}

  /**
   * Registered (true) or session lost (false). A broker without a live
   * session must not act as leader: another may already lead its partitions
   * (its lease ran out), or its previous run's registration still holds them.
   */
  setLive(live: boolean): void {
    this.liveCheck = () => live;
  }

  /**
   * Live for as long as `session` is: its state is read at each check, so a
   * lease past its lifetime stops leadership at once, even before the
   * session's own timer says so (a process resumed after a pause).
   */
  liveWhile(session: { readonly state: string }): void {
    this.liveCheck = () => session.state === 'live';
  }

  get isLive(): boolean {
    return this.liveCheck();
  }

  get controllerId(): number {
    return this.image.controllerId;
  }

  /** Live (registered) brokers with the endpoint of this broker's listener name. */
  brokers(): NodeEndpoint[] {
    const out: NodeEndpoint[] = [];
    for (const b of this.image.brokers()) {
      const e = b.endpoints.find((x) => x.name === this.listenerName) ?? b.endpoints[0];
      if (e !== undefined) out.push({ nodeId: b.nodeId, host: e.host, port: e.port, rack: b.rack });
    }
    return out;
  }

  /** The partition count of a cluster topic, undefined when the image has no such topic. */
  partitionCount(topic: string): number | undefined {
    return this.image.topic(topic)?.partitionCount;
  }

  endpoint(nodeId: number): NodeEndpoint | undefined {
    return this.brokers().find((b) => b.nodeId === nodeId);
  }

  /** The partition's state, or undefined when the topic is not a cluster topic (or has no such partition). */
  partition(topic: string, partition: number): PartitionState | undefined {
    const t = this.image.topic(topic);
    return t === undefined ? undefined : this.image.partition(t.topicId, partition);
  }

  /** The racks of a cluster partition's registered replicas that have one (the group metadata hash's), undefined for a local topic. */
  replicaRacks(topic: string, partition: number): string[] | undefined {
    const state = this.partition(topic, partition);
    if (state === undefined) return undefined;
    const racks: string[] = [];
    for (const r of state.replicas) {
      const rack = this.image.broker(r)?.rack ?? null;
      if (rack !== null) racks.push(rack);
    }
    return racks;
  }

  isClusterTopic(topic: string): boolean {
    return this.image.topic(topic) !== undefined;
  }

  /** Replicas that are not registered (Metadata's offline_replicas). */
  offlineReplicas(state: PartitionState): number[] {
    return state.replicas.filter((r) => this.image.broker(r) === undefined);
  }

  /**
   * Null when this broker leads the partition (or it is a local topic).
   * Otherwise NOT_LEADER_OR_FOLLOWER with the current leader (-1 while the
   * partition is offline), as Kafka answers a produce or fetch sent to a
   * broker that does not lead.
   */
  notLeader(topic: string, partition: number): NotLeader | null {
    const state = this.partition(topic, partition);
    if (state === undefined) {
      return this.isClusterTopic(topic) ? { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, leaderId: -1, leaderEpoch: -1 } : null;
    }
    if (state.leader === this.nodeId && this.isLive) return null;
    return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, ...leaderOf(state, this.nodeId, this.isLive) };
  }

  /**
   * The error for a partition this broker has no log of: as Kafka's
   * ReplicaManager answers, NOT_LEADER_OR_FOLLOWER when the image knows the
   * topic (its log is not open here yet, or no longer: clients refresh and
   * retry), UNKNOWN_TOPIC_OR_PARTITION when it does not.
   */
  notHostedError(topic: string): number {
    return this.isClusterTopic(topic) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }

  /**
   * The partition's current leader as this broker's image shows it (KIP-951's
   * CurrentLeader, Kafka's metadata cache lookup): this broker too when it
   * leads; undefined for a topic that is not a cluster topic (a local one).
   */
  currentLeader(topic: string, partition: number): { readonly leaderId: number; readonly leaderEpoch: number } | undefined {
    if (!this.isClusterTopic(topic)) return undefined;
    const state = this.partition(topic, partition);
    return state === undefined ? { leaderId: -1, leaderEpoch: -1 } : leaderOf(state, this.nodeId, this.isLive);
  }

  /** This broker's leader epoch of a partition it leads (0 for local topics). */
  leaderEpoch(topic: string, partition: number): number {
    return this.partition(topic, partition)?.leaderEpoch ?? 0;
  }
}

/** The image names this node, but a process without a session does not lead: to it the leader is unknown (clients retry). */
function leaderOf(state: PartitionState, nodeId: number, live: boolean): { leaderId: number; leaderEpoch: number } {
  return { leaderId: state.leader === nodeId && !live ? -1 : state.leader, leaderEpoch: state.leaderEpoch };
}
