// IncrementalAlterConfigs (key 44), versions 0-1.
// TOPIC resources: SET, DELETE, APPEND and SUBTRACT on the topic's overrides,
// validated as a whole (tiering rules included) before anything changes.
// BROKER resources are refused: broker configs are static in Sediment.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../protocol/messages/incremental-alter-configs.js';
import { ErrorCode } from '../protocol/errors.js';
import { ResourceType, toErrorPair } from './admin-errors.js';

export const handler: ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, BrokerContext> = {
  apiKey: 44,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const responses = [];
    for (const r of req.resources) {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      if (r.resourceType !== ResourceType.TOPIC) {
        responses.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Sediment has no dynamic broker configs; set them in server.properties' });
        continue;
      }
      try {
        const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
        await broker.topics.incrementalAlterConfigs(r.resourceName, ops, { validateOnly: req.validateOnly });
        responses.push({ ...base, errorCode: 0, errorMessage: null });
      } catch (err) {
        responses.push({ ...base, ...toErrorPair(err, ctx.log) });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, responses: req.resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })) };
  },
};
