// FindCoordinator (key 10), versions 0-6.
// A single broker coordinates every group (key type 0) and every
// transactional id (key type 1): the answer is its advertised endpoint. In a
// cluster it is the leader of the key's __consumer_offsets /
// __transaction_state partition (Kafka's partitionFor), and
// COORDINATOR_NOT_AVAILABLE while that partition has no leader or the topic
// is still being created (on the first request, as Kafka does).
// v4+ batches keys (one answer per key). Share-partition keys (key type 2, v6+,
// "groupId:topicId:partition") go to the share coordinator; a malformed one
// and unknown key types get INVALID_REQUEST. v0 has no key type: groups. v5 only
// lets the client accept TRANSACTION_ABORTABLE (KIP-890).
// A found coordinator's error message is what Kafka 4.3.1 answers (captured in
// test/golden/kafka-responses): "NONE" in v1-3 (Errors.NONE's message), "" per key in v4+.
// Not implemented: authorization (no GROUP/TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { FindCoordinatorRequest, FindCoordinatorResponse } from '../protocol/messages/find-coordinator.js';
import { ErrorCode } from '../protocol/errors.js';

const GROUP = 0;
const TRANSACTION = 1;
const SHARE = 2;

interface Answer {
  nodeId: number;
  host: string;
  port: number;
  errorCode: number;
  errorMessage: string | null;
}

function answer(broker: GroupHandlerContext, keyType: number, key: string, batched: boolean): Answer {
  if (keyType === SHARE && !/^.+:[A-Za-z0-9_-]{22}:\d+$/.test(key)) {
    return { nodeId: -1, host: '', port: -1, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Invalid share coordinator key ${key}` };
  }
  if (keyType !== GROUP && keyType !== TRANSACTION && keyType !== SHARE) {
    return { nodeId: -1, host: '', port: -1, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported key type ${keyType}` };
  }
  const node = broker.coordinatorNode(keyType, key);
  if (node === null) return { nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'The coordinator is not available.' };
  return { nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: batched ? '' : 'NONE' };
}

export const handler: ApiHandler<FindCoordinatorRequest, FindCoordinatorResponse, GroupHandlerContext> = {
  apiKey: 10,
  minVersion: 0,
  maxVersion: 6,
  handle(broker, req, ctx) {
    const keyType = ctx.apiVersion >= 1 ? req.keyType : GROUP;
    if (ctx.apiVersion >= 4) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        nodeId: -1,
        host: '',
        port: -1,
        coordinators: req.coordinatorKeys.map((key) => ({ key, ...answer(broker, keyType, key, true) })),
      };
    }
    return { throttleTimeMs: 0, ...answer(broker, keyType, req.key, false), coordinators: [] };
  },
  errorResponse(req, errorCode, ctx) {
    const none = { nodeId: -1, host: '', port: -1, errorCode, errorMessage: null };
    return {
      throttleTimeMs: 0,
      ...none,
      coordinators: ctx.apiVersion >= 4 ? req.coordinatorKeys.map((key) => ({ key, ...none })) : [],
    };
  },
};
