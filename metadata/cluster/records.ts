// The records of the cluster metadata, as every broker's image holds them and as
// the store keeps them (docs/cluster-metadata.md shows their keys and JSON).
// Plain data: no I/O. Revisions are the store's (etcd's) global revision.

/** One listener of a registered broker (Kafka's BrokerRegistrationRequest Listener). */
export interface BrokerEndpoint {
  /** Listener name, e.g. PLAINTEXT. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly securityProtocol: string;
}

/** What a broker registers about itself (Kafka's RegisterBrokerRecord). */
export interface BrokerRegistration {
  readonly nodeId: number;
  /** Random per process start (Kafka's incarnationId): tells a restart from the same process. */
  readonly incarnationId: string;
  readonly rack: string | null;
  readonly endpoints: readonly BrokerEndpoint[];
  /**
   * Set by the broker on SIGTERM (Kafka's BrokerRegistration inControlledShutdown):
   * the controller moves its leadership elsewhere and takes it out of ISRs.
   */
  readonly inControlledShutdown?: boolean;
}

/** A registration as the store holds it. */
export interface RegisteredBroker extends BrokerRegistration {
  /**
   * Kafka's broker epoch: the store revision at which this registration was
   * created, so a later registration of the same node id has a larger epoch.
   */
  readonly brokerEpoch: bigint;
}

/** A topic (Kafka's TopicRecord plus its partition count and topic configs). */
export interface TopicRecord {
  readonly topicId: string;
  readonly name: string;
  readonly partitionCount: number;
  /** Topic config overrides (the keys Kafka's DescribeConfigs shows as DYNAMIC_TOPIC_CONFIG). */
  readonly configs: Readonly<Record<string, string>>;
}

/**
 * One partition's replicas and leadership (Kafka's PartitionRecord). Changed
 * only by compare-and-swap on leaderEpoch and partitionEpoch.
 */
export interface PartitionState {
  readonly replicas: readonly number[];
  /** -1: no leader (offline). */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  /** Bumped by the store on every change of this record (Kafka's partition epoch). */
  readonly partitionEpoch: number;
  /**
   * A reassignment in progress (Kafka's KIP-455 addingReplicas and
   * removingReplicas): `replicas` is then the target followed by the replicas
   * being removed; the adding ones are in `replicas` and join the ISR as they
   * catch up. Absent or empty: no reassignment.
   */
  readonly addingReplicas?: readonly number[];
  readonly removingReplicas?: readonly number[];
}

export interface TopicPartitionRef {
  readonly topicId: string;
  readonly partition: number;
}

/**
 * The elected controller (the `controller` key, bound to the controller's
 * broker lease, so it disappears when that broker's session ends).
 */
export interface ControllerRecord {
  readonly nodeId: number;
  /** The broker epoch of the registration that won the election. */
  readonly brokerEpoch: bigint;
  /**
   * The store revision that created the key: it rises with every election,
   * as Kafka's controller epoch does.
   */
  readonly controllerEpoch: bigint;
}

/** Where a dynamic config lives: one broker's, or the cluster-wide default. */
/** Dynamic configs: of one broker, of the cluster, or of one group (share group configs, Kafka's GROUP resource). */
export type ConfigResource = { readonly type: 'broker'; readonly nodeId: number } | { readonly type: 'cluster' } | { readonly type: 'group'; readonly groupId: string };

/**
 * One change, as a watch delivers it and as a snapshot lists the current
 * records (a snapshot holds only non-null values). `null` means deleted.
 */
export type MetadataChange =
  | { readonly kind: 'cluster-id'; readonly clusterId: string | null }
  | { readonly kind: 'broker'; readonly nodeId: number; readonly broker: RegisteredBroker | null }
  | { readonly kind: 'topic'; readonly name: string; readonly topic: TopicRecord | null }
  | { readonly kind: 'partition'; readonly topicId: string; readonly partition: number; readonly state: PartitionState | null }
  | { readonly kind: 'config'; readonly resource: ConfigResource; readonly name: string; readonly value: string | null }
  | { readonly kind: 'controller'; readonly controller: ControllerRecord | null };

/** Every record at one revision. */
export interface MetadataSnapshot {
  readonly revision: bigint;
  readonly records: readonly MetadataChange[];
  /** Keys whose values could not be decoded (left out of records), with the reason. */
  readonly problems: readonly string[];
}

/** The partition state a controller proposes; the store sets partitionEpoch. */
export interface PartitionProposal {
  readonly replicas: readonly number[];
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  /**
   * Absent: the reassignment in progress (if any) stays as it is, and then
   * `replicas` must be the current ones (leader and ISR changes). Given (empty
   * to clear): the reassignment's new adding / removing replicas.
   */
  readonly addingReplicas?: readonly number[];
  readonly removingReplicas?: readonly number[];
}

/** Whether a partition has a reassignment in progress. */
export function isReassigning(state: Pick<PartitionState, 'addingReplicas' | 'removingReplicas'>): boolean {
  return (state.addingReplicas?.length ?? 0) > 0 || (state.removingReplicas?.length ?? 0) > 0;
}

/** The layout this code writes and understands; anything else in the store is refused. */
export const LAYOUT_VERSION = 1;
