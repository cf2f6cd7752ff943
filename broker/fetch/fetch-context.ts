// How one Fetch request relates to the session cache (Kafka's FetchManager and
// FetchContext), in two steps around the read:
//   openFetchContext: which partitions to read, and the session's bookkeeping
//     on the way in (close, look up, check the epoch, add/update/forget);
//   completeFetch: the response body's session part on the way out (create the
//     session of a full fetch, or keep only the changed partitions of an
//     incremental one and remember what was answered).
// Request metadata (SessionId, SessionEpoch):
//   epoch 0    full fetch; the named session (if any) is closed and a new one is
//              created when a slot allows, else the answer is sessionless (id 0);
//   epoch -1   full fetch without a session; the named session is closed;
//   epoch > 0  incremental: unknown id -> FETCH_SESSION_ID_NOT_FOUND, another
//              epoch -> INVALID_FETCH_SESSION_EPOCH, topic ids used differently
//              from the session -> FETCH_SESSION_TOPIC_ID_ERROR; a session left
//              with no partition is closed and the fetch answered sessionless.
// An incremental response carries a partition when it has records, an error,
// a preferred read replica, or a high watermark, last stable offset or log start offset other than the
// one last sent. Kafka compares the high watermark and log start offset only;
// the last stable offset is compared too so that read_committed consumers see
// it move even when nothing else does (an extra partition is always allowed).
import { ErrorCode } from '../protocol/errors.js';
import type { FetchRequest, FetchRequestFetchPartition, FetchResponse, FetchResponsePartitionData } from '../protocol/messages/fetch.js';
import {
  FINAL_EPOCH,
  INITIAL_EPOCH,
  INVALID_SESSION_ID,
  NEVER_ANSWERED,
  nextEpoch,
  type CachedPartition,
  type FetchSession,
  type FetchSessionCache,
} from './fetch-session-cache.js';

/** One partition to read, with the request parameters that apply to it. */
export interface FetchTarget {
  readonly topic: string;
  readonly topicId: string;
  readonly request: FetchRequestFetchPartition;
}

export type FetchContext =
  | { readonly kind: 'sessionError'; readonly errorCode: number }
  | { readonly kind: 'sessionless'; readonly targets: readonly FetchTarget[] }
  | { readonly kind: 'full'; readonly targets: readonly FetchTarget[]; readonly usesTopicIds: boolean }
  | { readonly kind: 'incremental'; readonly targets: readonly FetchTarget[]; readonly session: FetchSession; readonly expectedEpoch: number };

/** A partition's answer, as read. */
export interface FetchResult {
  readonly target: FetchTarget;
  readonly data: FetchResponsePartitionData;
}

export type FetchRequestSessionPart = Pick<FetchRequest, 'sessionId' | 'sessionEpoch' | 'topics' | 'forgottenTopicsData'>;
export type FetchResponseSessionPart = Pick<FetchResponse, 'errorCode' | 'sessionId' | 'responses'>;

/** Fetch v13+ names topics by id. */
export function usesTopicIds(apiVersion: number): boolean {
  return apiVersion >= 13;
}

function requestTargets(req: FetchRequestSessionPart): FetchTarget[] {
  return req.topics.flatMap((t) => t.partitions.map((request) => ({ topic: t.topic, topicId: t.topicId, request })));
}

export function openFetchContext(cache: FetchSessionCache, req: FetchRequestSessionPart, apiVersion: number): FetchContext {
  const idsInUse = usesTopicIds(apiVersion);
  if (req.sessionEpoch === INITIAL_EPOCH || req.sessionEpoch === FINAL_EPOCH) {
    // A full fetch closes the session it names.
    if (req.sessionId !== INVALID_SESSION_ID) cache.remove(req.sessionId);
    const targets = requestTargets(req);
    if (req.sessionEpoch === FINAL_EPOCH || cache.maxSlots <= 0) return { kind: 'sessionless', targets };
    return { kind: 'full', targets, usesTopicIds: idsInUse };
  }
  const session = cache.get(req.sessionId);
  if (session === undefined) return { kind: 'sessionError', errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND };
  if (session.epoch !== req.sessionEpoch) return { kind: 'sessionError', errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH };
  if (session.usesTopicIds !== idsInUse) return { kind: 'sessionError', errorCode: ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR };
  const forgotten = req.forgottenTopicsData.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, topicId: t.topicId, partition })));
  session.update(requestTargets(req), forgotten);
  if (session.size === 0) {
    cache.remove(session.id);
    return { kind: 'sessionless', targets: requestTargets(req) };
  }
  cache.touch(session);
  session.epoch = nextEpoch(session.epoch);
  const targets = [...session.partitions.values()].map((c) => ({ topic: c.topic, topicId: c.topicId, request: c.request }));
  return { kind: 'incremental', targets, session, expectedEpoch: session.epoch };
}

