// `sediment topics`: create, describe, alter, delete and list topics in the
// style of kafka-topics.sh, over the Kafka protocol (any broker). --describe
// prints, per partition, kafka-topics' Leader (none when offline), Replicas and
// Isr, with Sediment's LeaderEpoch after Leader and Offline (the replicas whose
// broker is not live, from Metadata) after Isr; then the offsets a tiered log has (log start, local log start,
// high watermark, last stable, latest tiered) and local/remote segment counts
// and bytes: bytes from DescribeLogDirs, the rest from Sediment's HTTP listener
// when it answers (n/a otherwise).
import { ErrorCode, errorName } from '../protocol/errors.js';
import { AdminClient, ConfigSource, OffsetSpec, type OffsetQuery, type TopicMetadata } from './admin-client.js';
import {
  UsageError,
  parseArgs,
  parseKeyValue,
  processIo,
  usageText,
  type CliIo,
  type OptionSpecs,
  type ParsedArgs,
} from './args.js';
import { defaultHttpUrl, fetchPartitionStats, type PartitionStats } from './partition-stats.js';

export const topicsOptions: OptionSpecs = {
  'bootstrap-server': { kind: 'value', arg: 'host:port[,host:port]', help: 'the broker(s) to connect to (required)' },
  create: { kind: 'flag', help: 'create a topic' },
  describe: { kind: 'flag', help: 'describe one topic (--topic) or all' },
  alter: { kind: 'flag', help: 'add partitions (--partitions) or change configs (--config, --delete-config)' },
  delete: { kind: 'flag', help: 'delete a topic' },
  list: { kind: 'flag', help: 'list topic names' },
  topic: { kind: 'value', arg: 'name', help: 'the topic' },
  partitions: { kind: 'value', arg: 'n', help: 'partition count (create: default is the broker\'s num.partitions; alter: the new total)' },
  'replication-factor': { kind: 'value', arg: 'r', help: 'replication factor for --create (default: the broker\'s)' },
  config: { kind: 'multi', arg: 'key=value', help: 'a topic config for --create, or to SET with --alter' },
  'delete-config': { kind: 'multi', arg: 'key', help: 'a topic config override to remove with --alter' },
  'if-not-exists': { kind: 'flag', help: 'with --create: succeed if the topic exists' },
  'if-exists': { kind: 'flag', help: 'with --alter, --delete, --describe: succeed if the topic does not exist' },
  'exclude-internal': { kind: 'flag', help: 'with --list, --describe: leave out internal topics' },
  http: { kind: 'value', arg: 'url|none', help: 'Sediment HTTP listener for segment stats (default http://<bootstrap host>:9644)' },
  'timeout-ms': { kind: 'value', arg: 'ms', help: 'per-request timeout (default 30000)' },
  help: { kind: 'flag', help: 'print this help' },
};

const SYNOPSIS =
  'usage: sediment topics --bootstrap-server H:P (--create --topic T [--partitions N] [--replication-factor R] [--config k=v]...\n' +
  '       | --describe [--topic T] | --alter --topic T [--partitions N] [--config k=v]... [--delete-config k]...\n' +
  '       | --delete --topic T | --list)';

export type TopicsCommand =
  | { readonly kind: 'create'; readonly topic: string; readonly partitions: number; readonly replicationFactor: number; readonly configs: ReadonlyMap<string, string>; readonly ifNotExists: boolean }
  | { readonly kind: 'describe'; readonly topic: string | undefined; readonly http: string | null; readonly excludeInternal: boolean; readonly ifExists: boolean }
  | { readonly kind: 'alter'; readonly topic: string; readonly partitions: number | undefined; readonly set: ReadonlyMap<string, string>; readonly deleteConfigs: readonly string[]; readonly ifExists: boolean }
  | { readonly kind: 'delete'; readonly topic: string; readonly ifExists: boolean }
  | { readonly kind: 'list'; readonly excludeInternal: boolean };

export interface TopicsInvocation {
  readonly bootstrap: string;
  readonly timeoutMs: number;
  readonly command: TopicsCommand;
}

function configMap(values: readonly string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const v of values) {
    const [k, val] = parseKeyValue(v, '--config');
    m.set(k, val);
  }
  return m;
}

