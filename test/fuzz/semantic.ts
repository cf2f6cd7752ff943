// Well-formed requests with odd values: a captured request is decoded with our
// codecs, a few of its fields are replaced by edge values (negative and huge
// numbers, special offsets, empty, illegal and overlong names, duplicated or
// emptied arrays), and it is encoded again. Kafka answers such requests (with
// error codes) or lets them wait (a long poll); it never closes the connection
// over them, and the broker must not fail internally on them.
import { decodeRequestBody, decodeRequestHeader, encodeRequest } from '../../broker/protocol/frame.js';
import { ApiKey, apiRegistry } from '../../broker/protocol/messages/index.js';
import type { GoldenRequest } from './golden-frames.js';
import type { Prng } from './prng.js';

/** Names the fuzzer must never hand to a delete or alter: the suite's own topics. */
export const protectedTopics: ReadonlySet<string> = new Set(['fuzz-target', 'fuzz-health']);

const oddStrings = ['', '.', '..', 'a/b', '../../escape', 'x'.repeat(249), 'y'.repeat(250), 'z'.repeat(1000), 'ü-ñ-€', 'has space', 'a\u0000b', '__consumer_offsets', '__remote_log_metadata', 'golden-new', 'UPPER_lower.1-2'];
const oddNumbers = [0, 1, -1, 2, -2, 127, -128, 255, 0x7fff, -0x8000, 0xffff, 0x7fffffff, -0x80000000];
const oddBigints = [0n, 1n, -1n, -2n, -3n, -4n, -5n, -6n, 2n ** 31n, 2n ** 62n, 2n ** 63n - 1n, -(2n ** 63n)];
/** Counts that would make a broker create millions of things: kept small. */
const boundedFields = new Set(['numPartitions', 'count', 'replicationFactor']);

type Container = Record<string, unknown> | unknown[];
interface Slot {
  readonly parent: Container;
  readonly key: string | number;
  readonly path: string;
}

function clone(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return Buffer.from(v);
  if (Array.isArray(v)) return v.map(clone);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = clone(x);
    return out;
  }
  return v;
}

function slots(v: unknown, path: string, out: Slot[], arrays: Array<{ array: unknown[]; path: string }>): void {
  if (Array.isArray(v)) {
    arrays.push({ array: v, path });
    v.forEach((x, i) => {
      if (x !== null && typeof x === 'object' && !Buffer.isBuffer(x)) slots(x, `${path}[${i}]`, out, arrays);
      else out.push({ parent: v, key: i, path: `${path}[${i}]` });
    });
    return;
  }
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k.startsWith('_')) continue;
    if (x !== null && typeof x === 'object' && !Buffer.isBuffer(x)) slots(x, `${path}.${k}`, out, arrays);
    else out.push({ parent: v as Record<string, unknown>, key: k, path: `${path}.${k}` });
  }
}

function oddValue(current: unknown, field: string, rng: Prng): unknown {
  if (typeof current === 'number') {
    if (boundedFields.has(field)) return rng.pick([-2, -1, 0, 1, 2, 3, 50]);
    return rng.bool(0.8) ? rng.pick(oddNumbers) : rng.int(-100_000, 100_000);
  }
  if (typeof current === 'bigint') return rng.bool(0.8) ? rng.pick(oddBigints) : BigInt(rng.int(-1_000_000, 1_000_000));
  if (typeof current === 'string') return rng.pick(oddStrings);
  if (typeof current === 'boolean') return !current;
  if (Buffer.isBuffer(current)) return rng.bool(0.5) ? Buffer.alloc(0) : rng.bytes(rng.int(1, 64));
  return current;
}

function mentionsProtected(v: unknown): boolean {
  if (typeof v === 'string') return protectedTopics.has(v);
  if (Array.isArray(v)) return v.some(mentionsProtected);
  if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) return Object.values(v).some(mentionsProtected);
  return false;
}

/** The APIs whose odd variants are safe to send next to the suite's own topics. */
const destructive = new Set<number>([ApiKey.DeleteTopics, ApiKey.DeleteRecords, ApiKey.AlterConfigs, ApiKey.IncrementalAlterConfigs, ApiKey.CreatePartitions]);

export interface SemanticRequest {
  readonly frame: Buffer;
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly what: string;
}

/** An odd but well-formed variant of a captured request, or null when none encodes. */
export function semanticVariant(golden: readonly GoldenRequest[], rng: Prng, correlationId: number, supported: (apiKey: number, version: number) => boolean): SemanticRequest | null {
  // Produce has its own generator; acks=0 variants would legitimately close.
  const pool = golden.filter((g) => g.apiKey !== ApiKey.Produce && supported(g.apiKey, g.apiVersion));
  for (let attempt = 0; attempt < 8; attempt++) {
    const g = rng.pick(pool);
    const api = apiRegistry.get(g.apiKey);
    if (api === undefined) continue;
    const payload = g.frame.subarray(4);
    let body: unknown;
    let header;
    try {
      header = decodeRequestHeader(payload);
      body = clone(decodeRequestBody(header, payload).body);
    } catch {
      continue;
    }
    const leaves: Slot[] = [];
    const arrays: Array<{ array: unknown[]; path: string }> = [];
    slots(body, 'body', leaves, arrays);
    const what: string[] = [];
    const n = rng.int(1, 3);
    for (let k = 0; k < n; k++) {
      if (arrays.length > 0 && rng.bool(0.2)) {
        const a = rng.pick(arrays);
        if (a.array.length > 0 && rng.bool(0.5)) {
          const copies = rng.pick([1, 2, 50]);
          for (let c = 0; c < copies; c++) a.array.push(clone(a.array[0]));
          what.push(`${a.path}: first element repeated ${copies} more times`);
        } else {
          a.array.length = 0;
          what.push(`${a.path} emptied`);
        }
        continue;
      }
      if (leaves.length === 0) break;
      const s = rng.pick(leaves);
      const field = typeof s.key === 'string' ? s.key : '';
      const before = (s.parent as Record<string | number, unknown>)[s.key];
      const after = oddValue(before, field, rng);
      (s.parent as Record<string | number, unknown>)[s.key] = after;
      const show = typeof after === 'string' ? JSON.stringify(after.length > 20 ? `${after.slice(0, 8)}...(${after.length})` : after) : Buffer.isBuffer(after) ? `<${after.length} bytes>` : String(after);
      what.push(`${s.path} = ${show}`);
    }
    if (destructive.has(g.apiKey) && mentionsProtected(body)) continue;
    try {
      const frame = Buffer.concat(
        encodeRequest(g.apiKey, g.apiVersion, correlationId, header.clientId, (w) => api.encodeRequest(w, g.apiVersion, body), { headerTaggedFields: header.taggedFields }),
      );
      return { frame, apiKey: g.apiKey, apiVersion: g.apiVersion, correlationId, what: `${g.name}: ${what.join('; ')}` };
    } catch {
      // A value the field's type cannot carry (int8 out of range, bad uuid): try another.
    }
  }
  return null;
}
