// The cluster metadata store's failures, each carrying the Kafka error code a
// request handler answers with (Kafka's controller answers the same situations
// with these codes).
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import type { PartitionState, RegisteredBroker } from './records.js';

/** The store could not be reached in time: retriable, nothing was changed (or the outcome is unknown and a retry is safe: every write is a CAS). */
export class MetadataStoreUnavailableError extends KafkaError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.REQUEST_TIMED_OUT, message, options);
    this.name = 'MetadataStoreUnavailableError';
  }
}

/** The store holds a layout written by an incompatible version: refused, never overwritten. */
export class IncompatibleLayoutError extends KafkaError {
  constructor(
    readonly found: string,
    readonly expected: number,
    where: string,
  ) {
    super(
      ErrorCode.UNKNOWN_SERVER_ERROR,
      `The cluster metadata at ${where} has layout ${found}; this broker understands layout ${expected} only. ` +
        'Refusing to use or overwrite it: point etcd.connect at another prefix, or run a Sediment version that reads this layout.',
    );
    this.name = 'IncompatibleLayoutError';
  }
}

/** The store belongs to another cluster than the one this broker's log dirs name. */
export class InconsistentClusterIdError extends KafkaError {
  constructor(
    readonly storeClusterId: string,
    readonly expectedClusterId: string,
  ) {
    super(
      ErrorCode.INCONSISTENT_CLUSTER_ID,
      `The cluster metadata store belongs to cluster ${storeClusterId}, but this broker expects cluster ${expectedClusterId} (meta.properties).`,
    );
    this.name = 'InconsistentClusterIdError';
  }
}

/** node.id is held by a live broker (its lease has not expired). */
export class DuplicateBrokerRegistrationError extends KafkaError {
  constructor(readonly holder: RegisteredBroker) {
    const where = holder.endpoints.map((e) => `${e.name}://${e.host}:${e.port}`).join(',') || 'no listeners';
    super(
      ErrorCode.DUPLICATE_BROKER_REGISTRATION,
      `node.id ${holder.nodeId} is already registered by a live broker (incarnation ${holder.incarnationId}, ${where}` +
        `${holder.rack === null ? '' : `, rack ${holder.rack}`}, broker epoch ${holder.brokerEpoch}). ` +
        'Give this broker another node.id, or stop the other one (its registration ends when its session times out).',
    );
    this.name = 'DuplicateBrokerRegistrationError';
  }
}

/**
 * A partition change based on a state that is no longer current: a stale leader
 * epoch is FENCED_LEADER_EPOCH, a stale partition epoch INVALID_UPDATE_VERSION,
 * as Kafka answers a stale AlterPartition. `current` is what the store holds.
 */
export class StalePartitionUpdateError extends KafkaError {
  constructor(
    code: typeof ErrorCode.FENCED_LEADER_EPOCH | typeof ErrorCode.INVALID_UPDATE_VERSION,
    readonly current: PartitionState,
    message: string,
  ) {
    super(code, message);
    this.name = 'StalePartitionUpdateError';
  }
}
