// `sediment groups`: list, describe (offsets and lag), reset offsets and delete
// consumer groups in the style of kafka-consumer-groups.sh, over the Kafka
// protocol (any broker). Group requests go to the coordinator from
// FindCoordinator. Offsets are reset with an admin OffsetCommit (generation -1,
// no member id), which a broker accepts only while the group is empty; the
// command refuses earlier, as Kafka's tool does, while members are active.
import { ErrorCode, errorName } from '../protocol/errors.js';
import { AdminClient, OffsetSpec, type GroupDescription, type TopicPartition } from './admin-client.js';
import { formatTable } from '../common/text-table.js';
import { UsageError, parseArgs, processIo, usageText, type CliIo, type OptionSpecs, type ParsedArgs } from './args.js';
import {
  decodeAssignment,
  parseStrategy,
  parseTopicSelection,
  planReset,
  type PartitionPosition,
  type ResetStrategy,
  type TopicSelection,
} from './reset-offsets.js';

export const groupsOptions: OptionSpecs = {
  'bootstrap-server': { kind: 'value', arg: 'host:port[,host:port]', help: 'the broker(s) to connect to (required)' },
  list: { kind: 'flag', help: 'list consumer groups' },
  describe: { kind: 'flag', help: 'describe a group: offsets and lag per partition' },
  'reset-offsets': { kind: 'flag', help: 'reset the committed offsets of an inactive group' },
  delete: { kind: 'flag', help: 'delete groups with no active members' },
  group: { kind: 'multi', arg: 'group', help: 'the group (--delete accepts several)' },
  topic: { kind: 'multi', arg: 'topic[:p,p...]', help: 'with --reset-offsets: topic and optional partitions' },
  'all-topics': { kind: 'flag', help: 'with --reset-offsets: every topic the group has committed offsets for' },
  'to-earliest': { kind: 'flag', help: 'reset to the log start offset' },
  'to-latest': { kind: 'flag', help: 'reset to the high watermark' },
  'to-offset': { kind: 'value', arg: 'n', help: 'reset to an offset (clamped into the log)' },
  'shift-by': { kind: 'value', arg: 'n', help: 'move the committed offset by n (may be negative)' },
  'to-datetime': { kind: 'value', arg: 'YYYY-MM-DDTHH:mm:SS.sss[Z|+hh:mm]', help: 'reset to the first offset at or after a time' },
  'dry-run': { kind: 'flag', help: 'show the new offsets only (the default)' },
  execute: { kind: 'flag', help: 'commit the new offsets' },
  state: { kind: 'flag', help: 'with --list: show states; with --describe: the group summary' },
  members: { kind: 'flag', help: 'with --describe: members instead of offsets' },
  'timeout-ms': { kind: 'value', arg: 'ms', help: 'per-request timeout (default 30000)' },
  help: { kind: 'flag', help: 'print this help' },
};

const SYNOPSIS =
  'usage: sediment groups --bootstrap-server H:P (--list [--state] | --describe --group G [--members | --state]\n' +
  '       | --reset-offsets --group G (--topic T[:p,...]... | --all-topics)\n' +
  '           (--to-earliest | --to-latest | --to-offset N | --shift-by N | --to-datetime T) [--dry-run | --execute]\n' +
  '       | --delete --group G...)';

const STRATEGIES = ['to-earliest', 'to-latest', 'to-offset', 'shift-by', 'to-datetime'] as const;

export type GroupsCommand =
  | { readonly kind: 'list'; readonly state: boolean }
  | { readonly kind: 'describe'; readonly group: string; readonly view: 'offsets' | 'members' | 'state' }
  | { readonly kind: 'reset'; readonly group: string; readonly topics: readonly TopicSelection[] | 'all'; readonly strategy: ResetStrategy; readonly execute: boolean; readonly explicitDryRun: boolean }
  | { readonly kind: 'delete'; readonly groups: readonly string[] };

export interface GroupsInvocation {
  readonly bootstrap: string;
  readonly timeoutMs: number;
  readonly command: GroupsCommand;
}

