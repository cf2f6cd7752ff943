// Request and traffic metrics, after Kafka's RequestMetrics and
// BrokerTopicMetrics:
//   sediment_request_duration_seconds{api}  histogram (Kafka TotalTimeMs: a
//                                           Fetch's long poll included)
//   sediment_requests_total{api,version}    (RequestsPerSec)
//   sediment_request_errors_total{api}      requests whose handler failed as a whole
//   sediment_bytes_in_total{topic}          record bytes appended by Produce (BytesInPerSec)
//   sediment_messages_in_total{topic}       records appended by Produce (MessagesInPerSec)
//   sediment_bytes_out_total{topic}         record bytes sent by Fetch (BytesOutPerSec)
//   sediment_fetch_consumer_bytes_total{topic}  of those, the bytes sent to consumers (replica
//                                           id -1), not to followers: which broker served a
//                                           consumer, e.g. a follower in its rack (KIP-392)
// Latency comes through the dispatcher's RequestObserver; bytes by wrapping
// the Produce and Fetch handlers, which read the decoded request and response
// and leave them untouched.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ApiHandler, RequestContext } from '../handlers/api-handler.js';
import type { FetchRequest, FetchResponse } from '../protocol/messages/fetch.js';
import { apiRegistry } from '../protocol/messages/index.js';
import type { ProduceRequest, ProduceResponse } from '../protocol/messages/produce.js';
import { recordsBuffer } from '../protocol/record-parts.js';
import type { RequestObserver } from '../server/dispatcher.js';

const PRODUCE = 0;
const FETCH = 1;

/** Seconds; Fetch long polls (fetch.max.wait.ms, 500 ms by default) land in the upper buckets. */
export const REQUEST_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Kafka's request name for an API key (`Produce`, `Fetch`, ...), the key itself when unknown. */
export function apiName(apiKey: number): string {
  return apiRegistry.get(apiKey)?.name ?? String(apiKey);
}

/**
 * Records in a v2 record-batch buffer (the batch headers' record counts);
 * stops at the first truncated or non-v2 batch.
 */
export function countRecords(records: Buffer): number {
  let n = 0;
  let pos = 0;
  while (pos + 61 <= records.length) {
    const batchLength = records.readInt32BE(pos + 8);
    if (batchLength < 49 || records.readInt8(pos + 16) !== 2) break;
    n += Math.max(0, records.readInt32BE(pos + 57));
    pos += 12 + batchLength;
  }
  return n;
}

export class RequestMetrics {
  private readonly duration: Histogram<'api'>;
  private readonly requests: Counter<'api' | 'version'>;
  private readonly errors: Counter<'api'>;
  private readonly bytesIn: Counter<'topic'>;
  private readonly messagesIn: Counter<'topic'>;
  private readonly bytesOut: Counter<'topic'>;
  private readonly consumerBytes: Counter<'topic'>;

  /** For the dispatcher: `new Dispatcher(handlers, context, metrics.requestObserver)`. */
  readonly observer: RequestObserver;

  /** `topicName(topicId)`: Fetch v13+ answers name topics by id only. */
  constructor(
    registry: Registry,
    private readonly topicName: (topicId: string) => string | undefined,
  ) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'sediment_request_duration_seconds',
      help: 'Time from a request decoded to its response built, per API (Kafka TotalTimeMs; a Fetch long poll included)',
      labelNames: ['api'],
      buckets: REQUEST_DURATION_BUCKETS,
      registers,
    });
    this.requests = new Counter({ name: 'sediment_requests_total', help: 'Requests served, per API and version (Kafka RequestsPerSec)', labelNames: ['api', 'version'], registers });
    this.errors = new Counter({ name: 'sediment_request_errors_total', help: 'Requests whose handler failed as a whole (answered with an error code everywhere)', labelNames: ['api'], registers });
    this.bytesIn = new Counter({ name: 'sediment_bytes_in_total', help: 'Record bytes appended by Produce, per topic (Kafka BytesInPerSec)', labelNames: ['topic'], registers });
    this.messagesIn = new Counter({ name: 'sediment_messages_in_total', help: 'Records appended by Produce, per topic (Kafka MessagesInPerSec)', labelNames: ['topic'], registers });
    this.bytesOut = new Counter({ name: 'sediment_bytes_out_total', help: 'Record bytes sent in Fetch responses, per topic (Kafka BytesOutPerSec)', labelNames: ['topic'], registers });
    this.consumerBytes = new Counter({
      name: 'sediment_fetch_consumer_bytes_total',
      help: 'Record bytes sent in Fetch responses to consumers (not to follower brokers), per topic: by a leader, or by a follower serving a client in its rack (KIP-392)',
      labelNames: ['topic'],
      registers,
    });
    this.observer = {
      onRequest: (apiKey, version, durationMs, error) => {
        const api = apiName(apiKey);
        this.duration.observe({ api }, durationMs / 1000);
        this.requests.inc({ api, version: String(version) });
        if (error) this.errors.inc({ api });
      },
    };
  }

  /** The handlers, with Produce and Fetch counting their bytes; the others as they are. */
  instrument<B>(handlers: readonly ApiHandler<unknown, unknown, B>[]): ApiHandler<unknown, unknown, B>[] {
    return handlers.map((h) => {
      if (h.apiKey !== PRODUCE && h.apiKey !== FETCH) return h;
      const count = h.apiKey === PRODUCE ? (req: unknown, res: unknown) => this.countProduce(req as ProduceRequest, res as ProduceResponse | null) : (req: unknown, res: unknown) => this.countFetch(req as FetchRequest, res as FetchResponse | null);
      return {
        apiKey: h.apiKey,
        minVersion: h.minVersion,
        maxVersion: h.maxVersion,
        errorResponse: (request: unknown, errorCode: number, ctx: RequestContext) => h.errorResponse(request, errorCode, ctx),
        handle: async (broker: B, request: unknown, ctx: RequestContext) => {
          const response = await h.handle(broker, request, ctx);
          count(request, response);
          return response;
        },
      };
    });
  }

  private countProduce(req: ProduceRequest, res: ProduceResponse | null): void {
    for (const t of req.topicData) {
      // acks=0 has no response: every partition counts (as Kafka counts what it appended, not what it answered).
      const answers = res?.responses.find((r) => r.name === t.name)?.partitionResponses;
      let bytes = 0;
      let records = 0;
      for (const p of t.partitionData) {
        if (p.records === null) continue;
        if (res !== null && answers?.find((a) => a.index === p.index)?.errorCode !== 0) continue;
        bytes += p.records.length;
        // Decoded from the request, so a Buffer: recordsBuffer returns it as is.
        records += countRecords(recordsBuffer(p.records));
      }
      if (bytes > 0) {
        this.bytesIn.inc({ topic: t.name }, bytes);
        this.messagesIn.inc({ topic: t.name }, records);
      }
    }
  }

  private countFetch(req: FetchRequest, res: FetchResponse | null): void {
    if (res === null) return;
    // A follower names itself in replica_id (ReplicaState from v15); a consumer sends -1.
    const fromConsumer = req.replicaId < 0 && (req.replicaState?.replicaId ?? -1) < 0;
    for (const t of res.responses) {
      let bytes = 0;
      for (const p of t.partitions) bytes += p.records?.length ?? 0;
      if (bytes === 0) continue;
      const topic = t.topic !== '' ? t.topic : this.topicName(t.topicId);
      if (topic === undefined) continue;
      this.bytesOut.inc({ topic }, bytes);
      if (fromConsumer) this.consumerBytes.inc({ topic }, bytes);
    }
  }
}
