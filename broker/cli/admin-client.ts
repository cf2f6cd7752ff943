// A small promise-based Kafka admin client for the operator's CLI. It speaks only
// the Kafka protocol (through the generated codecs), so it works against Sediment
// and Apache Kafka alike. Routing: metadata from any broker, partition requests
// to the leader, group requests to the coordinator, topic admin to the
// controller that Metadata names (in KRaft any broker forwards).
// Per-partition and per-resource errors are returned as codes, not thrown: the
// commands decide what is fatal. Transport failures and unsupported versions throw.
import { systemClock, type Clock } from '../common/clock.js';
import { ErrorCode, KafkaError, errorName, isRetriable } from '../protocol/errors.js';
import { ZERO_UUID, apis } from '../protocol/messages/index.js';
import { BrokerConnection, type ConnectionOptions } from './broker-connection.js';

export interface BrokerInfo {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export interface PartitionMetadata {
  readonly partition: number;
  readonly errorCode: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  /** Replicas whose broker is not live (Metadata v5+'s offline_replicas). */
  readonly offlineReplicas: readonly number[];
}

export interface TopicMetadata {
  readonly name: string;
  readonly topicId: string;
  readonly errorCode: number;
  readonly isInternal: boolean;
  readonly partitions: readonly PartitionMetadata[];
}

export interface ClusterMetadata {
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly brokers: readonly BrokerInfo[];
  readonly topics: readonly TopicMetadata[];
}

export interface ResultError {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface NewTopic {
  readonly name: string;
  /** -1: the broker's default (CreateTopics v4+). */
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly configs: ReadonlyMap<string, string>;
}

export interface ConfigEntry {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  readonly isDefault: boolean;
  /** Kafka's ConfigSource: 1 DYNAMIC_TOPIC_CONFIG, 4 STATIC_BROKER_CONFIG, 5 DEFAULT_CONFIG, ... */
  readonly source: number;
  readonly isSensitive: boolean;
}

export const ConfigSource = { UNKNOWN: 0, DYNAMIC_TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5, DYNAMIC_BROKER_LOGGER_CONFIG: 6, CLIENT_METRICS_CONFIG: 7, GROUP_CONFIG: 8 } as const;

const RESOURCE_TYPE_TOPIC = 2;

export interface ConfigAlteration {
  readonly name: string;
  readonly op: 'set' | 'delete';
  readonly value?: string;
}

/** ListOffsets timestamps with special meaning. */
export const OffsetSpec = {
  latest: -1n,
  earliest: -2n,
  maxTimestamp: -3n,
  earliestLocal: -4n,
  latestTiered: -5n,
} as const;

/** The first ListOffsets version that understands each special timestamp. */
export function listOffsetsMinVersion(timestamp: bigint, isolationLevel: number): number {
  if (timestamp === OffsetSpec.latestTiered) return 9;
  if (timestamp === OffsetSpec.earliestLocal) return 8;
  if (timestamp === OffsetSpec.maxTimestamp) return 7;
  return isolationLevel === 1 ? 2 : 1;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface OffsetQuery extends TopicPartition {
  readonly timestamp: bigint;
}

export interface OffsetAnswer extends TopicPartition {
  readonly errorCode: number;
  /** -1 when the broker has no such offset (e.g. no record at or after the timestamp). */
  readonly offset: bigint;
  readonly timestamp: bigint;
}

export interface GroupDescription {
  readonly groupId: string;
  readonly errorCode: number;
  readonly state: string;
  readonly protocolType: string;
  readonly protocol: string;
  readonly members: readonly GroupMember[];
}

export interface GroupMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly assignment: Buffer;
}

export interface ListedGroup {
  readonly groupId: string;
  readonly protocolType: string;
  /** Empty when the broker's ListGroups version does not report it. */
  readonly state: string;
}

export interface CommittedOffset extends TopicPartition {
  readonly offset: bigint;
  readonly metadata: string | null;
  readonly errorCode: number;
}

export interface OffsetFetchResult {
  readonly errorCode: number;
  readonly offsets: readonly CommittedOffset[];
}

export interface PartitionError extends TopicPartition {
  readonly errorCode: number;
}

export interface AdminClientOptions extends ConnectionOptions {
  /** How long to retry retriable coordinator errors (COORDINATOR_NOT_AVAILABLE, LOAD_IN_PROGRESS). */
  readonly retryMs?: number;
  readonly clock?: Clock;
}

export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(s.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`invalid broker address '${s}' (expected host:port)`);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

function groupBy<T, K>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list === undefined) out.set(k, [it]);
    else list.push(it);
  }
  return out;
}

