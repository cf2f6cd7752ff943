// The one place that builds and reads the cluster metadata keys and values.
// Keys are relative to the etcd.connect prefix; values are JSON (plain text for
// the cluster id and config values) so `etcdctl get --prefix` is readable.
// Layout 1 (docs/cluster-metadata.md):
//   layout                               {"version":1}
//   cluster/id                           <cluster id>
//   brokers/<nodeId>                     registration JSON, bound to the broker's lease ("inControlledShutdown": true once it stops)
//   topics/<name>                        {"topicId","name","partitionCount","configs"}
//   partitions/<topicId>/<partition>     {"replicas","leader","leaderEpoch","isr","partitionEpoch"}, plus
//                                        "addingReplicas","removingReplicas" while a reassignment is in progress
//   configs/brokers/<nodeId>/<name>      value
//   configs/cluster/<name>               value
//   configs/groups/<groupId>/<name>      value (the group id URI-encoded)
//   controller                           {"nodeId","brokerEpoch"}, bound to the controller's broker lease
//   producer-ids                         {"nextBlockStart","brokerId","blockSize"}: the last block handed out
// Pure: no I/O.
import {
  isReassigning,
  type BrokerEndpoint,
  type BrokerRegistration,
  type ConfigResource,
  type MetadataChange,
  type PartitionState,
  type RegisteredBroker,
  type TopicRecord,
} from './records.js';

export const LAYOUT_KEY = 'layout';
export const CLUSTER_ID_KEY = 'cluster/id';
export const BROKERS_PREFIX = 'brokers/';
export const TOPICS_PREFIX = 'topics/';
export const PARTITIONS_PREFIX = 'partitions/';
export const BROKER_CONFIGS_PREFIX = 'configs/brokers/';
export const CLUSTER_CONFIGS_PREFIX = 'configs/cluster/';
/** configs/groups/<URI-encoded group id>/<name> (a group id may hold '/'). */
export const GROUP_CONFIGS_PREFIX = 'configs/groups/';
export const CONTROLLER_KEY = 'controller';
/** Not a record of the image: only the allocator reads it (decodeEntry answers null). */
export const PRODUCER_IDS_KEY = 'producer-ids';

/** The `producer-ids` value: the first id of the next block, and who took the last one (for a person reading it). */
export interface ProducerIdsBlockRecord {
  readonly nextBlockStart: bigint;
  readonly brokerId: number;
  readonly blockSize: number;
}

export function encodeProducerIds(r: ProducerIdsBlockRecord): string {
  return JSON.stringify({ nextBlockStart: r.nextBlockStart.toString(), brokerId: r.brokerId, blockSize: r.blockSize });
}

export function decodeProducerIds(value: string): ProducerIdsBlockRecord {
  const v: unknown = JSON.parse(value);
  if (!isObject(v)) throw new Error('producer-ids record is not a JSON object');
  const next = field(v, 'nextBlockStart', isString, 'a string');
  if (!/^[0-9]{1,19}$/.test(next)) throw new Error(`nextBlockStart '${next}' is not a non-negative int64`);
  return { nextBlockStart: BigInt(next), brokerId: field(v, 'brokerId', isInt, 'an integer'), blockSize: field(v, 'blockSize', isInt, 'an integer') };
}

export function brokerKey(nodeId: number): string {
  return `${BROKERS_PREFIX}${nodeId}`;
}

export function topicKey(name: string): string {
  return `${TOPICS_PREFIX}${name}`;
}

export function partitionsPrefix(topicId: string): string {
  return `${PARTITIONS_PREFIX}${topicId}/`;
}

export function partitionKey(topicId: string, partition: number): string {
  return `${partitionsPrefix(topicId)}${partition}`;
}

export function configKey(resource: ConfigResource, name: string): string {
  return `${configPrefix(resource)}${name}`;
}

export function configPrefix(resource: ConfigResource): string {
  switch (resource.type) {
    case 'cluster': return CLUSTER_CONFIGS_PREFIX;
    case 'broker': return `${BROKER_CONFIGS_PREFIX}${resource.nodeId}/`;
    case 'group': return `${GROUP_CONFIGS_PREFIX}${encodeURIComponent(resource.groupId)}/`;
  }
}

export function encodeLayout(version: number): string {
  return JSON.stringify({ version });
}

