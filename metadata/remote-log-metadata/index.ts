// The remote log metadata store: public surface for the broker and the RemoteLogManager.
export * from './types.js';
export * from './errors.js';
export {
  isLegalPartitionDeleteTransition,
  isLegalSegmentTransition,
  transitionPartitionDeleteState,
  transitionSegmentState,
} from './state-machine.js';
export { RemoteLogMetadataCache, validateSegment } from './remote-log-metadata-cache.js';
export {
  RemoteLogMetadataManager,
  type RemoteLogMetadataManagerOptions,
  type RemoteLogMetadataStats,
  type SkippedRecord,
} from './remote-log-metadata-manager.js';
export { MemoryMetadataTopicLog, type MetadataTopicLog, type MetadataTopicRecord } from './metadata-topic-log.js';
export { deserializeRemoteLogMetadata, serializeRemoteLogMetadata } from './serde.js';
export { metadataPartition, murmur2 } from './metadata-partitioner.js';
