import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { type Ack, type PartitionEvidence, check, checkPartition } from './checker.js';
import { pathToFileURL } from 'node:url';
import { createRemoteStorage } from '../../remote-log/storage-url.js';
import { readHighWatermarks, readLocalLog, readRemoteLog, type ReplicaLog, type StoredBatch } from './replica-logs.js';

/** A batch of `values` at `base`, leader epoch `epoch` (crc derived from the content, as a real one is). */
function batch(base: number, values: readonly string[], epoch = 0, source = 'local'): StoredBatch {
  return {
    baseOffset: BigInt(base),
    lastOffset: BigInt(base + values.length - 1),
    partitionLeaderEpoch: epoch,
    crc: values.join('|').length * 7919 + base,
    producerId: 1n,
    baseSequence: base,
    control: false,
    records: values.map((v, i) => ({ offset: BigInt(base + i), value: v })),
    source,
  };
}

const replica = (nodeId: number, batches: StoredBatch[]): ReplicaLog => ({ nodeId, batches, problems: [] });
const acked = (values: readonly string[]): Ack[] => values.map((v, i) => ({ partition: 0, offset: BigInt(i), value: v }));

function evidence(replicas: ReplicaLog[], over: Partial<PartitionEvidence> = {}): PartitionEvidence {
  return { partition: 0, isr: replicas.map((r) => r.nodeId), highWatermark: 4n, replicas, remote: null, ...over };
}

const good = (): StoredBatch[] => [batch(0, ['a', 'b']), batch(2, ['c', 'd'])];

describe('fault checker', () => {
  it('passes identical, contiguous replicas holding every acknowledged value', () => {
    const v = check(acked(['a', 'b', 'c', 'd']), [evidence([replica(1, good()), replica(2, good()), replica(3, good())])]);
    assert.deepEqual(v, { acknowledged: 4, losses: 0, duplicates: 0, findings: [] });
  });

  it('counts an acknowledged value missing from one in-sync replica as lost', () => {
    const v = check(acked(['a', 'b', 'c', 'd']), [evidence([replica(1, good()), replica(2, [batch(0, ['a', 'b'])]), replica(3, good())])]);
    assert.equal(v.losses, 2);
    assert.ok(v.findings.some((f) => f.kind === 'lost' && f.detail.includes('node 2') && f.detail.includes('c at 2')));
    assert.ok(v.findings.some((f) => f.kind === 'divergent'));
  });

  it('does not ask a replica outside the ISR for acknowledged values', () => {
    const v = check(acked(['a', 'b', 'c', 'd']), [evidence([replica(1, good()), replica(2, [batch(0, ['a', 'b'])]), replica(3, good())], { isr: [1, 3] })]);
    assert.equal(v.losses, 0);
    assert.deepEqual(v.findings.map((f) => f.kind), ['isr']);
  });

  it('reports a value at another offset than acknowledged as moved and lost', () => {
    const swapped = [batch(0, ['b', 'a']), batch(2, ['c', 'd'])];
    const v = check(acked(['a', 'b', 'c', 'd']), [evidence([replica(1, swapped)])]);
    assert.equal(v.losses, 2);
    assert.ok(v.findings.some((f) => f.kind === 'moved' && f.detail.includes('a at 0 is at 1')));
  });

  it('finds duplicates, gaps and a log that does not start at 0', () => {
    const dup = check(acked(['a', 'b']), [evidence([replica(1, [batch(0, ['a', 'b']), batch(2, ['a'])])], { highWatermark: 3n })]);
    assert.equal(dup.duplicates, 1);
    const gap = checkPartition([], evidence([replica(1, [batch(0, ['a']), batch(2, ['c'])])], { highWatermark: 3n }));
    assert.ok(gap.findings.some((f) => f.kind === 'gap' && f.detail.includes('follows offset 0')));
    const late = checkPartition([], evidence([replica(1, [batch(5, ['x'])])], { highWatermark: 6n }));
    assert.ok(late.findings.some((f) => f.kind === 'gap' && f.detail.includes('starts at 5')));
  });

  it('finds in-sync replicas that differ below the high watermark, not above it', () => {
    const other = [batch(0, ['a', 'b']), batch(2, ['c', 'd'], 1)];
    const below = check(acked(['a', 'b']), [evidence([replica(1, good()), replica(2, other)])]);
    assert.ok(below.findings.some((f) => f.kind === 'divergent' && f.detail.includes('batch 1')));
    const above = check(acked(['a', 'b']), [evidence([replica(1, good()), replica(2, other)], { highWatermark: 2n })]);
    assert.deepEqual(above.findings, []);
  });

  it('requires a high watermark and every acknowledged offset below it', () => {
    const none = check(acked(['a']), [evidence([replica(1, good())], { highWatermark: null })]);
    assert.ok(none.findings.some((f) => f.kind === 'no-hw'));
    const low = check(acked(['a', 'b', 'c']), [evidence([replica(1, good())], { highWatermark: 2n })]);
    assert.ok(low.findings.some((f) => f.kind === 'above-hw' && f.detail.includes('c at 2')));
  });

  it('reads remote segments below the first local batch as part of each replica', () => {
    const remote: ReplicaLog = { nodeId: -1, batches: [batch(0, ['a', 'b'], 0, 'remote')], problems: [] };
    const local = [batch(2, ['c', 'd'])];
    const v = check(acked(['a', 'b', 'c', 'd']), [evidence([replica(1, local), replica(2, good())], { remote })]);
    assert.deepEqual(v.findings, []);
    const without = check(acked(['a', 'b', 'c', 'd']), [evidence([replica(1, local)])]);
    assert.equal(without.losses, 2);
  });
});