/** The layout version a `layout` value names, as text for the refusal message when it is not a number. */
export function decodeLayout(value: string): number | string {
  try {
    const v: unknown = JSON.parse(value);
    if (isObject(v) && typeof v['version'] === 'number' && Number.isInteger(v['version'])) return v['version'];
  } catch {
    // not JSON: reported as found below
  }
  return JSON.stringify(value);
}

export function encodeBroker(reg: BrokerRegistration): string {
  return JSON.stringify({ nodeId: reg.nodeId, incarnationId: reg.incarnationId, rack: reg.rack, endpoints: reg.endpoints, ...(reg.inControlledShutdown === true ? { inControlledShutdown: true } : {}) });
}

/** brokerEpoch as a string: a bigint revision, kept exact in JSON. */
export function encodeController(nodeId: number, brokerEpoch: bigint): string {
  return JSON.stringify({ nodeId, brokerEpoch: brokerEpoch.toString() });
}

export function encodeTopic(topic: TopicRecord): string {
  return JSON.stringify({ topicId: topic.topicId, name: topic.name, partitionCount: topic.partitionCount, configs: topic.configs });
}

export function encodePartition(state: PartitionState): string {
  return JSON.stringify({
    replicas: state.replicas,
    leader: state.leader,
    leaderEpoch: state.leaderEpoch,
    isr: state.isr,
    partitionEpoch: state.partitionEpoch,
    // Only while reassigning, so a record without a reassignment reads as layout 1 always did.
    ...(isReassigning(state) ? { addingReplicas: state.addingReplicas ?? [], removingReplicas: state.removingReplicas ?? [] } : {}),
  });
}

/** A key/value the decoder could not understand: skipped by readers, reported with the reason. */
export interface InvalidEntry {
  readonly invalid: string;
}

/**
 * The change a key/value (value null: deleted) stands for; `null` for keys
 * outside the records (the layout key, keys of a later layout's extra folders).
 * `createRevision` becomes a broker's epoch.
 */