/** Whether an incremental response must carry the partition; records what it carries. */
function mustRespond(cached: CachedPartition, data: FetchResponsePartitionData): boolean {
  const a = cached.answered;
  // A preferred read replica (KIP-392) is always sent: the client moves to it.
  let changed = (data.records?.length ?? 0) > 0 || data.errorCode !== 0 || data.preferredReadReplica >= 0;
  if (a.highWatermark !== data.highWatermark || a.lastStableOffset !== data.lastStableOffset || a.logStartOffset !== data.logStartOffset) changed = true;
  cached.answered = {
    // After an error, -1 makes the partition reappear once the error is gone.
    highWatermark: data.errorCode !== 0 ? -1n : data.highWatermark,
    lastStableOffset: data.lastStableOffset,
    logStartOffset: data.logStartOffset,
  };
  return changed;
}

/** Consecutive results of one topic form one topic entry, in order (as Kafka's FetchResponse.of). */
function topicResponses(results: readonly FetchResult[]): FetchResponse['responses'] {
  const responses: FetchResponse['responses'] = [];
  let last: FetchResponse['responses'][number] | undefined;
  for (const r of results) {
    if (last === undefined || last.topic !== r.target.topic || last.topicId !== r.target.topicId) {
      last = { topic: r.target.topic, topicId: r.target.topicId, partitions: [] };
      responses.push(last);
    }
    last.partitions.push(r.data);
  }
  return responses;
}

/** The response's session fields and partitions, updating the cache as Kafka does once the answer is final. */
export function completeFetch(cache: FetchSessionCache, ctx: FetchContext, results: readonly FetchResult[]): FetchResponseSessionPart {
  switch (ctx.kind) {
    case 'sessionError':
      return { errorCode: ctx.errorCode, sessionId: INVALID_SESSION_ID, responses: [] };
    case 'sessionless':
      return { errorCode: 0, sessionId: INVALID_SESSION_ID, responses: topicResponses(results) };
    case 'full': {
      const partitions: CachedPartition[] = results.map((r) => ({
        topic: r.target.topic,
        topicId: r.target.topicId,
        partition: r.target.request.partition,
        request: r.target.request,
        answered: {
          highWatermark: r.data.errorCode !== 0 ? NEVER_ANSWERED.highWatermark : r.data.highWatermark,
          lastStableOffset: r.data.lastStableOffset,
          logStartOffset: r.data.logStartOffset,
        },
      }));
      const session = cache.maybeCreate(ctx.usesTopicIds, partitions);
      return { errorCode: 0, sessionId: session?.id ?? INVALID_SESSION_ID, responses: topicResponses(results) };
    }
    case 'incremental': {
      const session = ctx.session;
      // Another request of the session came in meanwhile (a duplicate): this answer is stale.
      if (session.epoch !== ctx.expectedEpoch) return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: session.id, responses: [] };
      const kept: FetchResult[] = [];
      for (const r of results) {
        const key = session.keyOf(r.target.topic, r.target.topicId, r.target.request.partition);
        const cached = session.partitions.get(key);
        if (cached === undefined || !mustRespond(cached, r.data)) continue;
        kept.push(r);
        if ((r.data.records?.length ?? 0) > 0) session.moveToEnd(key);
      }
      return { errorCode: 0, sessionId: session.id, responses: topicResponses(kept) };
    }
  }
}
