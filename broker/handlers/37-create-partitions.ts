// CreatePartitions (key 37), versions 0-3.
// Raises a topic's partition count (INVALID_PARTITIONS when not increasing);
// new partitions get empty logs on this broker. validateOnly changes nothing.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../protocol/messages/create-partitions.js';
import { toErrorPair } from './admin-errors.js';

export const handler: ApiHandler<CreatePartitionsRequest, CreatePartitionsResponse, BrokerContext> = {
  apiKey: 37,
  minVersion: 0,
  maxVersion: 3,
  async handle(broker, req, ctx) {
    const results = [];
    for (const t of req.topics) {
      try {
        await broker.topics.createPartitions(t.name, t.count, { validateOnly: req.validateOnly });
        results.push({ name: t.name, errorCode: 0, errorMessage: null });
      } catch (err) {
        results.push({ name: t.name, ...toErrorPair(err, ctx.log) });
      }
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, results: req.topics.map((t) => ({ name: t.name, errorCode, errorMessage: null })) };
  },
};
