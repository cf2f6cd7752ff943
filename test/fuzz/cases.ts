// Fuzz case generation: every case is a list of byte chunks for one fresh
// connection and what a Kafka broker must do with them. Categories:
//   golden-mutation  captured client requests with 1-4 byte mutations
//   garbage-header   a captured request whose header fields are replaced
//   garbage-body     a valid header for a supported API and version, random body
//   odd-values       a captured request re-encoded with edge values in a few fields
//   produce-corrupt  a valid Produce request carrying corrupted record batches
//   produce-acks0    the same with acks=0 (no response; Kafka closes the connection on error)
//   random-frame     random size and bytes
//   oversize         a size prefix above socket.request.max.bytes, or negative
//   truncated        part of a captured frame, then EOF
//   pipelined        valid requests, then a bad one: answers in order, then a close
//   byte-by-byte     a valid request written one byte at a time
import { encodeRequest } from '../../broker/protocol/frame.js';
import { ApiKey, requestHeaderVersion } from '../../broker/protocol/messages/index.js';
import { framed, mutate } from './mutations.js';
import { produceAcks0Case, produceCase, type ProduceCase, type ProduceTarget } from './produce-cases.js';
import type { GoldenRequest } from './golden-frames.js';
import { semanticVariant } from './semantic.js';
import type { Prng } from './prng.js';

export type Category =
  | 'golden-mutation'
  | 'garbage-header'
  | 'garbage-body'
  | 'odd-values'
  | 'produce-corrupt'
  | 'produce-acks0'
  | 'random-frame'
  | 'oversize'
  | 'truncated'
  | 'pipelined'
  | 'byte-by-byte';

/**
 * close: the broker closes without answering (after `correlationIds` answers, if given);
 * answer-or-wait: a well-formed request: answered with its correlation id, or still
 *      waiting at the timeout (a long poll), never a closed connection;
 * response: it answers each of `correlationIds`, in order;
 * any: it answers, closes or waits (a request may legitimately wait), but an
 *      answer carries the request's correlation id.
 */
export type Expect = 'close' | 'response' | 'answer-or-wait' | 'any';

export interface FrameCase {
  readonly id: number;
  readonly category: Category;
  readonly what: string;
  readonly chunks: Buffer[];
  readonly expect: Expect;
  /** Correlation ids the answers must carry, in order (empty: unknown / none). */
  readonly correlationIds: number[];
  readonly halfClose?: boolean;
  readonly separateWrites?: boolean;
  /** For decoding the answer. */
  readonly apiKey?: number;
  readonly apiVersion?: number;
  readonly produce?: ProduceCase;
}

export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

export interface CaseContext {
  readonly golden: readonly GoldenRequest[];
  /** The broker's ApiVersions answer. */
  readonly supported: ReadonlyMap<number, VersionRange>;
  readonly maxRequestBytes: number;
  readonly produceTarget: ProduceTarget;
}

const weights: ReadonlyArray<readonly [Category, number]> = [
  ['golden-mutation', 26],
  ['garbage-header', 10],
  ['garbage-body', 10],
  ['odd-values', 14],
  ['produce-corrupt', 21],
  ['produce-acks0', 3],
  ['random-frame', 6],
  ['oversize', 4],
  ['truncated', 4],
  ['pipelined', 2],
  ['byte-by-byte', 2],
];
const totalWeight = weights.reduce((s, [, w]) => s + w, 0);

function pickCategory(rng: Prng): Category {
  let r = rng.int(0, totalWeight - 1);
  for (const [c, w] of weights) {
    if (r < w) return c;
    r -= w;
  }
  return 'golden-mutation';
}

function isSupported(ctx: CaseContext, apiKey: number, version: number): boolean {
  const r = ctx.supported.get(apiKey);
  return r !== undefined && version >= r.min && version <= r.max;
}

let nextCorrelationId = 1;

function apiVersionsFrame(correlationId: number): Buffer {
  return Buffer.concat(encodeRequest(ApiKey.ApiVersions, 0, correlationId, 'sediment-fuzz', () => undefined));
}

function withCorrelationId(frame: Buffer, correlationId: number): Buffer {
  const out = Buffer.from(frame);
  out.writeInt32BE(correlationId, 8);
  return out;
}

