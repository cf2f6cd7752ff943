// Turns a request frame into a response frame: header, version check, body
// decode, the API's handler, response encode. Kafka's rules for bad input:
// an unsupported ApiVersions version is answered with UNSUPPORTED_VERSION in a
// v0 body listing the supported ranges; an unknown API, an unsupported version
// of another API, or an unparseable body closes the connection (Kafka throws
// InvalidRequestException and closes the channel); other connections carry on.
// Bytes after a whole body are ignored (logged at debug), as Kafka ignores them.
import { decodeRequestBody, decodeRequestHeader, encodeResponse, encodeResponseOutput, type RequestHeaderInfo } from '../protocol/frame.js';
import type { OutputChunk } from '../protocol/record-parts.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { apiRegistry, type ApiDescriptor } from '../protocol/messages/index.js';
import { encodeApiVersionsResponse, type ApiVersionsResponse } from '../protocol/messages/api-versions.js';
import type { ApiHandler, RequestContext } from '../handlers/api-handler.js';
import { CloseConnectionError } from '../common/errors.js';
import type { FrameContext, RequestProcessor } from './connection.js';
import { releaseAfterWrite } from './response-release.js';

const API_VERSIONS_KEY = 18;

export interface RequestObserver {
  onRequest(apiKey: number, version: number, durationMs: number, error: boolean): void;
}

export class Dispatcher<Broker> implements RequestProcessor {
  private readonly handlers = new Map<number, ApiHandler<unknown, unknown, Broker>>();

  constructor(
    handlers: readonly ApiHandler<unknown, unknown, Broker>[],
    private readonly broker: Broker,
    private readonly observer?: RequestObserver,
  ) {
    for (const h of handlers) {
      if (this.handlers.has(h.apiKey)) throw new Error(`two handlers for api key ${h.apiKey}`);
      const api = apiRegistry.get(h.apiKey);
      if (api === undefined || h.minVersion < api.validVersions.min || h.maxVersion > api.validVersions.max) {
        throw new Error(`handler for api key ${h.apiKey} advertises versions the protocol does not define`);
      }
      this.handlers.set(h.apiKey, h);
    }
  }

  /** The ApiVersions answer: one entry per handler, from the handlers themselves. */
  supportedVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...this.handlers.values()]
      .map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }))
      .sort((a, b) => a.apiKey - b.apiKey);
  }

  async process(frame: Buffer, fctx: FrameContext): Promise<OutputChunk[] | null> {
    let header: RequestHeaderInfo;
    try {
      header = decodeRequestHeader(frame);
    } catch (err) {
      throw new CloseConnectionError(`unreadable request header: ${(err as Error).message}`);
    }
    const handler = this.handlers.get(header.apiKey);
    if (handler === undefined) {
      throw new CloseConnectionError(`unsupported api key ${header.apiKey}`);
    }
    if (header.apiVersion < handler.minVersion || header.apiVersion > handler.maxVersion) {
      if (header.apiKey === API_VERSIONS_KEY) return this.unsupportedApiVersions(header);
      throw new CloseConnectionError(`unsupported version ${header.apiVersion} of api key ${header.apiKey}`);
    }
    let request: unknown;
    try {
      const decoded = decodeRequestBody(header, frame);
      request = decoded.body;
      if (decoded.trailingBytes > 0) {
        fctx.log.debug({ apiKey: header.apiKey, apiVersion: header.apiVersion, trailingBytes: decoded.trailingBytes }, 'ignoring bytes after the request body, as Kafka does');
      }
    } catch (err) {
      if (header.apiKey === API_VERSIONS_KEY) return this.unsupportedApiVersions(header, ErrorCode.INVALID_REQUEST);
      throw new CloseConnectionError(`malformed api key ${header.apiKey} v${header.apiVersion} request: ${(err as Error).message}`);
    }
    const releases: Array<() => void> = [];
    const ctx: RequestContext = {
      apiKey: header.apiKey,
      apiVersion: header.apiVersion,
      correlationId: header.correlationId,
      clientId: header.clientId,
      connectionId: fctx.connectionId,
      clientHost: fctx.clientHost,
      log: fctx.log,
      signal: fctx.signal,
      afterResponseWritten: (release) => releases.push(release),
      ...(fctx.sendfile === undefined ? {} : { sendfile: fctx.sendfile }),
    };
    const started = performance.now();
    let failed = false;
    let response: unknown;
    try {
      response = await handler.handle(this.broker, request, ctx);
    } catch (err) {
      // A handler may ask for the connection to be closed (acks=0 Produce errors).
      if (err instanceof CloseConnectionError) throw err;
      failed = true;
      const code = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
      if (!(err instanceof KafkaError)) fctx.log.error({ err, apiKey: header.apiKey }, 'handler failed');
      response = handler.errorResponse(request, code, ctx);
    }
    this.observer?.onRequest(header.apiKey, header.apiVersion, performance.now() - started, failed);
    if (response === null) return null;
    const api = apiRegistry.get(header.apiKey) as ApiDescriptor<unknown, unknown>;
    const chunks = encodeResponseOutput(header.apiKey, header.apiVersion, header.correlationId, (w) => api.encodeResponse(w, header.apiVersion, response), {
      capacity: 1024,
    });
    // A failed handler's reads may not all have settled: its buffers are dropped, never reused.
    if (releases.length > 0 && !failed) releaseAfterWrite(chunks, () => releases.forEach((release) => release()));
    return chunks;
  }

  private unsupportedApiVersions(header: RequestHeaderInfo, errorCode: number = ErrorCode.UNSUPPORTED_VERSION): Buffer[] {
    const body: ApiVersionsResponse = {
      errorCode,
      apiKeys: this.supportedVersions().filter((v) => v.apiKey === API_VERSIONS_KEY),
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    };
    // Kafka answers in a v0 body so any client can read it.
    return encodeResponse(API_VERSIONS_KEY, 0, header.correlationId, (w) => encodeApiVersionsResponse(w, 0, body));
  }
}

