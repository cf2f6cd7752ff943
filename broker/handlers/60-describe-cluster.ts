// DescribeCluster (key 60), versions 0-2.
// The live brokers and the controller as the cluster image shows them; without
// etcd.connect the one broker is the cluster and its controller. Only the broker endpoint
// type (1) is served; asking for controllers (2) gets UNSUPPORTED_ENDPOINT_TYPE.
// Cluster authorized operations, when asked for, are every cluster operation,
// as Kafka answers without an authorizer. v2 (KIP-1073) may ask for fenced
// brokers too and flags each: a listed broker is never fenced.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DescribeClusterRequest, DescribeClusterResponse } from '../protocol/messages/describe-cluster.js';
import { ErrorCode } from '../protocol/errors.js';
import { AUTHORIZED_OPERATIONS_OMITTED as NOT_REQUESTED, CLUSTER_AUTHORIZED_OPERATIONS } from './authorized-operations.js';

const BROKERS = 1;

export const handler: ApiHandler<DescribeClusterRequest, DescribeClusterResponse, BrokerContext> = {
  apiKey: 60,
  minVersion: 0,
  maxVersion: 2,
  handle(broker, req) {
    if (req.endpointType !== BROKERS) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: 'only broker endpoints are served', endpointType: req.endpointType, clusterId: broker.clusterId, controllerId: -1, brokers: [], clusterAuthorizedOperations: NOT_REQUESTED };
    }
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      endpointType: BROKERS,
      clusterId: broker.clusterId,
      controllerId: broker.cluster?.controllerId ?? broker.nodeId,
      // Live registrations only: a broker whose lease lapsed is gone from the image, so none is fenced.
      brokers: broker.cluster?.brokers().map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack, isFenced: false })) ?? [
        { brokerId: broker.nodeId, host: broker.advertised.host, port: broker.advertised.port, rack: null, isFenced: false },
      ],
      clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? CLUSTER_AUTHORIZED_OPERATIONS : NOT_REQUESTED,
    };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, endpointType: req.endpointType, clusterId: '', controllerId: -1, brokers: [], clusterAuthorizedOperations: NOT_REQUESTED };
  },
};
