// ApiVersions (key 18), versions 0-4.
// Lists every API this broker serves with the range its handler advertises:
// the handler registry is the single source. Unsupported versions are answered
// by the dispatcher (UNSUPPORTED_VERSION in a v0 body). No features are
// advertised: clients fall back to the API ranges.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ApiVersionsRequest, ApiVersionsResponse } from '../protocol/messages/api-versions.js';

export const handler: ApiHandler<ApiVersionsRequest, ApiVersionsResponse, BrokerContext> = {
  apiKey: 18,
  minVersion: 0,
  maxVersion: 4,
  handle(broker) {
    return { errorCode: 0, apiKeys: broker.supportedApiVersions(), throttleTimeMs: 0 };
  },
  errorResponse(_req, errorCode) {
    return { errorCode, apiKeys: [], throttleTimeMs: 0 };
  },
};