function onlyWith(a: ParsedArgs, allowed: readonly string[], action: string): void {
  const common = ['bootstrap-server', 'timeout-ms', action];
  for (const name of Object.keys(groupsOptions)) {
    if (a.has(name) && !common.includes(name) && !allowed.includes(name)) throw new UsageError(`--${name} cannot be used with --${action}`);
  }
}

function oneGroup(a: ParsedArgs, action: string): string {
  const groups = a.all('group');
  if (groups.length !== 1) throw new UsageError(`--${action} needs exactly one --group`);
  return groups[0] as string;
}

export function parseGroupsArgs(argv: readonly string[]): GroupsInvocation {
  const a = parseArgs(argv, groupsOptions);
  const action = a.oneOf(['list', 'describe', 'reset-offsets', 'delete'], 'as the action');
  const bootstrap = a.required('bootstrap-server', 'to reach a broker');
  const timeoutMs = a.int('timeout-ms', 1) ?? 30_000;
  let command: GroupsCommand;
  switch (action) {
    case 'list':
      onlyWith(a, ['state'], action);
      command = { kind: 'list', state: a.has('state') };
      break;
    case 'describe': {
      onlyWith(a, ['group', 'members', 'state'], action);
      if (a.has('members') && a.has('state')) throw new UsageError('--members and --state cannot be combined');
      command = { kind: 'describe', group: oneGroup(a, action), view: a.has('members') ? 'members' : a.has('state') ? 'state' : 'offsets' };
      break;
    }
    case 'reset-offsets': {
      onlyWith(a, ['group', 'topic', 'all-topics', 'dry-run', 'execute', ...STRATEGIES], action);
      const group = oneGroup(a, action);
      const strategyName = a.oneOf(STRATEGIES, 'with --reset-offsets');
      const strategy = parseStrategy(strategyName, a.value(strategyName));
      if (a.has('dry-run') && a.has('execute')) throw new UsageError('--dry-run and --execute cannot be combined');
      let topics: readonly TopicSelection[] | 'all';
      if (a.has('all-topics')) {
        if (a.has('topic')) throw new UsageError('--topic and --all-topics cannot be combined');
        topics = 'all';
      } else {
        if (!a.has('topic')) throw new UsageError('--reset-offsets needs --topic or --all-topics');
        topics = a.all('topic').map(parseTopicSelection);
      }
      command = { kind: 'reset', group, topics, strategy, execute: a.has('execute'), explicitDryRun: a.has('dry-run') };
      break;
    }
    default: {
      onlyWith(a, ['group'], action);
      const groups = a.all('group');
      if (groups.length === 0) throw new UsageError('--delete needs --group');
      command = { kind: 'delete', groups };
    }
  }
  return { bootstrap, timeoutMs, command };
}

/** One line of --describe. Null offsets print as '-'. */
export interface OffsetRow {
  readonly topic: string | null;
  readonly partition: number | null;
  readonly currentOffset: bigint | null;
  readonly logEndOffset: bigint | null;
  readonly consumerId: string | null;
  readonly host: string | null;
  readonly clientId: string | null;
}

export function lagOf(r: OffsetRow): bigint | null {
  if (r.currentOffset === null || r.currentOffset < 0n || r.logEndOffset === null) return null;
  const lag = r.logEndOffset - r.currentOffset;
  return lag < 0n ? 0n : lag;
}

const dash = (v: string | number | bigint | null): string => (v === null ? '-' : String(v));

export function formatOffsets(group: string, rows: readonly OffsetRow[]): string {
  const header = ['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID'];
  const body = rows.map((r) => [group, dash(r.topic), dash(r.partition), dash(r.currentOffset), dash(r.logEndOffset), dash(lagOf(r)), dash(r.consumerId), dash(r.host), dash(r.clientId)]);
  const lags = rows.map(lagOf).filter((l): l is bigint => l !== null);
  const max = lags.length === 0 ? '-' : String(lags.reduce((m, l) => (l > m ? l : m)));
  return `${formatTable(header, body)}\nMax lag: ${max}\n`;
}

