// The one place that decides which state changes of a remote segment (and of a
// remote partition's deletion) are legal. Pure.
//
//   (none) -> COPY_SEGMENT_STARTED -> COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_STARTED -> DELETE_SEGMENT_FINISHED
//             COPY_SEGMENT_STARTED -> DELETE_SEGMENT_STARTED            (a failed copy is cleaned up)
//
// Unlike Kafka's RemoteLogSegmentState.isValidTransition, a self transition is
// illegal: a repeated event is a duplicate, and refusing it keeps "every record is
// one state change" true. A duplicate left in the topic by a retried append is
// skipped on replay, so live state and replayed state agree.
import { IllegalStateTransitionError } from './errors.js';
import type { RemoteLogSegmentState, RemotePartitionDeleteState } from './types.js';

export { IllegalStateTransitionError };

/**
 * The state a segment enters when `to` is applied in state `from` (undefined: the
 * segment is unknown). Throws IllegalStateTransitionError when the change is illegal.
 */
export function transitionSegmentState(
  from: RemoteLogSegmentState | undefined,
  to: RemoteLogSegmentState,
  subject = 'remote log segment',
): RemoteLogSegmentState {
  if (!isLegalSegmentTransition(from, to)) throw new IllegalStateTransitionError(from, to, subject);
  return to;
}

export function isLegalSegmentTransition(
  from: RemoteLogSegmentState | undefined,
  to: RemoteLogSegmentState,
): boolean {
  if (from === undefined) return to === 'COPY_SEGMENT_STARTED';
  switch (from) {
    case 'COPY_SEGMENT_STARTED':
      return to === 'COPY_SEGMENT_FINISHED' || to === 'DELETE_SEGMENT_STARTED';
    case 'COPY_SEGMENT_FINISHED':
      return to === 'DELETE_SEGMENT_STARTED';
    case 'DELETE_SEGMENT_STARTED':
      return to === 'DELETE_SEGMENT_FINISHED';
    case 'DELETE_SEGMENT_FINISHED':
      return false;
    default:
      return assertNever(from);
  }
}

/**
 * Remote partition deletion: MARKED (by the controller) is optional, STARTED may be
 * repeated (a deletion retried after a failure), FINISHED is terminal.
 */
export function transitionPartitionDeleteState(
  from: RemotePartitionDeleteState | undefined,
  to: RemotePartitionDeleteState,
  subject = 'remote partition',
): RemotePartitionDeleteState {
  if (!isLegalPartitionDeleteTransition(from, to)) throw new IllegalStateTransitionError(from, to, subject);
  return to;
}

export function isLegalPartitionDeleteTransition(
  from: RemotePartitionDeleteState | undefined,
  to: RemotePartitionDeleteState,
): boolean {
  if (from === undefined) return to === 'DELETE_PARTITION_MARKED' || to === 'DELETE_PARTITION_STARTED';
  switch (from) {
    case 'DELETE_PARTITION_MARKED':
      return to === 'DELETE_PARTITION_MARKED' || to === 'DELETE_PARTITION_STARTED';
    case 'DELETE_PARTITION_STARTED':
      return to === 'DELETE_PARTITION_STARTED' || to === 'DELETE_PARTITION_FINISHED';
    case 'DELETE_PARTITION_FINISHED':
      return false;
    default:
      return assertNever(from);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected state ${String(value)}`);
}
