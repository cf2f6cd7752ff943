import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import {
  IllegalStateTransitionError,
  isLegalPartitionDeleteTransition,
  isLegalSegmentTransition,
  transitionPartitionDeleteState,
  transitionSegmentState,
} from '../../../metadata/remote-log-metadata/state-machine.js';
import type { RemoteLogSegmentState, RemotePartitionDeleteState } from '../../../metadata/remote-log-metadata/types.js';
import {
  REMOTE_LOG_SEGMENT_STATES,
  REMOTE_PARTITION_DELETE_STATES,
  partitionDeleteStateForId,
  partitionDeleteStateId,
  segmentStateForId,
  segmentStateId,
} from '../../../metadata/remote-log-metadata/types.js';

const LEGAL_SEGMENT = new Set([
  '(none)->COPY_SEGMENT_STARTED',
  'COPY_SEGMENT_STARTED->COPY_SEGMENT_FINISHED',
  'COPY_SEGMENT_STARTED->DELETE_SEGMENT_STARTED',
  'COPY_SEGMENT_FINISHED->DELETE_SEGMENT_STARTED',
  'DELETE_SEGMENT_STARTED->DELETE_SEGMENT_FINISHED',
]);

describe('remote log segment state machine', () => {
  const froms: Array<RemoteLogSegmentState | undefined> = [undefined, ...REMOTE_LOG_SEGMENT_STATES];
  for (const from of froms) {
    for (const to of REMOTE_LOG_SEGMENT_STATES) {
      const name = `${from ?? '(none)'}->${to}`;
      const legal = LEGAL_SEGMENT.has(name);
      it(`${name} is ${legal ? 'legal' : 'illegal'}`, () => {
        assert.equal(isLegalSegmentTransition(from, to), legal);
        if (legal) {
          assert.equal(transitionSegmentState(from, to), to);
        } else {
          assert.throws(
            () => transitionSegmentState(from, to, 'segment s'),
            (e: unknown) =>
              e instanceof IllegalStateTransitionError &&
              e.from === from &&
              e.to === to &&
              e.code === ErrorCode.UNKNOWN_SERVER_ERROR &&
              e.message.includes('segment s'),
          );
        }
      });
    }
  }

  it('uses Kafka state ids 0..3', () => {
    assert.deepEqual(REMOTE_LOG_SEGMENT_STATES.map(segmentStateId), [0, 1, 2, 3]);
    for (const s of REMOTE_LOG_SEGMENT_STATES) assert.equal(segmentStateForId(segmentStateId(s)), s);
    assert.equal(segmentStateForId(4), undefined);
  });
});

const LEGAL_DELETE = new Set([
  '(none)->DELETE_PARTITION_MARKED',
  '(none)->DELETE_PARTITION_STARTED',
  'DELETE_PARTITION_MARKED->DELETE_PARTITION_MARKED',
  'DELETE_PARTITION_MARKED->DELETE_PARTITION_STARTED',
  'DELETE_PARTITION_STARTED->DELETE_PARTITION_STARTED',
  'DELETE_PARTITION_STARTED->DELETE_PARTITION_FINISHED',
]);

describe('remote partition delete state machine', () => {
  const froms: Array<RemotePartitionDeleteState | undefined> = [undefined, ...REMOTE_PARTITION_DELETE_STATES];
  for (const from of froms) {
    for (const to of REMOTE_PARTITION_DELETE_STATES) {
      const name = `${from ?? '(none)'}->${to}`;
      const legal = LEGAL_DELETE.has(name);
      it(`${name} is ${legal ? 'legal' : 'illegal'}`, () => {
        assert.equal(isLegalPartitionDeleteTransition(from, to), legal);
        if (legal) assert.equal(transitionPartitionDeleteState(from, to), to);
        else assert.throws(() => transitionPartitionDeleteState(from, to), IllegalStateTransitionError);
      });
    }
  }

  it('uses Kafka state ids 0..2', () => {
    assert.deepEqual(REMOTE_PARTITION_DELETE_STATES.map(partitionDeleteStateId), [0, 1, 2]);
    for (const s of REMOTE_PARTITION_DELETE_STATES) assert.equal(partitionDeleteStateForId(partitionDeleteStateId(s)), s);
  });
});
