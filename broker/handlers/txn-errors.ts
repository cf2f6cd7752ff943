// KIP-588: PRODUCER_FENCED exists for InitProducerId v4+, AddPartitionsToTxn
// v2+, AddOffsetsToTxn v2+, EndTxn v2+ and TxnOffsetCommit v3+; older request
// versions get INVALID_PRODUCER_EPOCH instead.
import { ErrorCode } from '../protocol/errors.js';

export function fencedForVersion(code: number, version: number, firstVersionWithFenced: number): number {
  return code === ErrorCode.PRODUCER_FENCED && version < firstVersionWithFenced ? ErrorCode.INVALID_PRODUCER_EPOCH : code;
}