export function decodeEntry(key: string, value: string | null, createRevision: bigint): MetadataChange | InvalidEntry | null {
  try {
    return decode(key, value, createRevision);
  } catch (e) {
    return { invalid: `key ${key}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

export function isInvalid(entry: MetadataChange | InvalidEntry | null): entry is InvalidEntry {
  return entry !== null && 'invalid' in entry;
}

function decode(key: string, value: string | null, createRevision: bigint): MetadataChange | null {
  if (key === CLUSTER_ID_KEY) return { kind: 'cluster-id', clusterId: value };
  if (key === CONTROLLER_KEY) {
    if (value === null) return { kind: 'controller', controller: null };
    const v: unknown = JSON.parse(value);
    if (!isObject(v)) throw new Error('controller record is not a JSON object');
    const epochText = field(v, 'brokerEpoch', isString, 'a string');
    if (!/^[0-9]{1,19}$/.test(epochText)) throw new Error(`brokerEpoch '${epochText}' is not a revision`);
    return { kind: 'controller', controller: { nodeId: field(v, 'nodeId', isInt, 'an integer'), brokerEpoch: BigInt(epochText), controllerEpoch: createRevision } };
  }
  if (key.startsWith(BROKERS_PREFIX)) {
    const nodeId = nonNegativeInt(key.slice(BROKERS_PREFIX.length), 'node id');
    if (value === null) return { kind: 'broker', nodeId, broker: null };
    const reg = parseBroker(JSON.parse(value));
    if (reg.nodeId !== nodeId) throw new Error(`registration names node ${reg.nodeId}`);
    const broker: RegisteredBroker = { ...reg, brokerEpoch: createRevision };
    return { kind: 'broker', nodeId, broker };
  }
  if (key.startsWith(TOPICS_PREFIX)) {
    const name = key.slice(TOPICS_PREFIX.length);
    if (value === null) return { kind: 'topic', name, topic: null };
    const topic = parseTopic(JSON.parse(value));
    if (topic.name !== name) throw new Error(`record names topic ${topic.name}`);
    return { kind: 'topic', name, topic };
  }
  if (key.startsWith(PARTITIONS_PREFIX)) {
    const rest = key.slice(PARTITIONS_PREFIX.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) throw new Error('expected partitions/<topicId>/<partition>');
    const topicId = rest.slice(0, slash);
    const partition = nonNegativeInt(rest.slice(slash + 1), 'partition');
    return { kind: 'partition', topicId, partition, state: value === null ? null : parsePartition(JSON.parse(value)) };
  }
  if (key.startsWith(CLUSTER_CONFIGS_PREFIX)) {
    const name = key.slice(CLUSTER_CONFIGS_PREFIX.length);
    return { kind: 'config', resource: { type: 'cluster' }, name, value };
  }
  if (key.startsWith(BROKER_CONFIGS_PREFIX)) {
    const rest = key.slice(BROKER_CONFIGS_PREFIX.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) throw new Error('expected configs/brokers/<nodeId>/<name>');
    const nodeId = nonNegativeInt(rest.slice(0, slash), 'node id');
    return { kind: 'config', resource: { type: 'broker', nodeId }, name: rest.slice(slash + 1), value };
  }
  if (key.startsWith(GROUP_CONFIGS_PREFIX)) {
    const rest = key.slice(GROUP_CONFIGS_PREFIX.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) throw new Error('expected configs/groups/<groupId>/<name>');
    return { kind: 'config', resource: { type: 'group', groupId: decodeURIComponent(rest.slice(0, slash)) }, name: rest.slice(slash + 1), value };
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonNegativeInt(text: string, what: string): number {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(text) || Number(text) > 2147483647) throw new Error(`${what} '${text}' is not a non-negative int32`);
  return Number(text);
}

function field<T>(o: Record<string, unknown>, name: string, check: (v: unknown) => v is T, what: string): T {
  const v = o[name];
  if (!check(v)) throw new Error(`field ${name} is not ${what}`);
  return v;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isIntList = (v: unknown): v is number[] => Array.isArray(v) && v.every(isInt);

function parseBroker(v: unknown): BrokerRegistration {
  if (!isObject(v)) throw new Error('registration is not a JSON object');
  const rack = v['rack'];
  if (rack !== null && typeof rack !== 'string') throw new Error('field rack is not a string or null');
  const endpointsRaw = v['endpoints'];
  if (!Array.isArray(endpointsRaw)) throw new Error('field endpoints is not a list');
  const endpoints: BrokerEndpoint[] = endpointsRaw.map((e: unknown) => {
    if (!isObject(e)) throw new Error('an endpoint is not a JSON object');
    return {
      name: field(e, 'name', isString, 'a string'),
      host: field(e, 'host', isString, 'a string'),
      port: field(e, 'port', isInt, 'an integer'),
      securityProtocol: field(e, 'securityProtocol', isString, 'a string'),
    };
  });
  const shutdown = v['inControlledShutdown'];
  if (shutdown !== undefined && typeof shutdown !== 'boolean') throw new Error('field inControlledShutdown is not a boolean');
  return {
    nodeId: field(v, 'nodeId', isInt, 'an integer'),
    incarnationId: field(v, 'incarnationId', isString, 'a string'),
    rack,
    endpoints,
    ...(shutdown === true ? { inControlledShutdown: true } : {}),
  };
}

function parseTopic(v: unknown): TopicRecord {
  if (!isObject(v)) throw new Error('topic record is not a JSON object');
  const configsRaw = v['configs'];
  if (!isObject(configsRaw)) throw new Error('field configs is not a JSON object');
  const configs: Record<string, string> = {};
  for (const [k, value] of Object.entries(configsRaw)) {
    if (typeof value !== 'string') throw new Error(`config ${k} is not a string`);
    configs[k] = value;
  }
  return {
    topicId: field(v, 'topicId', isString, 'a string'),
    name: field(v, 'name', isString, 'a string'),
    partitionCount: field(v, 'partitionCount', isInt, 'an integer'),
    configs,
  };
}

function parsePartition(v: unknown): PartitionState {
  if (!isObject(v)) throw new Error('partition record is not a JSON object');
  return {
    replicas: field(v, 'replicas', isIntList, 'a list of integers'),
    leader: field(v, 'leader', isInt, 'an integer'),
    leaderEpoch: field(v, 'leaderEpoch', isInt, 'an integer'),
    isr: field(v, 'isr', isIntList, 'a list of integers'),
    partitionEpoch: field(v, 'partitionEpoch', isInt, 'an integer'),
    ...optionalList(v, 'addingReplicas'),
    ...optionalList(v, 'removingReplicas'),
  };
}

function optionalList(v: Record<string, unknown>, name: 'addingReplicas' | 'removingReplicas'): Partial<Record<typeof name, number[]>> {
  if (v[name] === undefined) return {};
  const list = field(v, name, isIntList, 'a list of integers');
  return list.length === 0 ? {} : { [name]: list };
}
