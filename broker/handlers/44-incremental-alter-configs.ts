// IncrementalAlterConfigs (key 44), versions 0-1.
// TOPIC resources: SET, DELETE, APPEND and SUBTRACT on the topic's overrides,
// validated as a whole (tiering rules included) before anything changes.
// BROKER resources are refused: broker configs are static in Sediment.
// GROUP resources: the share group configs (broker/share/share-group-configs.ts),
// SET and DELETE.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../protocol/messages/incremental-alter-configs.js';
import { alterErrorResponses, alterTopicResources } from './per-partition.js';
import { ResourceType, toErrorPair } from './admin-errors.js';

export const handler: ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, BrokerContext> = {
  apiKey: 44,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const groupAnswers = new Map<(typeof req.resources)[number], { errorCode: number; errorMessage: string | null }>();
    for (const r of req.resources.filter((x) => x.resourceType === ResourceType.GROUP)) {
      try {
        if (broker.shareGroups === undefined || broker.shareGroups === null) throw new Error('share groups are not enabled');
        await broker.shareGroups.configs.alter(r.resourceName, r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })), req.validateOnly);
        groupAnswers.set(r, { errorCode: 0, errorMessage: null });
      } catch (err) {
        groupAnswers.set(r, toErrorPair(err, ctx.log));
      }
    }
    const others = await alterTopicResources(req.resources.filter((x) => x.resourceType !== ResourceType.GROUP), ctx.log, (r) => {
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return broker.topics.incrementalAlterConfigs(r.resourceName, ops, { validateOnly: req.validateOnly });
    });
    const responses = req.resources.map((r) => {
      const g = groupAnswers.get(r);
      return g === undefined ? others.shift()! : { resourceType: r.resourceType, resourceName: r.resourceName, ...g };
    });
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, responses: alterErrorResponses(req.resources, errorCode) };
  },
};