export function formatResetPlan(group: string, offsets: ReadonlyArray<TopicPartition & { offset: bigint }>): string {
  return formatTable(['GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET'], offsets.map((o) => [group, o.topic, String(o.partition), String(o.offset)]));
}

const byTp = (a: TopicPartition, b: TopicPartition): number => a.topic.localeCompare(b.topic) || a.partition - b.partition;
const key = (tp: TopicPartition): string => `${tp.topic}:${tp.partition}`;
const ACTIVE_STATES_ALLOWED_FOR_RESET = new Set(['Empty', 'Dead']);

function groupMissing(g: GroupDescription): boolean {
  return g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND || (g.errorCode === ErrorCode.NONE && g.state === 'Dead');
}

async function logEndOffsets(client: AdminClient, tps: readonly TopicPartition[]): Promise<Map<string, bigint>> {
  if (tps.length === 0) return new Map();
  const answers = await client.listOffsets(tps.map((tp) => ({ ...tp, timestamp: OffsetSpec.latest })));
  return new Map(answers.filter((a) => a.errorCode === ErrorCode.NONE).map((a) => [key(a), a.offset]));
}

async function describe(client: AdminClient, groupId: string, view: 'offsets' | 'members' | 'state', io: CliIo): Promise<number> {
  const g = await client.describeGroup(groupId);
  if (g.errorCode !== ErrorCode.NONE && !groupMissing(g)) {
    io.err(`Error: cannot describe group '${groupId}': ${errorName(g.errorCode)}\n`);
    return 1;
  }
  const fetched = await client.offsetFetch(groupId, null);
  if (fetched.errorCode !== ErrorCode.NONE && fetched.errorCode !== ErrorCode.GROUP_ID_NOT_FOUND) {
    io.err(`Error: cannot fetch the offsets of group '${groupId}': ${errorName(fetched.errorCode)}\n`);
    return 1;
  }
  const committed = fetched.offsets.filter((o) => o.errorCode === ErrorCode.NONE && o.offset >= 0n);
  if (groupMissing(g) && committed.length === 0) {
    io.err(`Error: Consumer group '${groupId}' does not exist.\n`);
    return 1;
  }
  const state = groupMissing(g) ? 'Empty' : g.state;
  if (view === 'state') {
    const coordinator = await client.coordinator(groupId);
    io.out(formatTable(['GROUP', 'COORDINATOR', 'ASSIGNMENT-STRATEGY', 'STATE', '#MEMBERS'], [[groupId, coordinator.address, g.protocol === '' ? '-' : g.protocol, state, String(g.members.length)]]));
    return 0;
  }
  if (view === 'members') {
    if (g.members.length === 0) io.out(`\nConsumer group '${groupId}' has no active members.\n`);
    io.out(formatTable(['GROUP', 'CONSUMER-ID', 'GROUP-INSTANCE-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS'], g.members.map((m) => [groupId, m.memberId, m.groupInstanceId ?? '-', m.clientHost, m.clientId, String(decodeAssignment(m.assignment).length)])));
    return 0;
  }
  const rows: OffsetRow[] = [];
  const assigned = new Set<string>();
  const current = new Map(committed.map((o) => [key(o), o.offset]));
  const memberless: OffsetRow[] = [];
  for (const m of g.members) {
    const tps = g.protocolType === 'consumer' ? decodeAssignment(m.assignment) : [];
    if (tps.length === 0) memberless.push({ topic: null, partition: null, currentOffset: null, logEndOffset: null, consumerId: m.memberId, host: m.clientHost, clientId: m.clientId });
    for (const tp of tps) {
      assigned.add(key(tp));
      rows.push({ topic: tp.topic, partition: tp.partition, currentOffset: current.get(key(tp)) ?? null, logEndOffset: null, consumerId: m.memberId, host: m.clientHost, clientId: m.clientId });
    }
  }
  for (const o of committed) {
    if (!assigned.has(key(o))) rows.push({ topic: o.topic, partition: o.partition, currentOffset: o.offset, logEndOffset: null, consumerId: null, host: null, clientId: null });
  }
  const ends = await logEndOffsets(client, rows.map((r) => ({ topic: r.topic as string, partition: r.partition as number })));
  const withEnds = rows
    .map((r) => ({ ...r, logEndOffset: ends.get(`${r.topic}:${r.partition}`) ?? null }))
    .sort((a, b) => byTp({ topic: a.topic as string, partition: a.partition as number }, { topic: b.topic as string, partition: b.partition as number }));
  if (g.members.length === 0) io.out(`\nConsumer group '${groupId}' has no active members.\n\n`);
  io.out(formatOffsets(groupId, [...withEnds, ...memberless]));
  return 0;
}