function goldenMutation(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const g = rng.pick(ctx.golden);
  const payload = g.frame.subarray(4);
  // Mostly leave api key/version/correlation id alone, so mutations reach the body decoders.
  const protect = rng.bool(0.8) ? Math.min(8, payload.length) : 0;
  const m = mutate(payload, rng, 4, protect);
  const keepSize = rng.bool(0.1);
  let chunks: Buffer[];
  if (keepSize) {
    const size = Buffer.alloc(4);
    size.writeInt32BE(payload.length);
    chunks = [size, m.bytes];
  } else {
    chunks = [framed(m.bytes)];
  }
  const ids = !keepSize && m.bytes.length >= 8 ? [m.bytes.readInt32BE(4)] : [];
  const base = { id, category: 'golden-mutation' as const, what: `${g.name}: ${m.what}${keepSize ? ' (original size prefix kept)' : ''}`, chunks, expect: 'any' as const, correlationIds: ids };
  return m.bytes.length >= 4 ? { ...base, apiKey: m.bytes.readInt16BE(0), apiVersion: m.bytes.readInt16BE(2) } : base;
}

function garbageHeader(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const g = rng.pick(ctx.golden);
  const payload = Buffer.from(g.frame.subarray(4));
  const correlationId = nextCorrelationId++;
  payload.writeInt32BE(correlationId, 4);
  const kind = rng.int(0, 3);
  if (kind === 0) {
    const apiKey = rng.pick([-1, -32768, 32767, 999, 100, 66, 67, 68, 69, 4, 5, 6, 7, 17, 36, rng.int(-32768, 32767)]);
    payload.writeInt16BE(apiKey, 0);
    const supported = ctx.supported.has(apiKey);
    return {
      id, category: 'garbage-header', what: `${g.name}: api key ${apiKey}`, chunks: [framed(payload)],
      expect: supported ? 'any' : 'close', correlationIds: supported ? [correlationId] : [], apiKey, apiVersion: g.apiVersion,
    };
  }
  if (kind === 1) {
    const range = ctx.supported.get(g.apiKey);
    const version = rng.pick([-1, -32768, 32767, (range?.max ?? 0) + rng.int(1, 5), rng.int(-32768, 32767)]);
    payload.writeInt16BE(version, 2);
    const ok = isSupported(ctx, g.apiKey, version);
    // An unsupported ApiVersions version is answered (UNSUPPORTED_VERSION in a v0 body) when its
    // header still reads (the header version follows the api version: v3+ has tagged fields);
    // other APIs close.
    const sameHeader = requestHeaderVersion(g.apiKey, version) === requestHeaderVersion(g.apiKey, g.apiVersion);
    const expect: Expect = ok ? 'any' : g.apiKey !== ApiKey.ApiVersions ? 'close' : sameHeader ? 'response' : 'any';
    return {
      id, category: 'garbage-header', what: `${g.name}: version ${version}`, chunks: [framed(payload)], expect,
      correlationIds: expect === 'close' ? [] : [correlationId], apiKey: g.apiKey, apiVersion: version,
    };
  }
  if (kind === 2 && payload.length >= 10) {
    const len = rng.pick([0x7fff, -2, -32768, payload.length, payload.length - 9, 1000]);
    payload.writeInt16BE(len, 8);
    return { id, category: 'garbage-header', what: `${g.name}: client id length ${len}`, chunks: [framed(payload)], expect: 'any', correlationIds: [correlationId], apiKey: g.apiKey, apiVersion: g.apiVersion };
  }
  // Everything after the correlation id replaced by random bytes.
  const junk = rng.bytes(rng.int(0, 64));
  const out = Buffer.concat([payload.subarray(0, 8), junk]);
  return { id, category: 'garbage-header', what: `${g.name}: ${junk.length} random bytes after the correlation id`, chunks: [framed(out)], expect: 'any', correlationIds: [correlationId], apiKey: g.apiKey, apiVersion: g.apiVersion };
}

function garbageBody(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const keys = [...ctx.supported.keys()];
  const apiKey = rng.pick(keys);
  const range = ctx.supported.get(apiKey)!;
  const version = rng.int(range.min, range.max);
  const correlationId = nextCorrelationId++;
  const body = rng.bytes(rng.pick([0, 1, 2, 4, rng.int(0, 16), rng.int(0, 512)]));
  const frame = Buffer.concat(encodeRequest(apiKey, version, correlationId, rng.bool(0.2) ? null : 'sediment-fuzz', (w) => w.writeRaw(body)));
  return {
    id, category: 'garbage-body', what: `api ${apiKey} v${version}: ${body.length} random body bytes`, chunks: [frame],
    expect: apiKey === ApiKey.ApiVersions ? 'response' : 'any', correlationIds: [correlationId], apiKey, apiVersion: version,
  };
}

function randomFrame(rng: Prng, id: number): FrameCase {
  const payload = rng.bytes(rng.pick([0, 1, 3, 7, 8, rng.int(0, 64), rng.int(0, 4096)]));
  return { id, category: 'random-frame', what: `${payload.length} random bytes`, chunks: [framed(payload)], expect: 'any', correlationIds: payload.length >= 8 ? [payload.readInt32BE(4)] : [] };
}

