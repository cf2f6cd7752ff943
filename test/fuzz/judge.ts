// Judging one fuzz outcome against its case, and the bookkeeping of what the
// broker accepted: every Produce partition answered with error 0 must show up
// in the log at the offsets it was given, and nothing else may.
import { decodeResponse } from '../../broker/protocol/frame.js';
import { ApiKey, apiRegistry, apis } from '../../broker/protocol/messages/index.js';
import type { FrameCase } from './cases.js';
import type { Outcome } from './raw-client.js';

export interface Accepted {
  readonly partition: number;
  readonly baseOffset: number;
  readonly count: number;
  /** Unknown when the batch was mutated in a way the broker may legitimately accept. */
  readonly keys: readonly string[] | undefined;
  readonly caseId: number;
}

export class Ledger {
  readonly accepted: Accepted[] = [];
  readonly rejectedByCode = new Map<number, number>();
  /**
   * Damaged compressed payloads (CRC fixed up) that were accepted: found only by
   * decompressing, which Kafka's LogValidator does on every append. Reported on
   * their own so the other checks stay meaningful.
   */
  readonly compressedPayloadAccepted: string[] = [];
  acceptedCount = 0;

  /** Expected log end offset of each partition: the sum of accepted records. */
  endOffsets(partitions: number): number[] {
    const ends = new Array<number>(partitions).fill(0);
    for (const a of this.accepted) ends[a.partition] = (ends[a.partition] ?? 0) + a.count;
    return ends;
  }

  /** Accepted ranges of each partition must tile [0, end) exactly. */
  checkTiling(partitions: number): string[] {
    const problems: string[] = [];
    for (let p = 0; p < partitions; p++) {
      const ranges = this.accepted.filter((a) => a.partition === p).sort((x, y) => x.baseOffset - y.baseOffset);
      let next = 0;
      for (const r of ranges) {
        if (r.baseOffset !== next) problems.push(`partition ${p}: case ${r.caseId} acknowledged at ${r.baseOffset}, expected ${next}`);
        next = r.baseOffset + r.count;
      }
    }
    return problems;
  }
}

function describeOutcome(o: Outcome): string {
  const ids = o.frames.map((f) => (f.length >= 4 ? f.readInt32BE(0) : 'short')).join(',');
  return `${o.kind} after ${Math.round(o.ms)} ms, ${o.frames.length} answer(s) [${ids}]${o.leftover > 0 ? `, ${o.leftover} stray bytes` : ''}`;
}

function correlationOf(frame: Buffer): number | null {
  return frame.length >= 4 ? frame.readInt32BE(0) : null;
}

/** Returns the problems with this outcome (empty when the broker behaved). */
export function judge(c: FrameCase, o: Outcome, ledger: Ledger): string[] {
  const problems: string[] = [];
  const say = (m: string): void => {
    problems.push(`case ${c.id} [${c.category}] ${c.what}: ${m} (${describeOutcome(o)})`);
  };
  if (o.kind === 'refused') {
    say('connection refused: is the broker down?');
    return problems;
  }
  if (o.kind === 'closed' && o.leftover > 0) say('connection closed in the middle of a response frame');
  const ids = o.frames.map(correlationOf);
  switch (c.expect) {
    case 'close':
      if (o.kind !== 'closed') say('expected the broker to close the connection');
      if (o.frames.length !== c.correlationIds.length || ids.some((id, k) => id !== c.correlationIds[k])) {
        say(`expected answers [${c.correlationIds.join(',')}] before the close`);
      }
      break;
    case 'response':
      if (o.kind !== 'response') say('expected an answer');
      else if (ids.some((id, k) => id !== c.correlationIds[k])) say(`expected correlation ids [${c.correlationIds.join(',')}]`);
      break;
    case 'answer-or-wait':
      if (o.kind === 'closed') say('a well-formed request closed the connection');
      else if (o.kind === 'response' && ids[0] !== c.correlationIds[0]) say(`answer carries correlation id ${ids[0]}, request had ${c.correlationIds[0]}`);
      break;
    case 'any':
      if (o.frames.length > 0 && c.correlationIds.length > 0 && ids[0] !== c.correlationIds[0]) say(`answer carries correlation id ${ids[0]}, request had ${c.correlationIds[0]}`);
      if (o.frames.length > 1) say('more than one answer to one request');
      break;
  }
  // An answer must decode as the response of the API and version asked.
  const first = o.frames[0];
  if (first !== undefined && c.apiKey !== undefined && c.apiVersion !== undefined && c.apiKey !== ApiKey.ApiVersions && ids[0] === c.correlationIds[0]) {
    const api = apiRegistry.get(c.apiKey);
    if (api !== undefined && c.apiVersion >= api.validVersions.min && c.apiVersion <= api.validVersions.max) {
      try {
        decodeResponse(first, api, c.apiVersion);
      } catch (e) {
        say(`answer does not decode as ${api.name} v${c.apiVersion}: ${(e as Error).message}`);
      }
    }
  }
  if (c.produce !== undefined && c.produce.acks !== 0 && first !== undefined && o.kind === 'response') judgeProduce(c, first, ledger, say);
  return problems;
}

function judgeProduce(c: FrameCase, frame: Buffer, ledger: Ledger, say: (m: string) => void): void {
  const p = c.produce!;
  let body;
  try {
    body = decodeResponse(frame, apis.Produce, p.version).body;
  } catch {
    return; // reported by the decode check above
  }
  for (const part of p.partitions) {
    const r = body.responses.find((t) => (p.version >= 13 ? t.topicId === p.topicId : t.name === part.topic))?.partitionResponses.find((x) => x.index === part.index);
    if (r === undefined) {
      say(`no answer for ${part.topic}-${part.index}`);
      continue;
    }
    if (r.errorCode !== 0) {
      ledger.rejectedByCode.set(r.errorCode, (ledger.rejectedByCode.get(r.errorCode) ?? 0) + 1);
      if (part.expect === 'accept') say(`partition ${part.index}: valid data refused with error ${r.errorCode}`);
      continue;
    }
    if (part.expect === 'reject') {
      const m = `partition ${part.index}: corrupt data ACCEPTED at offset ${r.baseOffset}`;
      if (part.insideCompressedPayload === true) ledger.compressedPayloadAccepted.push(`case ${c.id}: ${c.what}: ${m}`);
      else say(m);
    }
    ledger.acceptedCount++;
    ledger.accepted.push({
      partition: part.index,
      baseOffset: Number(r.baseOffset),
      count: part.records,
      keys: part.expect === 'accept' ? part.keys : undefined,
      caseId: c.id,
    });
  }
}
