// A transaction marker appended to a partition this broker leads (the local
// half of WriteTxnMarkers, and the coordinator's own markers). As Kafka's
// ReplicaManager.appendRecords with requiredAcks=-1 for markers: with the ISR
// smaller than min.insync.replicas nothing is appended and the write fails
// NOT_ENOUGH_REPLICAS (Partition.appendRecordsToLeader makes no exception for
// origin COORDINATOR); otherwise it is acknowledged only once the ISR holds it
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below the minimum
// meanwhile). Until then (or on a timeout / lost leadership) it fails and the
// coordinator retries it.
import type { AppendOptions, AppendResult } from '../log/partition-log.js';
import type { TxnMarker } from './txn-coordinator.js';
import { buildEndTxnMarkerBatch } from '../protocol/record-batch.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';

export interface MarkerLog {
  append(records: Buffer, opts: AppendOptions): Promise<AppendResult>;
}

export interface MarkerReplication {
  /** NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas, else NONE. */
  checkEnoughReplicas(topic: string, partition: number): number;
  appended(topic: string, partition: number): void;
  awaitReplication(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<number>;
}

export interface LocalMarkerWriterDeps {
  readonly log: (topic: string, partition: number) => MarkerLog | undefined;
  readonly leaderEpoch: (topic: string, partition: number) => number;
  /** Null alone (no followers): the append is the acknowledgement. */
  readonly replication: MarkerReplication | null;
  readonly notify: (topic: string, partition: number) => void;
  readonly now: () => number;
  readonly timeoutMs: number;
}

export function localMarkerWriter(d: LocalMarkerWriterDeps): (tp: { readonly topic: string; readonly partition: number }, marker: TxnMarker) => Promise<void> {
  return async (tp, marker) => {
    const log = d.log(tp.topic, tp.partition);
    if (log === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${tp.topic}-${tp.partition} is not on this broker`);
    const enough = d.replication?.checkEnoughReplicas(tp.topic, tp.partition) ?? ErrorCode.NONE;
    if (enough !== ErrorCode.NONE) throw new KafkaError(enough, `the ISR of ${tp.topic}-${tp.partition} is below min.insync.replicas: no marker appended`);
    const batch = buildEndTxnMarkerBatch({ ...marker, timestamp: d.now() });
    const r = await log.append(batch, { leaderEpoch: d.leaderEpoch(tp.topic, tp.partition), isFromClient: false });
    d.replication?.appended(tp.topic, tp.partition);
    d.notify(tp.topic, tp.partition);
    if (d.replication === null) return;
    const code = await d.replication.awaitReplication(tp.topic, tp.partition, r.lastOffset + 1n, d.timeoutMs);
    if (code !== ErrorCode.NONE) throw new KafkaError(code, `the marker at ${r.lastOffset} of ${tp.topic}-${tp.partition} is not replicated to the ISR: ${errorName(code)}`);
  };
}