function onlyWith(a: ParsedArgs, allowed: readonly string[], action: string): void {
  const common = ['bootstrap-server', 'timeout-ms', action];
  for (const name of Object.keys(topicsOptions)) {
    if (a.has(name) && !common.includes(name) && !allowed.includes(name)) throw new UsageError(`--${name} cannot be used with --${action}`);
  }
}

export function parseTopicsArgs(argv: readonly string[]): TopicsInvocation {
  const a = parseArgs(argv, topicsOptions);
  const action = a.oneOf(['create', 'describe', 'alter', 'delete', 'list'], 'as the action');
  const bootstrap = a.required('bootstrap-server', 'to reach a broker');
  const timeoutMs = a.int('timeout-ms', 1) ?? 30_000;
  let command: TopicsCommand;
  switch (action) {
    case 'create': {
      onlyWith(a, ['topic', 'partitions', 'replication-factor', 'config', 'if-not-exists'], action);
      command = {
        kind: 'create',
        topic: a.required('topic', 'with --create'),
        partitions: a.int('partitions', 1, 2 ** 31 - 1) ?? -1,
        replicationFactor: a.int('replication-factor', 1, 32767) ?? -1,
        configs: configMap(a.all('config')),
        ifNotExists: a.has('if-not-exists'),
      };
      break;
    }
    case 'describe': {
      onlyWith(a, ['topic', 'http', 'exclude-internal', 'if-exists'], action);
      const http = a.value('http');
      command = {
        kind: 'describe',
        topic: a.value('topic'),
        http: http === 'none' ? null : (http ?? defaultHttpUrl(bootstrap)),
        excludeInternal: a.has('exclude-internal'),
        ifExists: a.has('if-exists'),
      };
      break;
    }
    case 'alter': {
      onlyWith(a, ['topic', 'partitions', 'config', 'delete-config', 'if-exists'], action);
      const partitions = a.int('partitions', 1, 2 ** 31 - 1);
      const set = configMap(a.all('config'));
      const deleteConfigs = a.all('delete-config');
      if (partitions === undefined && set.size === 0 && deleteConfigs.length === 0) {
        throw new UsageError('--alter needs --partitions, --config or --delete-config');
      }
      for (const k of deleteConfigs) if (set.has(k)) throw new UsageError(`config ${k} is both set and deleted`);
      command = { kind: 'alter', topic: a.required('topic', 'with --alter'), partitions, set, deleteConfigs, ifExists: a.has('if-exists') };
      break;
    }
    case 'delete':
      onlyWith(a, ['topic', 'if-exists'], action);
      command = { kind: 'delete', topic: a.required('topic', 'with --delete'), ifExists: a.has('if-exists') };
      break;
    default:
      onlyWith(a, ['exclude-internal'], action);
      command = { kind: 'list', excludeInternal: a.has('exclude-internal') };
  }
  return { bootstrap, timeoutMs, command };
}

/** What --describe knows about one partition; null fields print as n/a. */
export interface PartitionReport {
  readonly partition: number;
  /** -1: no leader (offline), printed as Kafka prints it: none. */
  readonly leader: number;
  /** -1: unknown (a broker answering Metadata below v7). */
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  /** Replicas whose broker is not live. */
  readonly offlineReplicas: readonly number[];
  readonly logStartOffset: bigint | null;
  readonly localLogStartOffset: bigint | null;
  readonly highWatermark: bigint | null;
  readonly lastStableOffset: bigint | null;
  readonly latestTieredOffset: bigint | null;
  readonly localSegments: bigint | null;
  readonly localBytes: bigint | null;
  readonly remoteSegments: bigint | null;
  readonly remoteBytes: bigint | null;
}

export interface TopicReport {
  readonly name: string;
  readonly topicId: string;
  readonly replicationFactor: number;
  /** Overrides only (DYNAMIC_TOPIC_CONFIG), sorted by name. */
  readonly configs: ReadonlyArray<readonly [string, string | null]>;
  readonly partitions: readonly PartitionReport[];
}

const na = (v: bigint | number | null): string => (v === null ? 'n/a' : String(v));

