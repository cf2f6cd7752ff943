// IncrementalAlterConfigs (key 44), versions 0-1.
// TOPIC resources: SET, DELETE, APPEND and SUBTRACT on the topic's overrides,
// validated as a whole (tiering rules included) before anything changes.
// BROKER resources, in a cluster: the same operations on the dynamic layer of
// broker "<id>" or of the cluster-wide default "" (cluster-broker-configs.ts);
// read-only keys INVALID_REQUEST, unknown ones INVALID_CONFIG. A single broker
// refuses them (its configs are static).
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
    const admin = broker.brokerConfigs ?? null;
    const opsOf = (r: (typeof req.resources)[number]) => r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
    const others = await alterTopicResources(
      req.resources.filter((x) => x.resourceType !== ResourceType.GROUP),
      ctx.log,
      (r) => broker.topics.incrementalAlterConfigs(r.resourceName, opsOf(r), { validateOnly: req.validateOnly }),
      admin === null ? undefined : (r) => admin.incrementalAlter(r.resourceName, opsOf(r), req.validateOnly),
    );
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
