// The local log's side of remote-log's port (remote-log/local-log.ts): what a
// closed segment uploads, as Kafka's LogSegmentData (the data file by path, the
// indexes as bytes holding exactly their valid entries, the producer snapshot
// taken at the segment's end, the epoch checkpoint up to it). PartitionLog
// hands these out, so remote-log never reaches into a LogSegment.
import type { LeaderEpochEntry, LogSegmentData } from '../../remote-log/local-log.js';
import { ATTR_COMPRESSION_MASK } from '../protocol/record-batch.js';
import { scanBatchHeaders } from './batch-scan.js';
import { formatCheckpoint } from './checkpoint-file.js';
import { formatEpochEntries } from './leader-epoch-cache.js';
import type { LogSegment } from './log-segment.js';
import { encodeProducerSnapshot } from './producer-snapshots.js';

/** `snapshotPath`: the producer snapshot named by the segment's end, or null when there is none. */
export function logSegmentData(segment: LogSegment, epochs: readonly LeaderEpochEntry[], snapshotPath: string | null): LogSegmentData {
  const checkpoint = formatCheckpoint(formatEpochEntries(epochs.filter((e) => e.startOffset < segment.nextOffset)));
  return {
    logSegment: segment.files.log,
    offsetIndex: Buffer.from(segment.offsetIndex.bytes()),
    timeIndex: Buffer.from(segment.timeIndex.bytes()),
    ...(segment.txnIndex.entries === 0 ? {} : { transactionIndex: Buffer.from(segment.txnIndex.bytes()) }),
    // A segment rolled before snapshots were kept has none: an empty snapshot says "no producer state".
    producerSnapshot: snapshotPath ?? encodeProducerSnapshot([]),
    leaderEpochIndex: Buffer.from(checkpoint, 'utf8'),
  };
}

/** Whether no batch header of the segment names a compression codec. */
export async function allBatchesUncompressed(segment: LogSegment): Promise<boolean> {
  for await (const b of scanBatchHeaders(segment.log, 0, segment.size)) {
    if ((b.header.attributes & ATTR_COMPRESSION_MASK) !== 0) return false;
  }
  return true;
}