export function formatTopicReport(t: TopicReport): string {
  const configs = t.configs.map(([k, v]) => `${k}=${v ?? ''}`).join(',');
  const lines = [`Topic: ${t.name}\tTopicId: ${t.topicId}\tPartitionCount: ${t.partitions.length}\tReplicationFactor: ${t.replicationFactor}\tConfigs: ${configs}`];
  for (const p of t.partitions) {
    lines.push(
      [
        '',
        `Topic: ${t.name}`,
        `Partition: ${p.partition}`,
        `Leader: ${p.leader < 0 ? 'none' : p.leader}`,
        `LeaderEpoch: ${p.leaderEpoch < 0 ? 'n/a' : p.leaderEpoch}`,
        `Replicas: ${p.replicas.join(',')}`,
        `Isr: ${p.isr.join(',')}`,
        `Offline: ${p.offlineReplicas.join(',')}`,
        `LogStartOffset: ${na(p.logStartOffset)}`,
        `LocalLogStartOffset: ${na(p.localLogStartOffset)}`,
        `HighWatermark: ${na(p.highWatermark)}`,
        `LastStableOffset: ${na(p.lastStableOffset)}`,
        `LatestTieredOffset: ${na(p.latestTieredOffset)}`,
        `LocalSegments: ${na(p.localSegments)}`,
        `LocalBytes: ${na(p.localBytes)}`,
        `RemoteSegments: ${na(p.remoteSegments)}`,
        `RemoteBytes: ${na(p.remoteBytes)}`,
      ].join('\t'),
    );
  }
  return lines.join('\n') + '\n';
}

function describeError(code: number, message: string | null): string {
  return `${errorName(code)}${message !== null && message !== '' ? `: ${message}` : ''}`;
}

function topicError(name: string, code: number): string {
  if (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return `Error while executing topic command: topic '${name}' does not exist\n`;
  return `Error while executing topic command: topic '${name}': ${errorName(code)}\n`;
}

async function describeTopics(client: AdminClient, topics: readonly TopicMetadata[], http: string | null, single: string | undefined): Promise<TopicReport[]> {
  const tps = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partition })));
  const specs: Array<[string, bigint, number]> = [
    ['logStart', OffsetSpec.earliest, 0],
    ['localLogStart', OffsetSpec.earliestLocal, 0],
    ['highWatermark', OffsetSpec.latest, 0],
    ['lastStable', OffsetSpec.latest, 1],
    ['latestTiered', OffsetSpec.latestTiered, 0],
  ];
  const [configs, sizes, stats, ...offsets] = await Promise.all([
    client.describeTopicConfigs(topics.map((t) => t.name)),
    client.describeLogDirSizes(tps),
    http === null ? Promise.resolve(null) : fetchPartitionStats(http, single),
    ...specs.map(([, ts, iso]) => client.listOffsets(tps.map((tp): OffsetQuery => ({ ...tp, timestamp: ts })), iso)),
  ]);
  const offsetMaps = offsets.map((answers) => new Map(answers.map((a) => [`${a.topic}:${a.partition}`, a.errorCode === ErrorCode.NONE ? a.offset : null])));
  const get = (i: number, k: string): bigint | null => offsetMaps[i]?.get(k) ?? null;
  return topics.map((t) => {
    const c = configs.get(t.name);
    const overrides = (c?.configs ?? [])
      .filter((e) => e.source === ConfigSource.DYNAMIC_TOPIC_CONFIG)
      .map((e): [string, string | null] => [e.name, e.isSensitive ? '<sensitive>' : e.value])
      .sort((x, y) => x[0].localeCompare(y[0]));
    return {
      name: t.name,
      topicId: t.topicId,
      replicationFactor: t.partitions[0]?.replicas.length ?? 0,
      configs: overrides,
      partitions: t.partitions.map((p) => {
        const k = `${t.name}:${p.partition}`;
        const s: PartitionStats | undefined = stats?.get(k);
        return {
          partition: p.partition,
          leader: p.leader,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicas,
          isr: p.isr,
          offlineReplicas: p.offlineReplicas,
          logStartOffset: get(0, k),
          localLogStartOffset: get(1, k),
          highWatermark: get(2, k),
          lastStableOffset: get(3, k),
          latestTieredOffset: get(4, k),
          localSegments: s?.localSegments ?? null,
          localBytes: s?.localBytes ?? sizes.get(k) ?? null,
          remoteSegments: s?.remoteSegments ?? null,
          remoteBytes: s?.remoteBytes ?? null,
        };
      }),
    };
  });
}

