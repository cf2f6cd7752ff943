// The replication-offset-checkpoint: the HWs of replicated partitions, per
// log dir, written and read back; unreplicated partitions are not in it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { HighWatermarkCheckpoints, REPLICATION_OFFSET_CHECKPOINT } from '../../../broker/replica/high-watermark-checkpoint.js';
import { batch, openLog, tempDir } from '../log/helpers.js';

describe('HighWatermarkCheckpoints', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('writes each replicated partition\'s HW into its log dir and gives it back after a restart', async () => {
    const { log: replicated } = await openLog(dir);
    await replicated.append(batch({ count: 5 }), { leaderEpoch: 0, isFromClient: true });
    replicated.enableReplicatedHighWatermark();
    replicated.setHighWatermark(3n);
    const { log: single } = await openLog(path.join(dir, 'other'));
    await new HighWatermarkCheckpoints().write([replicated, single]);
    assert.equal(await readFile(path.join(dir, REPLICATION_OFFSET_CHECKPOINT), 'utf8'), '0\n1\ntopic 0 3\n');
    const loaded = new HighWatermarkCheckpoints();
    await loaded.load([dir, path.join(dir, 'other'), path.join(dir, 'missing')]);
    assert.equal(loaded.initial(replicated), 3n);
    assert.equal(loaded.initial(single), undefined);
    await replicated.close();
    await single.close();
  });
});
