// The parts of a log truncation (Kafka's UnifiedLog.truncateTo, used when a
// follower's log diverged from its leader's, KIP-101/279) that are not the
// segment files themselves: producer state is rebuilt from the newest producer
// snapshot at or below the new end plus a replay of the batches after it, and
// snapshots past the new end are deleted (they describe batches that are gone).
import type { LogSegment } from './log-segment.js';
import { replaySegments } from './producer-replay.js';
import { deleteSnapshot, listSnapshotOffsets, readSnapshot } from './producer-snapshots.js';
import type { ProducerStateManager } from './producer-state.js';

export async function rebuildProducerState(dir: string, psm: ProducerStateManager, segments: readonly LogSegment[], logStartOffset: bigint, endOffset: bigint): Promise<void> {
  const offsets = await listSnapshotOffsets(dir);
  for (const off of offsets) if (off > endOffset) await deleteSnapshot(dir, off);
  let loaded = false;
  for (let i = offsets.length - 1; i >= 0 && !loaded; i--) {
    const off = offsets[i] as bigint;
    if (off > endOffset) continue;
    const entries = await readSnapshot(dir, off);
    if (entries === null) continue;
    psm.loadEntries(entries, off);
    loaded = true;
  }
  const first = segments[0];
  if (!loaded) psm.loadEntries([], first === undefined ? logStartOffset : first.baseOffset);
  const from = psm.mapEndOffsetValue;
  if (from < endOffset) await replaySegments(psm, segments, from, endOffset);
  psm.updateMapEndOffset(endOffset);
}
