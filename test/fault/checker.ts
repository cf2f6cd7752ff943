// The checker: pure, from what the client acknowledged and what each replica
// holds on disk (replica-logs.ts) to a verdict. Nothing here is loosened for a
// broker that fails it: an acknowledged record must be on every in-sync
// replica, once, at the offset it was acknowledged at.
//
// Per partition:
//   - each replica's log (remote segments below its first local batch, then its
//     local segments) is contiguous: batches follow each other without gaps or
//     overlaps, and each batch holds one record per offset it spans;
//   - no value appears twice in any replica (idempotence: exactly once);
//   - every acknowledged (offset, value) is in every in-sync replica at that
//     offset, and below the high watermark;
//   - all in-sync replicas hold identical batches below the high watermark
//     (offsets, leader epoch, CRC).
import type { ReplicaLog, StoredBatch } from './replica-logs.js';

export interface Ack {
  readonly partition: number;
  readonly offset: bigint;
  readonly value: string;
}

export interface PartitionEvidence {
  readonly partition: number;
  /** In-sync replicas when the brokers were stopped (from the cluster's metadata). */
  readonly isr: readonly number[];
  /** The committed high watermark (the highest of the leader's ListOffsets answer and what the replicas checkpointed), or null when none is known. */
  readonly highWatermark: bigint | null;
  readonly replicas: readonly ReplicaLog[];
  /** Finished remote segments (tiering on), shared by the replicas. */
  readonly remote: ReplicaLog | null;
}

export type FindingKind =
  | 'lost'
  | 'moved'
  | 'duplicate'
  | 'gap'
  | 'divergent'
  | 'above-hw'
  | 'no-hw'
  | 'damaged'
  | 'isr'
  // Found by the trial rather than the file check:
  | 'availability'
  | 'observability'
  | 'crash'
  | 'harness';

export interface Finding {
  readonly kind: FindingKind;
  readonly partition: number;
  readonly detail: string;
}

export interface Verdict {
  readonly acknowledged: number;
  /** Acknowledged values missing from at least one in-sync replica (or present at another offset). */
  readonly losses: number;
  /** Distinct values stored more than once in some replica. */
  readonly duplicates: number;
  readonly findings: readonly Finding[];
}

const FINDINGS_PER_KIND = 20;

/** A replica's whole log: remote batches below its first local one, then the local ones. */
export function effectiveLog(local: ReplicaLog, remote: ReplicaLog | null): StoredBatch[] {
  const first = local.batches[0];
  if (remote === null) return [...local.batches];
  const below = remote.batches.filter((b) => first === undefined || b.lastOffset < first.baseOffset);
  return [...below, ...local.batches];
}

function batchKey(b: StoredBatch): string {
  return `${b.baseOffset}-${b.lastOffset}@${b.partitionLeaderEpoch}#${b.crc >>> 0}`;
}

