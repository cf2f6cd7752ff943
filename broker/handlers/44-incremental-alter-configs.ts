// IncrementalAlterConfigs (key 44), versions 0-1.
// TOPIC resources: SET, DELETE, APPEND and SUBTRACT on the topic's overrides,
// validated as a whole (tiering rules included) before anything changes.
// BROKER resources are refused: broker configs are static in Sediment.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../protocol/messages/incremental-alter-configs.js';
import { alterErrorResponses, alterTopicResources } from './per-partition.js';

export const handler: ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, BrokerContext> = {
  apiKey: 44,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const responses = await alterTopicResources(req.resources, ctx.log, (r) => {
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return broker.topics.incrementalAlterConfigs(r.resourceName, ops, { validateOnly: req.validateOnly });
    });
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, responses: alterErrorResponses(req.resources, errorCode) };
  },
};
