// The contract between the dispatcher and the per-API handler files
// (`00-produce.ts`, `01-fetch.ts`, ...). A handler receives the decoded request
// body and returns the response body (or `null` for "no response", acks=0).
// Handlers are thin: state lives in the log manager, topic store, group
// coordinator and remote log manager reached through `BrokerContext`.
import type { Logger } from 'pino';
import type { SendfileBinding } from '../common/sendfile.js';

export interface RequestContext {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly connectionId: number;
  readonly clientHost: string;
  readonly log: Logger;
  /** Aborted when the connection closes; long polls should stop waiting. */
  readonly signal: AbortSignal;
  /**
   * Runs `release` once this request's response has been written to the socket
   * (never when the handler fails or the connection closes first). Absent where
   * requests are not served over a connection (some tests): then nothing is released.
   */
  readonly afterResponseWritten?: (release: () => void) => void;
  /**
   * Present when the response goes to a socket that sends file regions with
   * sendfile(2) (broker/common/sendfile.ts): a Fetch answer may then carry
   * record bytes as FileRecords instead of reading them into memory.
   */
  readonly sendfile?: SendfileBinding;
}

export interface ApiHandler<Req = unknown, Res = unknown, Broker = unknown> {
  readonly apiKey: number;
  /** Advertised in ApiVersions: the registry of handlers is its only source. */
  readonly minVersion: number;
  readonly maxVersion: number;
  handle(broker: Broker, request: Req, ctx: RequestContext): Promise<Res | null> | Res | null;
  /**
   * The response to send when the request could not be served as a whole
   * (an unexpected exception): every partition/entry carries `errorCode`.
   */
  errorResponse(request: Req, errorCode: number, ctx: RequestContext): Res;
}
