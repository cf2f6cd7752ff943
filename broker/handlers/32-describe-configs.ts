// DescribeConfigs (key 32), versions 1-4.
// TOPIC resources: every topic config with its effective value and source
// (topic override, dynamic broker config, dynamic default, static broker
// config, default) and, when asked, synonyms and documentation. BROKER
// resources: this broker's keys, read-only except the dynamic ones in a
// cluster, plus, in a cluster, the replication throttle rates (source 2 or 3
// when set); the empty name is Kafka's "default broker config": in a cluster
// the cluster-wide dynamic defaults only (source DYNAMIC_DEFAULT_BROKER_CONFIG),
// on a single broker (no dynamic layers) its keys as for its id. Unknown topics
// get UNKNOWN_TOPIC_OR_PARTITION, a broker id other than this one
// INVALID_REQUEST (the admin client sends a broker's resource to that broker).
// GROUP resources:
// the share group configs, overrides with source GROUP_CONFIG (8).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DescribeConfigsRequest, DescribeConfigsResponse, DescribeConfigsResponseDescribeConfigsResult } from '../protocol/messages/describe-configs.js';
import { describeBrokerConfigs, describeDefaultBrokerConfigs, describeTopicConfigs, type DescribeConfigsEntry } from '../../metadata/describe-configs.js';
import { ErrorCode } from '../protocol/errors.js';
import { ResourceType, toErrorPair } from './admin-errors.js';

const GROUP_CONFIG_SOURCE = 8;
const DEFAULT_CONFIG_SOURCE = 5;
const CONFIG_TYPE_STRING = 2;
const CONFIG_TYPE_INT = 3;
const CONFIG_TYPE_LONG = 5;

function toWire(e: DescribeConfigsEntry) {
  return {
    name: e.name,
    value: e.value,
    readOnly: e.readOnly,
    isDefault: e.isDefault,
    configSource: e.configSource,
    isSensitive: e.isSensitive,
    synonyms: e.synonyms.map((s) => ({ name: s.name, value: s.value, source: s.source })),
    configType: e.configType,
    documentation: e.documentation,
  };
}

export const handler: ApiHandler<DescribeConfigsRequest, DescribeConfigsResponse, BrokerContext> = {
  apiKey: 32,
  minVersion: 1,
  maxVersion: 4,
  handle(broker, req, ctx) {
    const results: DescribeConfigsResponseDescribeConfigsResult[] = [];
    const brokerView = broker.dynamicConfig?.view ?? broker.config;
    for (const r of req.resources) {
      const base = { resourceType: r.resourceType, resourceName: r.resourceName };
      const options = { keys: r.configurationKeys, includeSynonyms: req.includeSynonyms, includeDocumentation: req.includeDocumentation };
      try {
        if (r.resourceType === ResourceType.TOPIC) {
          const topic = broker.topics.store.get(r.resourceName);
          if (topic === undefined) {
            results.push({ ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${r.resourceName} does not exist`, configs: [] });
            continue;
          }
          const configs = describeTopicConfigs(brokerView, topic.configs, { ...options, topicName: topic.name }).map(toWire);
          results.push({ ...base, errorCode: 0, errorMessage: null, configs });
        } else if (r.resourceType === ResourceType.BROKER) {
          if (r.resourceName !== '' && r.resourceName !== String(broker.nodeId)) {
            results.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unexpected broker id, expected ${broker.nodeId} but received ${r.resourceName}`, configs: [] });
            continue;
          }
          const configs: DescribeConfigsResponseDescribeConfigsResult['configs'] = r.resourceName === '' && broker.dynamicConfig
            ? describeDefaultBrokerConfigs(brokerView, options).map(toWire)
            : describeBrokerConfigs(brokerView, { ...options, effective: { 'cluster.id': broker.clusterId } }).map(toWire);
          const wanted = r.configurationKeys === null ? null : new Set(r.configurationKeys);
          for (const d of broker.brokerConfigs?.describe(r.resourceName) ?? []) {
            if (wanted !== null && !wanted.has(d.name)) continue;
            configs.push({
              name: d.name,
              value: d.value,
              readOnly: false,
              configSource: d.source,
              isSensitive: false,
              synonyms: req.includeSynonyms ? d.synonyms : [],
              configType: CONFIG_TYPE_LONG,
              documentation: req.includeDocumentation ? 'Replication throttle in bytes/s (see docs/replication.md).' : null,
            });
          }
          results.push({ ...base, errorCode: 0, errorMessage: null, configs });
        } else if (r.resourceType === ResourceType.GROUP && broker.shareGroups) {
          const wanted = r.configurationKeys === null || r.configurationKeys.length === 0 ? null : new Set(r.configurationKeys);
          const configs = broker.shareGroups.configs.describe(r.resourceName).filter((e) => wanted === null || wanted.has(e.name)).map((e) => ({
            name: e.name, value: e.value, readOnly: false, isDefault: !e.isOverride, configSource: e.isOverride ? GROUP_CONFIG_SOURCE : DEFAULT_CONFIG_SOURCE, isSensitive: false,
            synonyms: [], configType: /ms$|limit$|locks$/.test(e.name) ? CONFIG_TYPE_INT : CONFIG_TYPE_STRING, documentation: null,
          }));
          results.push({ ...base, errorCode: 0, errorMessage: null, configs });
        } else {
          results.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unsupported resource type ${r.resourceType}`, configs: [] });
        }
      } catch (err) {
        results.push({ ...base, ...toErrorPair(err, ctx.log), configs: [] });
      }
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, results: req.resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })) };
  },
};
