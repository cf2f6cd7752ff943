// TxnOffsetCommit (key 28), versions 0-4: offsets committed inside a
// transaction. The producer must own the transactional id with the current
// epoch and have added the group (AddOffsetsToTxn); the group coordinator then
// writes the offsets into __consumer_offsets as a transactional batch of the
// producer and holds them pending: the transaction's marker decides them.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../protocol/messages/txn-offset-commit.js';
import { ErrorCode } from '../protocol/errors.js';
import { fencedForVersion } from './txn-errors.js';

function allWith(req: TxnOffsetCommitRequest, errorCode: number): TxnOffsetCommitResponse {
  return {
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
  };
}

export const handler: ApiHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse, BrokerContext> = {
  apiKey: 28,
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, req, ctx) {
    const offsetsPartition = broker.groups.partitionFor(req.groupId);
    const check = broker.txns.verifyTxnOffsetCommit(req.transactionalId, req.producerId, req.producerEpoch, offsetsPartition);
    if (check !== ErrorCode.NONE) return allWith(req, fencedForVersion(check, ctx.apiVersion, 3));
    const r = await broker.groups.txnCommitOffsets({
      groupId: req.groupId,
      producerId: req.producerId,
      producerEpoch: req.producerEpoch,
      generationId: ctx.apiVersion >= 3 ? req.generationId : -1,
      memberId: ctx.apiVersion >= 3 ? req.memberId : '',
      groupInstanceId: ctx.apiVersion >= 3 ? req.groupInstanceId : null,
      retentionTimeMs: -1,
      groupIdNotFoundSupported: false,
      topics: req.topics,
    });
    return { throttleTimeMs: 0, topics: r.topics };
  },
  errorResponse(req, errorCode) {
    return allWith(req, errorCode);
  },
};