export function checkPartition(acks: readonly Ack[], ev: PartitionEvidence): { findings: Finding[]; losses: number; duplicates: number } {
  const findings: Finding[] = [];
  const p = ev.partition;
  let losses = 0;
  const duplicated = new Set<string>();
  const add = (kind: FindingKind, detail: string): void => {
    if (findings.filter((f) => f.kind === kind).length < FINDINGS_PER_KIND) findings.push({ kind, partition: p, detail });
  };
  const logs = new Map<number, StoredBatch[]>();
  for (const r of ev.replicas) {
    for (const problem of r.problems) add('damaged', problem);
    logs.set(r.nodeId, effectiveLog(r, ev.remote));
  }
  if (ev.remote !== null) for (const problem of ev.remote.problems) add('damaged', problem);

  // Contiguity and duplicates, per replica.
  const byOffset = new Map<number, Map<bigint, string | null>>();
  const byValue = new Map<number, Map<string, bigint>>();
  for (const [node, batches] of logs) {
    const values = new Map<bigint, string | null>();
    const seen = new Map<string, bigint>();
    let next: bigint | null = null;
    for (const b of batches) {
      if (next !== null && b.baseOffset !== next) add('gap', `node ${node}: batch ${b.baseOffset}..${b.lastOffset} (${b.source}) follows offset ${next - 1n}`);
      if (BigInt(b.records.length) !== b.lastOffset - b.baseOffset + 1n || b.records.some((r, i) => r.offset !== b.baseOffset + BigInt(i))) {
        add('gap', `node ${node}: batch ${b.baseOffset}..${b.lastOffset} holds offsets ${b.records.map((r) => r.offset).join(',')}`);
      }
      next = b.lastOffset + 1n;
      for (const r of b.records) {
        values.set(r.offset, r.value);
        if (r.value === null || b.control) continue;
        const before = seen.get(r.value);
        if (before !== undefined) {
          duplicated.add(r.value);
          add('duplicate', `node ${node}: value ${r.value} at offsets ${before} and ${r.offset}`);
        } else seen.set(r.value, r.offset);
      }
    }
    const first = batches[0];
    if (first !== undefined && first.baseOffset !== 0n) add('gap', `node ${node}: log starts at ${first.baseOffset}, not 0 (nothing was deleted by retention)`);
    byOffset.set(node, values);
    byValue.set(node, seen);
  }

  const hw = ev.highWatermark;
  if (hw === null) add('no-hw', `no high watermark known for partition ${p} (neither ListOffsets nor a replication-offset-checkpoint)`);
  if (ev.isr.length < ev.replicas.length) add('isr', `ISR ${JSON.stringify(ev.isr)} is not full (replicas ${ev.replicas.map((r) => r.nodeId).join(',')}) after healing`);

  // Every acknowledged value on every in-sync replica, at its offset.
  for (const a of acks) {
    if (hw !== null && a.offset >= hw) add('above-hw', `acknowledged ${a.value} at ${a.offset} is at or above the high watermark ${hw}`);
    let lost = false;
    for (const node of ev.isr) {
      const values = byOffset.get(node);
      const got = values?.get(a.offset);
      if (got === a.value) continue;
      lost = true;
      const elsewhere = byValue.get(node)?.get(a.value);
      if (elsewhere !== undefined) add('moved', `node ${node}: acknowledged ${a.value} at ${a.offset} is at ${elsewhere} instead`);
      else add('lost', `node ${node}: acknowledged ${a.value} at ${a.offset} is missing (offset holds ${got === undefined ? 'nothing' : JSON.stringify(got)})`);
    }
    if (lost) losses++;
  }

  // In-sync replicas agree below the high watermark.
  const bound = hw ?? acks.reduce((m, a) => (a.offset + 1n > m ? a.offset + 1n : m), 0n);
  const reference = ev.isr[0];
  const refBatches = reference === undefined ? undefined : logs.get(reference);
  if (reference !== undefined && refBatches !== undefined) {
    const refKeys = refBatches.filter((b) => b.lastOffset < bound).map(batchKey);
    for (const node of ev.isr.slice(1)) {
      const keys = (logs.get(node) ?? []).filter((b) => b.lastOffset < bound).map(batchKey);
      const at = refKeys.findIndex((k, i) => keys[i] !== k);
      if (at !== -1 || keys.length !== refKeys.length) {
        const i = at === -1 ? Math.min(keys.length, refKeys.length) : at;
        add('divergent', `nodes ${reference} and ${node} differ below the high watermark ${bound} at batch ${i}: ${refKeys[i] ?? 'none'} vs ${keys[i] ?? 'none'}`);
      }
    }
  }
  return { findings, losses, duplicates: duplicated.size };
}

export function check(acks: readonly Ack[], partitions: readonly PartitionEvidence[]): Verdict {
  const findings: Finding[] = [];
  let losses = 0;
  let duplicates = 0;
  for (const ev of partitions) {
    const r = checkPartition(
      acks.filter((a) => a.partition === ev.partition),
      ev,
    );
    findings.push(...r.findings);
    losses += r.losses;
    duplicates += r.duplicates;
  }
  return { acknowledged: acks.length, losses, duplicates, findings };
}
