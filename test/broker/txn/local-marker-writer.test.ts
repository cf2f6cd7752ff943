// localMarkerWriter (broker/txn/local-marker-writer.ts): a marker appended by
// the leader is acknowledged only once the ISR holds it (Kafka appends
// markers with requiredAcks=-1), and with the ISR below min.insync.replicas
// it is refused before anything is appended; alone, the append is enough.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { localMarkerWriter, type MarkerLog, type MarkerReplication } from '../../../broker/txn/local-marker-writer.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import type { AppendResult } from '../../../broker/log/partition-log.js';
import type { TxnMarker } from '../../../broker/txn/txn-coordinator.js';

const marker: TxnMarker = { producerId: 7n, producerEpoch: 1, type: 'COMMIT', coordinatorEpoch: 0 };

function fakeLog(): MarkerLog & { appends: number } {
  const l = {
    appends: 0,
    async append(): Promise<AppendResult> {
      l.appends++;
      return { lastOffset: 41n } as AppendResult;
    },
  };
  return l;
}

function fakeReplication(): MarkerReplication & { waited: bigint[]; answer: (code: number) => void; enough: number } {
  let resolve: ((code: number) => void) | null = null;
  const r = {
    waited: [] as bigint[],
    enough: ErrorCode.NONE as number,
    checkEnoughReplicas(): number {
      return r.enough;
    },
    appended(): void {},
    awaitReplication(_t: string, _p: number, offset: bigint): Promise<number> {
      r.waited.push(offset);
      return new Promise<number>((res) => (resolve = res));
    },
    answer(code: number): void {
      resolve?.(code);
    },
  };
  return r;
}

function writer(log: MarkerLog | undefined, replication: MarkerReplication | null) {
  return localMarkerWriter({ log: () => log, leaderEpoch: () => 3, replication, notify: () => {}, now: () => 1000, timeoutMs: 10_000 });
}

it('in a cluster the marker is acknowledged only after the ISR holds its offset', async () => {
  const log = fakeLog();
  const repl = fakeReplication();
  let done = false;
  const p = writer(log, repl)({ topic: 't', partition: 0 }, marker).then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(log.appends, 1);
  assert.deepEqual(repl.waited, [42n], 'waits for the offset after the marker');
  assert.equal(done, false, 'not acknowledged before the ISR has it');
  repl.answer(ErrorCode.NONE);
  await p;
  assert.equal(done, true);
});

it('a replication failure (timeout, lost leadership) fails the marker write with that error', async () => {
  const repl = fakeReplication();
  const p = writer(fakeLog(), repl)({ topic: 't', partition: 0 }, marker);
  await new Promise((r) => setImmediate(r));
  repl.answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  await assert.rejects(p, (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

it('alone the append is the acknowledgement; a partition not here is UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const log = fakeLog();
  await writer(log, null)({ topic: 't', partition: 0 }, marker);
  assert.equal(log.appends, 1);
  await assert.rejects(writer(undefined, null)({ topic: 't', partition: 0 }, marker), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

it('with the ISR below min.insync.replicas the marker is refused NOT_ENOUGH_REPLICAS and nothing is appended (Kafka: requiredAcks=-1, origin COORDINATOR too)', async () => {
  const log = fakeLog();
  const repl = fakeReplication();
  repl.enough = ErrorCode.NOT_ENOUGH_REPLICAS;
  await assert.rejects(writer(log, repl)({ topic: 't', partition: 0 }, marker), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_ENOUGH_REPLICAS);
  assert.equal(log.appends, 0);
  assert.deepEqual(repl.waited, []);
});
