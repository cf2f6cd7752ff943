// Errors of the remote log metadata store, each carrying its Kafka error code.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';

/** A state change the state machine refuses (see state-machine.ts). */
export class IllegalStateTransitionError extends KafkaError {
  constructor(
    readonly from: string | undefined,
    readonly to: string,
    subject: string,
  ) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, `illegal state transition ${from ?? '(none)'} -> ${to} for ${subject}`);
    this.name = 'IllegalStateTransitionError';
  }
}

/** Kafka's RemoteResourceNotFoundException: an update names a segment the store does not know. */
export class RemoteResourceNotFoundError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'RemoteResourceNotFoundError';
  }
}

/**
 * The partition's metadata is still being replayed. Retriable: Kafka throws
 * ReplicaNotAvailableException here (RemotePartitionMetadataStore) so that clients retry.
 */
export class RemoteLogMetadataNotReadyError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.REPLICA_NOT_AVAILABLE, message);
    this.name = 'RemoteLogMetadataNotReadyError';
  }
}

/** A segment or event whose fields are inconsistent (empty epochs, end before start, ...). */
export class InvalidRemoteLogMetadataError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.INVALID_REQUEST, message);
    this.name = 'InvalidRemoteLogMetadataError';
  }
}
