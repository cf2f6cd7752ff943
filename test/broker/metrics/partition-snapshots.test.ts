import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partitionSnapshots, tieringPartitions, type BrokerParts } from '../../../broker/metrics/broker-view.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import { RemoteLogMetadataNotReadyError } from '../../../metadata/remote-log-metadata/errors.js';
import type { TopicRecord } from '../../../metadata/topics.js';

const record = { name: 'tiered', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitionCount: 1 } as unknown as TopicRecord;
const log = {
  currentConfig: { remoteStorageEnable: true },
  logStartOffset: 0n,
  localLogStartOffset: 40n,
  highWatermark: 100n,
  lastStableOffset: 100n,
  logEndOffset: 100n,
  size: 4096,
  closedSegments: () => [],
  activeSegment: { baseOffset: 40n, size: 4096, largestTimestamp: 0n },
} as unknown as PartitionLog;
const notReady = (): never => {
  throw new RemoteLogMetadataNotReadyError('remote log metadata for tiered-0 is not loaded yet (metadata partition 42)');
};

function parts(remote: Record<string, unknown>): BrokerParts {
  return {
    topics: {
      store: { list: () => [record], getById: () => record },
      partition: () => ({ get logStartOffset(): bigint { return notReady(); } }),
      partitionLog: () => log,
      isInternal: () => false,
    },
    groups: {} as BrokerParts['groups'],
    remoteLogManager: remote as unknown as BrokerParts['remoteLogManager'],
  };
}

describe('partition snapshots while the remote log metadata loads', () => {
  it('show the partition with its local figures and remoteMetadataLoading instead of failing', () => {
    const p = parts({ partitionStats: notReady, remoteSegments: notReady, lastError: () => undefined });
    const [s] = partitionSnapshots(p, {});
    assert.equal(s?.topic, 'tiered');
    assert.equal(s?.logEndOffset, 100n);
    assert.equal(s?.logStartOffset, 0n, 'the local log start stands in');
    assert.equal(s?.remoteSegments, 0);
    assert.equal(s?.highestRemoteOffset, -1n);
    assert.equal(s?.remoteMetadataLoading, true);
    assert.deepEqual(tieringPartitions(p), [], 'the tiering view leaves it out until loaded');
  });

  it('any other failure still fails the request', () => {
    const p = parts({ partitionStats: () => { throw new Error('disk on fire'); }, remoteSegments: () => [], lastError: () => undefined });
    assert.throws(() => partitionSnapshots(p, {}), /disk on fire/);
  });
});