async function resolvePartitions(client: AdminClient, groupId: string, selection: readonly TopicSelection[] | 'all', io: CliIo): Promise<TopicPartition[] | null> {
  if (selection === 'all') {
    const fetched = await client.offsetFetch(groupId, null);
    return fetched.offsets
      .filter((o) => o.errorCode === ErrorCode.NONE && o.offset >= 0n)
      .map((o) => ({ topic: o.topic, partition: o.partition }))
      .sort(byTp);
  }
  const md = await client.metadata([...new Set(selection.map((s) => s.topic))]);
  const out: TopicPartition[] = [];
  for (const s of selection) {
    const t = md.topics.find((x) => x.name === s.topic);
    if (t === undefined || t.errorCode !== ErrorCode.NONE) {
      io.err(`Error: topic '${s.topic}' ${t?.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || t === undefined ? 'does not exist' : `is not available: ${errorName(t.errorCode)}`}\n`);
      return null;
    }
    const existing = new Set(t.partitions.map((p) => p.partition));
    for (const p of s.partitions ?? [...existing]) {
      if (!existing.has(p)) {
        io.err(`Error: topic '${s.topic}' has no partition ${p} (it has ${existing.size})\n`);
        return null;
      }
      out.push({ topic: s.topic, partition: p });
    }
  }
  const seen = new Set<string>();
  return out.filter((tp) => !seen.has(key(tp)) && seen.add(key(tp)) !== undefined).sort(byTp);
}

async function resetOffsets(client: AdminClient, cmd: Extract<GroupsCommand, { kind: 'reset' }>, io: CliIo): Promise<number> {
  const g = await client.describeGroup(cmd.group);
  if (g.errorCode !== ErrorCode.NONE && !groupMissing(g)) {
    io.err(`Error: cannot describe group '${cmd.group}': ${errorName(g.errorCode)}\n`);
    return 1;
  }
  if (!groupMissing(g) && !ACTIVE_STATES_ALLOWED_FOR_RESET.has(g.state)) {
    io.err(`Error: Assignments can only be reset if the group '${cmd.group}' is inactive, but the current state is ${g.state}.\n`);
    return 1;
  }
  const tps = await resolvePartitions(client, cmd.group, cmd.topics, io);
  if (tps === null) return 1;
  if (tps.length === 0) {
    io.err(`Error: no partitions to reset for group '${cmd.group}'\n`);
    return 1;
  }
  const ask = async (timestamp: bigint): Promise<Map<string, bigint>> => {
    const answers = await client.listOffsets(tps.map((tp) => ({ ...tp, timestamp })));
    const bad = answers.find((a) => a.errorCode !== ErrorCode.NONE);
    if (bad !== undefined) throw new Error(`ListOffsets for ${bad.topic}-${bad.partition} failed: ${errorName(bad.errorCode)}`);
    return new Map(answers.map((a) => [key(a), a.offset]));
  };
  const [earliest, latest, atTime, fetched] = await Promise.all([
    ask(OffsetSpec.earliest),
    ask(OffsetSpec.latest),
    cmd.strategy.kind === 'datetime' ? ask(cmd.strategy.timestamp) : Promise.resolve(null),
    client.offsetFetch(cmd.group, tps),
  ]);
  const current = new Map(fetched.offsets.filter((o) => o.errorCode === ErrorCode.NONE && o.offset >= 0n).map((o) => [key(o), o.offset]));
  const positions: PartitionPosition[] = tps.map((tp) => {
    const at = atTime?.get(key(tp));
    return {
      ...tp,
      earliest: earliest.get(key(tp)) ?? 0n,
      latest: latest.get(key(tp)) ?? 0n,
      current: current.get(key(tp)) ?? null,
      ...(at === undefined ? {} : { atTimestamp: at }),
    };
  });
  const plan = planReset(cmd.strategy, positions);
  for (const w of plan.warnings) io.err(`WARN: ${w}\n`);
  if (plan.errors.length > 0) {
    for (const e of plan.errors) io.err(`Error: ${e}\n`);
    return 1;
  }
  if (!cmd.execute) {
    if (!cmd.explicitDryRun) io.err('WARN: No action will be performed as the --execute option is missing. Add --dry-run to keep this behaviour without the warning.\n');
    io.out(formatResetPlan(cmd.group, plan.offsets));
    return 0;
  }
  const results = await client.offsetCommit(cmd.group, plan.offsets);
  const failed = results.filter((r) => r.errorCode !== ErrorCode.NONE);
  if (failed.length > 0) {
    for (const f of failed) io.err(`Error: cannot commit the offset of ${f.topic}-${f.partition} for group '${cmd.group}': ${errorName(f.errorCode)}\n`);
    return 1;
  }
  io.out(formatResetPlan(cmd.group, plan.offsets));
  return 0;
}

