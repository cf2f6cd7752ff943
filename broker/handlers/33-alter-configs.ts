// AlterConfigs (key 33), versions 0-2.
// TOPIC resources: the request's entries replace the topic's whole override
// set (Kafka's legacy semantics), validated first, including the tiering rules
// (no tiering on compacted topics, local retention within total retention,
// disabling tiering needs remote.log.delete.on.disable). BROKER resources, in a
// cluster: the entries replace the dynamic layer of broker "<id>" or of the
// cluster-wide default "" (broker/cluster/cluster-broker-configs.ts); read-only
// keys are refused with INVALID_REQUEST. A single broker refuses them (static).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../protocol/messages/alter-configs.js';
import { alterErrorResponses, alterTopicResources } from './per-partition.js';

export const handler: ApiHandler<AlterConfigsRequest, AlterConfigsResponse, BrokerContext> = {
  apiKey: 33,
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, req, ctx) {
    const admin = broker.dynamicConfig ?? null;
    const responses = await alterTopicResources(req.resources, ctx.log, (r) =>
      broker.topics.alterConfigs(r.resourceName, r.configs, { validateOnly: req.validateOnly }),
      admin === null ? undefined : (r) => admin.alter(r.resourceName, r.configs, req.validateOnly),
    );
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, responses: alterErrorResponses(req.resources, errorCode) };
  },
};
