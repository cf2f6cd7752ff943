// The offsets-topic workload: 100k commits over 100 keys (5 groups x 20
// partitions), one record per batch as the group coordinator writes them, with
// the cleaner's periodic turn running along. The partition must stay bounded
// and still answer every key with its last commit.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { buildRecordBatch } from '../../../../broker/protocol/record-batch.js';
import { tempDir } from '../helpers.js';
import { T0, cleanerFor, openCompacted, readBack } from './helpers.js';

const COMMITS = 100_000;
const KEYS = 100;
const PER_APPEND = 500;
const SEGMENT_BYTES = 256 * 1024;

describe('compaction keeps a committed-offsets partition bounded', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir: root, cleanup } = await tempDir('sediment-bounded-')));
  afterEach(async () => cleanup());

  it('100k commits over 100 keys: bytes on disk after cleaning are a small fraction of those written', async (t) => {
    const { log, clock } = await openCompacted(root, { segmentBytes: SEGMENT_BYTES, indexIntervalBytes: 4096, segmentMs: 3_600_000 });
    clock.set(T0);
    const { cleaner } = cleanerFor(() => [log], clock, { dedupeBufferSize: 64 * 1024 });
    const key = (n: number): string => `group-${n % 5}/orders/${Math.floor(n / 5) % 20}`;
    let written = 0;
    let maxAfterClean = 0;
    let rounds = 0;
    for (let n = 0; n < COMMITS; n += PER_APPEND) {
      const batches: Buffer[] = [];
      for (let i = n; i < n + PER_APPEND; i++) {
        batches.push(buildRecordBatch({ records: [{ key: key(i % KEYS), value: `offset=${i};metadata=;leaderEpoch=0`, timestamp: clock.now() }] }));
      }
      const records = Buffer.concat(batches);
      written += records.length;
      await log.append(records, { leaderEpoch: 0, isFromClient: false });
      if ((n + PER_APPEND) % 10_000 === 0) {
        clock.advance(1000);
        if ((await cleaner.runOnce()) !== null) {
          rounds++;
          maxAfterClean = Math.max(maxAfterClean, log.size);
        }
      }
    }
    await log.roll();
    await cleaner.cleanNow(log);
    const rb = await readBack(log, 0n);
    assert.equal(rb.table.size, KEYS);
    for (let k = 0; k < KEYS; k++) {
      const last = COMMITS - KEYS + k;
      assert.equal(rb.table.get(key(k)), `offset=${last};metadata=;leaderEpoch=0`, `latest commit of ${key(k)}`);
    }
    assert.equal(rb.offsets.length, KEYS, 'one record per key is left');
    assert.ok(rounds >= 5, `the periodic turn cleaned ${rounds} times`);
    assert.ok(log.size < written / 100, `${log.size} bytes left of ${written} written`);
    assert.ok(maxAfterClean < 2 * SEGMENT_BYTES, `after each round at most ${maxAfterClean} bytes (segment.bytes ${SEGMENT_BYTES})`);
    assert.ok(cleaner.lastStats !== null && cleaner.lastStats.mapUtilization < 0.9);
    t.diagnostic(`written ${written} B, left ${log.size} B, largest after a periodic round ${maxAfterClean} B, ${rounds} periodic rounds`);
    await log.close();
  });
});