function byTopic<T extends TopicPartition>(items: readonly T[]): Map<string, T[]> {
  return groupBy(items, (i) => i.topic);
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class AdminClient {
  private readonly nodes = new Map<number, Promise<BrokerConnection>>();
  private brokers = new Map<number, BrokerInfo>();
  private metadataCache: ClusterMetadata | null = null;

  private constructor(
    private readonly bootstrap: BrokerConnection,
    private readonly options: AdminClientOptions,
  ) {}

  /** Connects to the first reachable address of a comma-separated bootstrap list. */
  static async connect(bootstrapServers: string, options: AdminClientOptions = {}): Promise<AdminClient> {
    const addresses = bootstrapServers.split(',').filter((s) => s.trim() !== '').map(parseHostPort);
    if (addresses.length === 0) throw new Error('no bootstrap server given');
    const errors: string[] = [];
    for (const a of addresses) {
      try {
        return new AdminClient(await BrokerConnection.connect(a.host, a.port, options), options);
      } catch (e) {
        errors.push(e instanceof Error ? e.message : String(e));
      }
    }
    throw new Error(errors.join('; '));
  }

  close(): void {
    this.bootstrap.close();
    for (const p of this.nodes.values()) p.then((c) => c.close(), () => undefined);
    this.nodes.clear();
  }

  /** Metadata for some topics, or every topic when `topics` is null. */
  async metadata(topics: readonly string[] | null): Promise<ClusterMetadata> {
    const { body } = await this.bootstrap.send(apis.Metadata, () => ({
      topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }), { min: 1 });
    const md: ClusterMetadata = {
      clusterId: body.clusterId,
      controllerId: body.controllerId,
      brokers: body.brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
      topics: body.topics.map((t) => ({
        name: t.name ?? '',
        topicId: t.topicId,
        errorCode: t.errorCode,
        isInternal: t.isInternal,
        partitions: t.partitions
          .map((p) => ({
            partition: p.partitionIndex,
            errorCode: p.errorCode,
            leader: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            replicas: p.replicaNodes,
            isr: p.isrNodes,
            offlineReplicas: p.offlineReplicas,
          }))
          .sort((a, b) => a.partition - b.partition),
      })),
    };
    for (const b of md.brokers) this.brokers.set(b.nodeId, b);
    this.metadataCache = md;
    return md;
  }

  /** A connection to a broker by node id (from the last Metadata). */
  async node(nodeId: number): Promise<BrokerConnection> {
    let p = this.nodes.get(nodeId);
    if (p === undefined) {
      if (!this.brokers.has(nodeId)) await this.metadata([]);
      const b = this.brokers.get(nodeId);
      if (b === undefined) throw new KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, `broker ${nodeId} is not in the cluster metadata`);
      p = BrokerConnection.connect(b.host, b.port, this.options);
      this.nodes.set(nodeId, p);
      p.catch(() => this.nodes.delete(nodeId));
    }
    return p;
  }

  private async controller(): Promise<BrokerConnection> {
    const md = this.metadataCache ?? (await this.metadata([]));
    return md.controllerId >= 0 && this.brokers.has(md.controllerId) ? this.node(md.controllerId) : this.bootstrap;
  }

  async allBrokers(): Promise<BrokerConnection[]> {
    const md = await this.metadata([]);
    return Promise.all(md.brokers.map((b) => this.node(b.nodeId)));
  }

  async createTopics(topics: readonly NewTopic[], validateOnly = false): Promise<Array<ResultError & { name: string; topicId: string }>> {
    const conn = await this.controller();
    const needsExplicit = topics.some((t) => t.numPartitions < 0 || t.replicationFactor < 0);
    const { body } = await conn.send(apis.CreateTopics, () => ({
      topics: topics.map((t) => ({
        name: t.name,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor,
        assignments: [],
        configs: [...t.configs].map(([name, value]) => ({ name, value })),
      })),
      timeoutMs: 30_000,
      validateOnly,
    }), needsExplicit ? { min: 4 } : {});
    return body.topics.map((t) => ({ name: t.name, topicId: t.topicId, errorCode: t.errorCode, errorMessage: t.errorMessage }));
  }

  async deleteTopics(names: readonly string[]): Promise<Array<ResultError & { name: string }>> {
    const conn = await this.controller();
    const { body } = await conn.send(apis.DeleteTopics, () => ({
      topics: names.map((name) => ({ name, topicId: ZERO_UUID })),
      topicNames: [...names],
      timeoutMs: 30_000,
    }));
    return body.responses.map((r) => ({ name: r.name ?? '', errorCode: r.errorCode, errorMessage: r.errorMessage }));
  }

  async createPartitions(topic: string, count: number): Promise<ResultError> {
    const conn = await this.controller();
    const { body } = await conn.send(apis.CreatePartitions, () => ({
      topics: [{ name: topic, count, assignments: null }],
      timeoutMs: 30_000,
      validateOnly: false,
    }));
    const r = body.results[0];
    return r === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'empty CreatePartitions response' } : r;
  }

  async describeTopicConfigs(topics: readonly string[]): Promise<Map<string, ResultError & { configs: ConfigEntry[] }>> {
    const { body } = await this.bootstrap.send(apis.DescribeConfigs, () => ({
      resources: topics.map((t) => ({ resourceType: RESOURCE_TYPE_TOPIC, resourceName: t, configurationKeys: null })),
      includeSynonyms: false,
      includeDocumentation: false,
    }));
    const out = new Map<string, ResultError & { configs: ConfigEntry[] }>();
    for (const r of body.results) {
      out.set(r.resourceName, {
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        configs: r.configs.map((c) => ({
          name: c.name,
          value: c.value,
          readOnly: c.readOnly,
          // v1+ (the only versions Kafka 4 defines) carry the source, not v0's isDefault.
          isDefault: c.configSource === ConfigSource.DEFAULT_CONFIG,
          source: c.configSource,
          isSensitive: c.isSensitive,
        })),
      });
    }
    return out;
  }

  async incrementalAlterTopicConfigs(topic: string, changes: readonly ConfigAlteration[]): Promise<ResultError> {
    const conn = await this.controller();
    const { body } = await conn.send(apis.IncrementalAlterConfigs, () => ({
      resources: [
        {
          resourceType: RESOURCE_TYPE_TOPIC,
          resourceName: topic,
          configs: changes.map((c) => ({ name: c.name, configOperation: c.op === 'set' ? 0 : 1, value: c.op === 'set' ? (c.value ?? '') : null })),
        },
      ],
      validateOnly: false,
    }));
    const r = body.responses[0];
    return r === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'empty IncrementalAlterConfigs response' } : r;
  }

  private async leaders(tps: readonly TopicPartition[]): Promise<Map<string, number>> {
    const topics = [...new Set(tps.map((t) => t.topic))];
    const md = await this.metadata(topics);
    const out = new Map<string, number>();
    for (const t of md.topics) for (const p of t.partitions) out.set(`${t.name}:${p.partition}`, p.errorCode === 0 ? p.leader : -1);
    return out;
  }

  /**
   * ListOffsets, each partition asked of its leader. A partition whose leader
   * cannot answer the needed version comes back with UNSUPPORTED_VERSION.
   */
  async listOffsets(queries: readonly OffsetQuery[], isolationLevel = 0): Promise<OffsetAnswer[]> {
    const leaders = await this.leaders(queries);
    const out: OffsetAnswer[] = [];
    const fail = (q: OffsetQuery, errorCode: number): void => {
      out.push({ topic: q.topic, partition: q.partition, errorCode, offset: -1n, timestamp: -1n });
    };
    // One request per (leader, needed version): a -5 query must not push a plain
    // -1 query onto a version the broker lacks.
    const batches = groupBy(queries, (q) => `${leaders.get(`${q.topic}:${q.partition}`) ?? -1}/${listOffsetsMinVersion(q.timestamp, isolationLevel)}`);
    await Promise.all(
      [...batches.values()].map(async (batch) => {
        const first = batch[0] as OffsetQuery;
        const leader = leaders.get(`${first.topic}:${first.partition}`) ?? -1;
        if (leader < 0) {
          for (const q of batch) fail(q, leaders.has(`${q.topic}:${q.partition}`) ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          return;
        }
        const conn = await this.node(leader);
        const min = listOffsetsMinVersion(first.timestamp, isolationLevel);
        if (conn.versionFor(apis.ListOffsets, { min }) === null) {
          for (const q of batch) fail(q, ErrorCode.UNSUPPORTED_VERSION);
          return;
        }
        const { version, body } = await conn.send(apis.ListOffsets, () => ({
          replicaId: -1,
          isolationLevel,
          topics: [...byTopic(batch)].map(([name, qs]) => ({
            name,
            partitions: qs.map((q) => ({ partitionIndex: q.partition, currentLeaderEpoch: -1, timestamp: q.timestamp, maxNumOffsets: 1 })),
          })),
          timeoutMs: 30_000,
        }), { min });
        for (const t of body.topics) {
          for (const p of t.partitions) {
            const offset = p.offset;
            out.push({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode, offset, timestamp: p.timestamp });
          }
        }
      }),
    );
    return out;
  }

  /** Bytes of each partition's log on its leader (DescribeLogDirs), summed over log dirs. */
  async describeLogDirSizes(tps: readonly TopicPartition[]): Promise<Map<string, bigint>> {
    const leaders = await this.leaders(tps);
    const out = new Map<string, bigint>();
    const byLeader = groupBy(tps, (tp) => leaders.get(`${tp.topic}:${tp.partition}`) ?? -1);
    await Promise.all(
      [...byLeader].map(async ([leader, list]) => {
        if (leader < 0) return;
        const conn = await this.node(leader);
        if (conn.versionFor(apis.DescribeLogDirs) === null) return;
        const { body } = await conn.send(apis.DescribeLogDirs, () => ({
          topics: [...byTopic(list)].map(([topic, ps]) => ({ topic, partitions: ps.map((p) => p.partition) })),
        }));
        for (const dir of body.results) {
          if (dir.errorCode !== 0) continue;
          for (const t of dir.topics) {
            for (const p of t.partitions) {
              if (p.isFutureKey) continue;
              const k = `${t.name}:${p.partitionIndex}`;
              out.set(k, (out.get(k) ?? 0n) + p.partitionSize);
            }
          }
        }
      }),
    );
    return out;
  }

  /** Retries retriable errors (a coordinator still loading or being elected) until retryMs passes. */
  private async retrying<T>(attempt: () => Promise<T>, codeOf: (t: T) => number): Promise<T> {
    const clock = this.options.clock ?? systemClock;
    const deadline = clock.now() + (this.options.retryMs ?? 15_000);
    for (let backoff = 50; ; backoff = Math.min(backoff * 2, 1000)) {
      const r = await attempt();
      const code = codeOf(r);
      if (code === ErrorCode.NONE || !isRetriable(code) || clock.now() + backoff > deadline) return r;
      await delay(backoff);
    }
  }

  /** The group's coordinator (FindCoordinator v0-3 by key, v4+ batched). */
  async coordinator(groupId: string): Promise<BrokerConnection> {
    const r = await this.retrying(
      async () => {
        const { version, body } = await this.bootstrap.send(apis.FindCoordinator, () => ({ key: groupId, keyType: 0, coordinatorKeys: [groupId] }));
        if (version < 4) return { errorCode: body.errorCode, errorMessage: body.errorMessage, nodeId: body.nodeId, host: body.host, port: body.port };
        const c = body.coordinators.find((x) => x.key === groupId) ?? body.coordinators[0];
        if (c === undefined) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'no coordinator in response', nodeId: -1, host: '', port: 0 };
        return c;
      },
      (x) => x.errorCode,
    );
    if (r.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(r.errorCode, `cannot find the coordinator of group '${groupId}': ${errorName(r.errorCode)}${r.errorMessage ? ` (${r.errorMessage})` : ''}`);
    }
    if (!this.brokers.has(r.nodeId)) this.brokers.set(r.nodeId, { nodeId: r.nodeId, host: r.host, port: r.port, rack: null });
    return this.node(r.nodeId);
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    const conn = await this.coordinator(groupId);
    return this.retrying(
      async () => {
        const { body } = await conn.send(apis.DescribeGroups, () => ({ groups: [groupId], includeAuthorizedOperations: false }));
        const g = body.groups[0];
        if (g === undefined) throw new Error(`empty DescribeGroups response for '${groupId}'`);
        return {
          groupId: g.groupId,
          errorCode: g.errorCode,
          state: g.groupState,
          protocolType: g.protocolType,
          protocol: g.protocolData,
          members: g.members.map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            assignment: m.memberAssignment,
          })),
        };
      },
      (g) => g.errorCode,
    );
  }

  /** Groups known to every broker (ListGroups is answered per coordinator). */
  async listGroups(): Promise<ListedGroup[]> {
    const conns = await this.allBrokers();
    const seen = new Map<string, ListedGroup>();
    for (const conn of conns) {
      const { body } = await conn.send(apis.ListGroups, () => ({ statesFilter: [], typesFilter: [] }));
      if (body.errorCode !== ErrorCode.NONE) {
        throw new KafkaError(body.errorCode, `ListGroups on ${conn.address} failed: ${errorName(body.errorCode)}`);
      }
      for (const g of body.groups) seen.set(g.groupId, { groupId: g.groupId, protocolType: g.protocolType, state: g.groupState });
    }
    return [...seen.values()].sort((a, b) => a.groupId.localeCompare(b.groupId));
  }

  /** Committed offsets of a group, for some topics or (null) all of them. */
  async offsetFetch(groupId: string, topics: readonly TopicPartition[] | null): Promise<OffsetFetchResult> {
    const conn = await this.coordinator(groupId);
    const wanted = topics === null ? null : [...byTopic(topics)].map(([name, ps]) => ({ name, topicId: ZERO_UUID, partitionIndexes: ps.map((p) => p.partition) }));
    return this.retrying(
      async () => {
        const { version, body } = await conn.send(apis.OffsetFetch, () => ({
          groupId,
          topics: wanted,
          groups: [{ groupId, memberId: null, memberEpoch: -1, topics: wanted }],
          requireStable: true,
        // v10 names topics by id only; this client works with names, which v9 still takes.
        }), { min: topics === null ? 2 : 1, max: 9 });
        let errorCode: number;
        let ts: ReadonlyArray<{ name: string; partitions: ReadonlyArray<{ partitionIndex: number; committedOffset: bigint; metadata: string | null; errorCode: number }> }>;
        if (version >= 8) {
          const g = body.groups.find((x) => x.groupId === groupId) ?? body.groups[0];
          errorCode = g?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
          ts = g?.topics ?? [];
        } else {
          errorCode = body.errorCode;
          ts = body.topics;
        }
        const offsets: CommittedOffset[] = [];
        for (const t of ts) {
          for (const p of t.partitions) {
            offsets.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset, metadata: p.metadata, errorCode: p.errorCode });
          }
        }
        return { errorCode, offsets };
      },
      (r) => r.errorCode,
    );
  }

  /** Commits offsets as an admin (generation -1, no member id): accepted only while the group is empty. */
  async offsetCommit(groupId: string, offsets: ReadonlyArray<TopicPartition & { offset: bigint }>): Promise<PartitionError[]> {
    const conn = await this.coordinator(groupId);
    const { body } = await conn.send(apis.OffsetCommit, () => ({
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [...byTopic(offsets)].map(([name, ps]) => ({
        name,
        topicId: ZERO_UUID,
        partitions: ps.map((p) => ({ partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: -1, committedMetadata: '' })),
      })),
      // v10 names topics by id only; this client works with names, which v9 still takes.
    }), { min: 2, max: 9 });
    return body.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode })));
  }

  async deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; errorCode: number }>> {
    const out: Array<{ groupId: string; errorCode: number }> = [];
    for (const groupId of groupIds) {
      const conn = await this.coordinator(groupId);
      const { body } = await conn.send(apis.DeleteGroups, () => ({ groupsNames: [groupId] }));
      for (const r of body.results) out.push({ groupId: r.groupId, errorCode: r.errorCode });
    }
    return out;
  }
}