async function execute(client: AdminClient, cmd: TopicsCommand, io: CliIo): Promise<number> {
  switch (cmd.kind) {
    case 'list': {
      const md = await client.metadata(null);
      const names = md.topics.filter((t) => !(cmd.excludeInternal && t.isInternal)).map((t) => t.name).sort();
      io.out(names.map((n) => `${n}\n`).join(''));
      return 0;
    }
    case 'create': {
      const [r] = await client.createTopics([{ name: cmd.topic, numPartitions: cmd.partitions, replicationFactor: cmd.replicationFactor, configs: cmd.configs }]);
      if (r === undefined) throw new Error('empty CreateTopics response');
      if (r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS && cmd.ifNotExists) return 0;
      if (r.errorCode !== ErrorCode.NONE) {
        io.err(`Error while executing topic command: cannot create topic '${cmd.topic}': ${describeError(r.errorCode, r.errorMessage)}\n`);
        return 1;
      }
      io.out(`Created topic ${cmd.topic}.\n`);
      return 0;
    }
    case 'delete': {
      const [r] = await client.deleteTopics([cmd.topic]);
      if (r === undefined) throw new Error('empty DeleteTopics response');
      if (r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && cmd.ifExists) return 0;
      if (r.errorCode !== ErrorCode.NONE) {
        io.err(`Error while executing topic command: cannot delete topic '${cmd.topic}': ${describeError(r.errorCode, r.errorMessage)}\n`);
        return 1;
      }
      io.out(`Deleted topic ${cmd.topic}.\n`);
      return 0;
    }
    case 'alter': {
      const md = await client.metadata([cmd.topic]);
      const t = md.topics[0];
      if (t === undefined || t.errorCode !== ErrorCode.NONE) {
        if (cmd.ifExists && t?.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return 0;
        io.err(topicError(cmd.topic, t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        return 1;
      }
      if (cmd.set.size > 0 || cmd.deleteConfigs.length > 0) {
        const r = await client.incrementalAlterTopicConfigs(cmd.topic, [
          ...[...cmd.set].map(([name, value]) => ({ name, op: 'set' as const, value })),
          ...cmd.deleteConfigs.map((name) => ({ name, op: 'delete' as const })),
        ]);
        if (r.errorCode !== ErrorCode.NONE) {
          io.err(`Error while executing topic command: cannot alter configs of '${cmd.topic}': ${describeError(r.errorCode, r.errorMessage)}\n`);
          return 1;
        }
        io.out(`Updated configs of topic ${cmd.topic}.\n`);
      }
      if (cmd.partitions !== undefined) {
        const r = await client.createPartitions(cmd.topic, cmd.partitions);
        if (r.errorCode !== ErrorCode.NONE) {
          io.err(`Error while executing topic command: cannot set the partition count of '${cmd.topic}' to ${cmd.partitions}: ${describeError(r.errorCode, r.errorMessage)}\n`);
          return 1;
        }
        io.out(`Topic ${cmd.topic} now has ${cmd.partitions} partitions.\n`);
      }
      return 0;
    }
    case 'describe': {
      const md = await client.metadata(cmd.topic === undefined ? null : [cmd.topic]);
      const bad = md.topics.filter((t) => t.errorCode !== ErrorCode.NONE);
      if (bad.length > 0) {
        if (cmd.ifExists && bad.every((t) => t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) return 0;
        for (const t of bad) io.err(topicError(t.name, t.errorCode));
        return 1;
      }
      const topics = md.topics.filter((t) => !(cmd.excludeInternal && t.isInternal)).sort((x, y) => x.name.localeCompare(y.name));
      const reports = await describeTopics(client, topics, cmd.http, cmd.topic);
      io.out(reports.map(formatTopicReport).join(''));
      return 0;
    }
  }
}

/** Entry point of `sediment topics`; returns the exit code. */
export async function runTopics(args: string[], io: CliIo = processIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(usageText(SYNOPSIS, topicsOptions));
    return 0;
  }
  let inv: TopicsInvocation;
  try {
    inv = parseTopicsArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`sediment topics: ${e.message}\n${SYNOPSIS}\n`);
    return 2;
  }
  let client: AdminClient | undefined;
  try {
    client = await AdminClient.connect(inv.bootstrap, { timeoutMs: inv.timeoutMs, clientId: 'sediment-topics' });
    return await execute(client, inv.command, io);
  } catch (e) {
    io.err(`Error while executing topic command: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    client?.close();
  }
}