describe('replica logs from files', () => {
  it('reads segments written in the broker format, and reports a torn tail', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-logs-'));
    try {
      const part = path.join(dir, 't-0');
      mkdirSync(part);
      const b0 = buildRecordBatch({ baseOffset: 0n, partitionLeaderEpoch: 3, records: [{ value: 'a' }, { value: 'b' }] });
      const b1 = buildRecordBatch({ baseOffset: 2n, partitionLeaderEpoch: 4, compression: 'gzip', records: [{ value: 'c' }] });
      writeFileSync(path.join(part, '00000000000000000000.log'), b0);
      writeFileSync(path.join(part, '00000000000000000002.log'), Buffer.concat([b1, b1.subarray(0, 20)]));
      writeFileSync(path.join(dir, 'replication-offset-checkpoint'), '0\n1\nt 0 3\n');
      const log = await readLocalLog(2, dir, 't', 0);
      assert.deepEqual(log.batches.map((b) => [b.baseOffset, b.lastOffset, b.partitionLeaderEpoch]), [[0n, 1n, 3], [2n, 2n, 4]]);
      assert.deepEqual(log.batches.flatMap((b) => b.records.map((r) => r.value)), ['a', 'b', 'c']);
      assert.equal(log.problems.length, 1);
      assert.match(log.problems[0] ?? '', /00000000000000000002\.log: partial batch header|runs past the end/);
      assert.deepEqual(await readHighWatermarks(dir), new Map([['t-0', 3n]]));
      const missing = await readLocalLog(2, dir, 't', 1);
      assert.equal(missing.batches.length, 0);
      assert.match(missing.problems[0] ?? '', /no partition directory/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('remote segments from a file:// store', () => {
  it('reads the batches of finished segments of one partition, in offset order, and skips unfinished ones', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fault-remote-'));
    try {
      const url = pathToFileURL(dir).href;
      const storage = createRemoteStorage(url);
      const topicId = 'AAAAAAAAAAAAAAAAAAAAAQ';
      const files = (data: Buffer) => ({ data, offsetIndex: Buffer.alloc(0), timeIndex: Buffer.alloc(0), producerSnapshot: Buffer.alloc(0), leaderEpochCheckpoint: Buffer.from('0\n0\n') });
      const seg = (base: bigint, id: string) => ({ topic: 't', topicId, partition: 0, baseOffset: base, segmentId: id });
      await storage.copySegment(seg(2n, 'BBBBBBBBBBBBBBBBBBBBBA'), files(buildRecordBatch({ baseOffset: 2n, records: [{ value: 'c' }] })));
      await storage.copySegment(seg(0n, 'CCCCCCCCCCCCCCCCCCCCCA'), files(buildRecordBatch({ baseOffset: 0n, records: [{ value: 'a' }, { value: 'b' }] })));
      await storage.copySegment({ ...seg(0n, 'DDDDDDDDDDDDDDDDDDDDDA'), partition: 1 }, files(buildRecordBatch({ baseOffset: 0n, records: [{ value: 'other' }] })));
      // A copy that never finished: its manifest is missing.
      await storage.copySegment(seg(3n, 'EEEEEEEEEEEEEEEEEEEEEA'), files(buildRecordBatch({ baseOffset: 3n, records: [{ value: 'unfinished' }] })));
      await storage.close();
      const manifests = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('EEEEEEEEEEEEEEEEEEEEEA') && f.endsWith('.manifest'));
      assert.equal(manifests.length, 1);
      unlinkSync(path.join(dir, manifests[0] ?? ''));
      const log = await readRemoteLog(url, 't', 0);
      assert.deepEqual(log.problems, []);
      assert.deepEqual(log.batches.flatMap((b) => b.records.map((r) => [r.offset, r.value])), [[0n, 'a'], [1n, 'b'], [2n, 'c']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