async function deleteGroups(client: AdminClient, groups: readonly string[], io: CliIo): Promise<number> {
  const results = await client.deleteGroups(groups);
  const failed = results.filter((r) => r.errorCode !== ErrorCode.NONE);
  const ok = results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => `'${r.groupId}'`);
  if (ok.length > 0) io.out(`Deletion of requested consumer groups (${ok.join(', ')}) was successful.\n`);
  for (const f of failed) {
    const why =
      f.errorCode === ErrorCode.NON_EMPTY_GROUP
        ? 'the group is not empty (it has active members)'
        : f.errorCode === ErrorCode.GROUP_ID_NOT_FOUND
          ? 'the group does not exist'
          : errorName(f.errorCode);
    io.err(`Error: deletion of group '${f.groupId}' failed: ${why} (${errorName(f.errorCode)})\n`);
  }
  return failed.length === 0 ? 0 : 1;
}

async function execute(client: AdminClient, cmd: GroupsCommand, io: CliIo): Promise<number> {
  switch (cmd.kind) {
    case 'list': {
      const groups = (await client.listGroups()).filter((g) => g.protocolType === 'consumer' || g.protocolType === '');
      if (cmd.state) io.out(formatTable(['GROUP', 'STATE'], groups.map((g) => [g.groupId, g.state === '' ? '-' : g.state])));
      else io.out(groups.map((g) => `${g.groupId}\n`).join(''));
      return 0;
    }
    case 'describe':
      return describe(client, cmd.group, cmd.view, io);
    case 'reset':
      return resetOffsets(client, cmd, io);
    case 'delete':
      return deleteGroups(client, cmd.groups, io);
  }
}

/** Entry point of `sediment groups`; returns the exit code. */
export async function runGroups(args: string[], io: CliIo = processIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(usageText(SYNOPSIS, groupsOptions));
    return 0;
  }
  let inv: GroupsInvocation;
  try {
    inv = parseGroupsArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`sediment groups: ${e.message}\n${SYNOPSIS}\n`);
    return 2;
  }
  let client: AdminClient | undefined;
  try {
    client = await AdminClient.connect(inv.bootstrap, { timeoutMs: inv.timeoutMs, clientId: 'sediment-groups' });
    return await execute(client, inv.command, io);
  } catch (e) {
    io.err(`Error: executing consumer group command failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    client?.close();
  }
}