function oversize(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const max = ctx.maxRequestBytes;
  const size = rng.pick([max + 1, max + rng.int(2, 1000), rng.int(max + 1, 0x7fffffff), 0x7fffffff, -1, -0x80000000, rng.int(-0x80000000, -1)]);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(size);
  const chunks = [prefix, rng.bytes(rng.int(0, 100))];
  // The limit must hold before any body is buffered: the close comes without the body.
  return { id, category: 'oversize', what: `size prefix ${size} (limit ${max})`, chunks, expect: 'close', correlationIds: [] };
}

function truncated(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const g = rng.pick(ctx.golden);
  const n = rng.int(1, g.frame.length - 1);
  return { id, category: 'truncated', what: `${g.name}: first ${n} of ${g.frame.length} bytes, then EOF`, chunks: [g.frame.subarray(0, n)], expect: 'close', correlationIds: [], halfClose: true };
}

function pipelined(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const simple = ctx.golden.filter((g) => (g.apiKey === ApiKey.ApiVersions || g.apiKey === ApiKey.Metadata) && isSupported(ctx, g.apiKey, g.apiVersion));
  const n = rng.int(1, 4);
  const ids: number[] = [];
  const chunks: Buffer[] = [];
  for (let k = 0; k < n; k++) {
    const c = nextCorrelationId++;
    ids.push(c);
    chunks.push(simple.length > 0 && rng.bool(0.5) ? withCorrelationId(rng.pick(simple).frame, c) : apiVersionsFrame(c));
  }
  // Then an unknown API: every earlier request is answered, in order, before the close.
  chunks.push(framed(Buffer.concat([Buffer.from([0x03, 0xe7, 0, 0]), rng.bytes(rng.int(4, 40))])));
  const joined = Buffer.concat(chunks);
  const split = rng.int(1, joined.length - 1);
  return { id, category: 'pipelined', what: `${n} valid requests then api key 999, split at byte ${split}`, chunks: [joined.subarray(0, split), joined.subarray(split)], expect: 'close', correlationIds: ids, separateWrites: true };
}

function byteByByte(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const simple = ctx.golden.filter((g) => (g.apiKey === ApiKey.ApiVersions || g.apiKey === ApiKey.Metadata) && isSupported(ctx, g.apiKey, g.apiVersion));
  const c = nextCorrelationId++;
  const frame = simple.length > 0 ? withCorrelationId(rng.pick(simple).frame, c) : apiVersionsFrame(c);
  const chunks: Buffer[] = [];
  for (let i = 0; i < frame.length; ) {
    const n = rng.int(1, 3);
    chunks.push(frame.subarray(i, i + n));
    i += n;
  }
  return { id, category: 'byte-by-byte', what: `${frame.length}-byte request in ${chunks.length} writes`, chunks, expect: 'response', correlationIds: [c], separateWrites: true, apiKey: frame.readInt16BE(4), apiVersion: frame.readInt16BE(6) };
}

export function generateCase(ctx: CaseContext, rng: Prng, id: number): FrameCase {
  const category = pickCategory(rng);
  switch (category) {
    case 'golden-mutation':
      return goldenMutation(ctx, rng, id);
    case 'garbage-header':
      return garbageHeader(ctx, rng, id);
    case 'garbage-body':
      return garbageBody(ctx, rng, id);
    case 'odd-values': {
      const v = semanticVariant(ctx.golden, rng, nextCorrelationId++, (k, ver) => isSupported(ctx, k, ver));
      if (v === null) return garbageBody(ctx, rng, id);
      return { id, category, what: v.what, chunks: [v.frame], expect: 'answer-or-wait', correlationIds: [v.correlationId], apiKey: v.apiKey, apiVersion: v.apiVersion };
    }
    case 'produce-corrupt': {
      const p = produceCase(rng, id, ctx.produceTarget);
      return { id, category, what: p.what, chunks: [p.frame], expect: 'response', correlationIds: [p.correlationId], apiKey: ApiKey.Produce, apiVersion: p.version, produce: p };
    }
    case 'produce-acks0': {
      // Kafka closes the connection after an acks=0 Produce that failed, so the ApiVersions behind it is never answered.
      const p = produceAcks0Case(rng, id, ctx.produceTarget);
      return { id, category, what: `${p.what}, then ApiVersions`, chunks: [p.frame, apiVersionsFrame(nextCorrelationId++)], expect: 'close', correlationIds: [], produce: p };
    }
    case 'random-frame':
      return randomFrame(rng, id);
    case 'oversize':
      return oversize(ctx, rng, id);
    case 'truncated':
      return truncated(ctx, rng, id);
    case 'pipelined':
      return pipelined(ctx, rng, id);
    case 'byte-by-byte':
      return byteByByte(ctx, rng, id);
  }
}
