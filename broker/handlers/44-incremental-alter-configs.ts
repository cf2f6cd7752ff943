// IncrementalAlterConfigs (key 44), versions 0-1.
// TOPIC resources: SET, DELETE, APPEND and SUBTRACT on the topic's overrides,
// validated as a whole (tiering rules included) before anything changes.
// BROKER resources (a broker id, or '' for the cluster default), in a cluster:
// the replication throttle rates (leader/follower .replication.throttled.rate,
// broker/cluster/dynamic-broker-configs.ts) and the dynamic keys of the config
// table (log.retention.ms, message.max.bytes...: broker/cluster/cluster-broker-configs.ts),
// SET / DELETE (and APPEND / SUBTRACT on lists) on the layer of broker "<id>"
// or of the cluster-wide default ""; both parts of a resource are validated
// before either is written; read-only keys INVALID_REQUEST, unknown ones
// INVALID_CONFIG. A single broker refuses them all (its configs are static),
// except DELETE of the throttle rates, which cannot be set there and so are
// never there to delete (kafka-reassign-partitions.sh --verify clears them).
// GROUP resources: the share group configs (broker/share/share-group-configs.ts),
// SET and DELETE.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../protocol/messages/incremental-alter-configs.js';
import { alterErrorResponses, alterTopicResources } from './per-partition.js';
import { ResourceType, toErrorPair } from './admin-errors.js';
import { AlterConfigOpType } from '../../metadata/config-alter.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

/** Kafka's dynamic broker throttles (QuotaConfig), which ReassignPartitionsCommand deletes; a single broker cannot set them. */
const UNSET_BROKER_THROTTLES: ReadonlySet<string> = new Set(['leader.replication.throttled.rate', 'follower.replication.throttled.rate', 'replica.alter.log.dirs.io.max.bytes.per.second']);

export const handler: ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, BrokerContext> = {
  apiKey: 44,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const answered = new Map<(typeof req.resources)[number], { errorCode: number; errorMessage: string | null }>();
    for (const r of req.resources.filter((x) => x.resourceType === ResourceType.GROUP)) {
      try {
        if (broker.shareGroups === undefined || broker.shareGroups === null) throw new Error('share groups are not enabled');
        await broker.shareGroups.configs.alter(r.resourceName, r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })), req.validateOnly);
        answered.set(r, { errorCode: 0, errorMessage: null });
      } catch (err) {
        answered.set(r, toErrorPair(err, ctx.log));
      }
    }
    const throttles = broker.brokerConfigs ?? null;
    const table = broker.dynamicConfig ?? null;
    for (const r of req.resources.filter((x) => x.resourceType === ResourceType.BROKER)) {
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      if (throttles !== null || table !== null) {
        const throttleOps = ops.filter((o) => UNSET_BROKER_THROTTLES.has(o.name));
        const tableOps = ops.filter((o) => !UNSET_BROKER_THROTTLES.has(o.name));
        try {
          if (throttleOps.length > 0 && throttles === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Replication throttles need a cluster (etcd.connect)');
          if (tableOps.length > 0 && table === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Dynamic broker configs need a cluster (etcd.connect)');
          for (const validateOnly of req.validateOnly ? [true] : [true, false]) {
            if (throttleOps.length > 0) await throttles!.alter(r.resourceName, throttleOps, validateOnly);
            if (tableOps.length > 0 || throttleOps.length === 0) await table?.incrementalAlter(r.resourceName, tableOps, validateOnly);
          }
          answered.set(r, { errorCode: 0, errorMessage: null });
        } catch (err) {
          answered.set(r, toErrorPair(err, ctx.log));
        }
      } else if (r.configs.length > 0 && r.configs.every((c) => c.configOperation === AlterConfigOpType.DELETE && UNSET_BROKER_THROTTLES.has(c.name))) {
        answered.set(r, { errorCode: 0, errorMessage: null });
      }
    }
    const others = await alterTopicResources(req.resources.filter((x) => !answered.has(x)), ctx.log, (r) => {
      const ops = r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value }));
      return broker.topics.incrementalAlterConfigs(r.resourceName, ops, { validateOnly: req.validateOnly });
    });
    const responses = req.resources.map((r) => {
      const g = answered.get(r);
      return g === undefined ? others.shift()! : { resourceType: r.resourceType, resourceName: r.resourceName, ...g };
    });
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, responses: alterErrorResponses(req.resources, errorCode) };
  },
};
