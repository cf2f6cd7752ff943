// Replica assignment for new topics and partitions, as Kafka's AdminUtils
// assigns them (assignReplicasToBrokers): round-robin over the brokers from a
// start index, the first replica of each partition one broker further on, the
// followers shifted so that leadership and replicas spread evenly; rack-aware
// when every broker has a rack (the brokers are interleaved rack by rack, and
// a partition's replicas go to distinct racks while there are racks left).
// Kafka picks the start index and the shift at random; here they come from a
// seeded generator, so an assignment is reproducible from its seed (the topic
// name by default). Pure.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';

export interface PlacementBroker {
  readonly nodeId: number;
  readonly rack: string | null;
}

export interface PlacementRequest {
  /** The live brokers to place on (any order). */
  readonly brokers: readonly PlacementBroker[];
  readonly partitions: number;
  readonly replicationFactor: number;
  /** Partition id of the first new partition (CreatePartitions: the current count). */
  readonly startPartitionId?: number;
  /** Fixes both the start index and the shift (Kafka's fixedStartIndex); otherwise drawn from `seed`. */
  readonly fixedStartIndex?: number;
  /** Seeds the start index and shift when not fixed. */
  readonly seed: string;
}

/** The replica lists of the new partitions, first replica = preferred leader. */
export function assignReplicas(req: PlacementRequest): number[][] {
  const n = req.brokers.length;
  if (req.partitions <= 0) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
  if (req.replicationFactor <= 0) throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
  if (req.replicationFactor > n) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor: ${req.replicationFactor} larger than available brokers: ${n}.`);
  }
  const random = seededRandom(req.seed);
  const fixed = req.fixedStartIndex !== undefined && req.fixedStartIndex >= 0 ? req.fixedStartIndex : undefined;
  const startIndex = fixed ?? Math.floor(random() * n);
  const shift0 = fixed ?? Math.floor(random() * n);
  const rackAware = req.brokers.every((b) => b.rack !== null);
  return rackAware
    ? rackAwareAssignment(req, startIndex, shift0)
    : plainAssignment(
        [...req.brokers].map((b) => b.nodeId).sort((a, b) => a - b),
        req,
        startIndex,
        shift0,
      );
}

/** Kafka's start index for CreatePartitions: the position of the first broker whose id is at least partition 0's first replica. */
export function startIndexForNewPartitions(brokers: readonly PlacementBroker[], partition0Replicas: readonly number[]): number {
  const first = partition0Replicas[0];
  if (first === undefined) return -1;
  const ids = orderedForPlacement(brokers);
  return Math.max(0, ids.findIndex((id) => id >= first));
}

/** The broker list the assignment indexes into (rack-interleaved when every broker has a rack). */
export function orderedForPlacement(brokers: readonly PlacementBroker[]): number[] {
  return brokers.every((b) => b.rack !== null) ? rackAlternated(brokers) : [...brokers].map((b) => b.nodeId).sort((a, b) => a - b);
}

function replicaIndex(first: number, secondShift: number, j: number, n: number): number {
  const shift = 1 + ((secondShift + j) % (n - 1));
  return (first + shift) % n;
}

function plainAssignment(ids: readonly number[], req: PlacementRequest, startIndex: number, shift0: number): number[][] {
  const n = ids.length;
  const out: number[][] = [];
  let shift = shift0;
  let pid = Math.max(0, req.startPartitionId ?? 0);
  for (let i = 0; i < req.partitions; i++, pid++) {
    if (pid > 0 && pid % n === 0) shift++;
    const first = (pid + startIndex) % n;
    const replicas = [ids[first]!];
    for (let j = 0; j < req.replicationFactor - 1; j++) replicas.push(ids[replicaIndex(first, shift, j, n)]!);
    out.push(replicas);
  }
  return out;
}

function rackAwareAssignment(req: PlacementRequest, startIndex: number, shift0: number): number[][] {
  const rackOf = new Map(req.brokers.map((b) => [b.nodeId, b.rack!] as const));
  const arranged = rackAlternated(req.brokers);
  const n = arranged.length;
  const numRacks = new Set(rackOf.values()).size;
  const out: number[][] = [];
  let shift = shift0;
  let pid = Math.max(0, req.startPartitionId ?? 0);
  for (let i = 0; i < req.partitions; i++, pid++) {
    if (pid > 0 && pid % n === 0) shift++;
    const first = (pid + startIndex) % n;
    const leader = arranged[first]!;
    const replicas = [leader];
    const racks = new Set([rackOf.get(leader)!]);
    const used = new Set([leader]);
    let k = 0;
    for (let j = 0; j < req.replicationFactor - 1; j++) {
      // Skip brokers of racks that already hold a replica (until every rack
      // does) and brokers already chosen (until every broker is).
      for (;;) {
        const broker = arranged[replicaIndex(first, shift * numRacks, k, n)]!;
        k++;
        const rack = rackOf.get(broker)!;
        if ((!racks.has(rack) || racks.size === numRacks) && (!used.has(broker) || used.size === n)) {
          replicas.push(broker);
          racks.add(rack);
          used.add(broker);
          break;
        }
      }
    }
    out.push(replicas);
  }
  return out;
}

/** Brokers interleaved by rack (racks in name order, brokers by id within a rack): Kafka's getRackAlternatedBrokerList. */
function rackAlternated(brokers: readonly PlacementBroker[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of brokers) {
    const rack = b.rack ?? '';
    let list = byRack.get(rack);
    if (list === undefined) byRack.set(rack, (list = []));
    list.push(b.nodeId);
  }
  const racks = [...byRack.keys()].sort();
  const queues = racks.map((r) => byRack.get(r)!.sort((a, b) => a - b));
  const out: number[] = [];
  while (out.length < brokers.length) {
    for (const q of queues) {
      const next = q.shift();
      if (next !== undefined) out.push(next);
    }
  }
  return out;
}

/** A small deterministic generator (mulberry32 over an FNV-1a hash of the seed): spread, not secrecy. */
export function seededRandom(seed: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) {
    h ^= seed.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  let state = h >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
