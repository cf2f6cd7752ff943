// Builds message values from the generated schemas: defaults as the decoder
// fills them, and seeded random samples for round-trip tests.
import type { FieldSchema, MessageSchema, Range, TypeSchema } from './schema-types.js';

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export type Value = unknown;
export type Obj = Record<string, unknown>;

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function inRange(r: Range | null | undefined, v: number): boolean {
  return r !== null && r !== undefined && v >= r[0] && v <= r[1];
}

function isNullableField(f: FieldSchema): boolean {
  return f.nullable !== null || f.type.kind === 'records';
}

export function defaultOf(schema: MessageSchema, f: FieldSchema): Value {
  const d = f.default;
  switch (f.type.kind) {
    case 'int8': case 'int16': case 'int32': case 'uint16': case 'uint32': case 'float64':
      return d === null || d === '' ? 0 : Number(d);
    case 'int64':
      return d === null ? 0n : BigInt(d);
    case 'bool':
      return d === 'true';
    case 'string':
      return d === 'null' ? null : (d ?? '');
    case 'uuid':
      return ZERO_UUID;
    case 'bytes':
      return d === 'null' ? null : Buffer.alloc(0);
    case 'records':
      return null;
    case 'array':
      return d === 'null' ? null : [];
    case 'struct':
      return d === 'null' ? null : defaultStruct(schema, f.type.struct);
  }
}

export function defaultStruct(schema: MessageSchema, name: string): Obj {
  const fields = schema.structs[name];
  if (!fields) throw new Error(`no struct ${name}`);
  const o: Obj = {};
  for (const f of fields) o[f.prop] = defaultOf(schema, f);
  return o;
}

export interface SampleOptions {
  /** Probability of adding unknown tagged fields to a struct in a flexible version. */
  unknownTags: number;
  maxArray: number;
}

const CHARS = ['a', 'b', 'Z', '0', '-', '_', '.', ' ', 'é', 'ß', '日', '😀'];

export class Sampler {
  constructor(
    readonly schema: MessageSchema,
    readonly version: number,
    readonly rnd: () => number,
    readonly opts: SampleOptions = { unknownTags: 0.3, maxArray: 3 },
  ) {}

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.rnd() * (hi - lo + 1));
  }

  private get flexible(): boolean {
    return inRange(this.schema.flexible, this.version);
  }

  private bytes(max: number): Buffer {
    const n = this.int(0, max);
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(0, 255);
    return b;
  }

  private value(t: TypeSchema, depth: number): Value {
    switch (t.kind) {
      case 'int8': return this.int(-128, 127);
      case 'int16': return this.int(-32768, 32767);
      case 'int32': return this.int(-2147483648, 2147483647);
      case 'uint16': return this.int(0, 65535);
      case 'uint32': return this.int(0, 4294967295);
      case 'int64': {
        const hi = BigInt(this.int(0, 4294967295));
        const lo = BigInt(this.int(0, 4294967295));
        return BigInt.asIntN(64, (hi << 32n) | lo);
      }
      case 'float64': return (this.rnd() - 0.5) * 10 ** this.int(-5, 20);
      case 'bool': return this.rnd() < 0.5;
      case 'string': {
        const n = this.int(0, 8);
        let s = '';
        for (let i = 0; i < n; i++) s += CHARS[this.int(0, CHARS.length - 1)];
        return s;
      }
      case 'uuid': return this.rnd() < 0.1 ? ZERO_UUID : this.uuid();
      case 'bytes': return this.bytes(12);
      case 'records': return this.bytes(150);
      case 'array': {
        const n = depth > 3 ? 0 : this.int(0, this.opts.maxArray);
        const out: Value[] = [];
        for (let i = 0; i < n; i++) out.push(this.value(t.elem, depth + 1));
        return out;
      }
      case 'struct':
        return this.struct(t.struct, depth + 1);
    }
  }

  private uuid(): string {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 16; i++) b[i] = this.int(0, 255);
    return b.toString('base64url');
  }

  fields(fields: FieldSchema[], depth: number): Obj {
    const o: Obj = {};
    for (const f of fields) {
      const present = f.tagged ? inRange(f.tagged.versions, this.version) : inRange(f.versions, this.version);
      if (!present) {
        o[f.prop] = defaultOf(this.schema, f);
        continue;
      }
      if (f.tagged && this.rnd() < 0.3) {
        o[f.prop] = defaultOf(this.schema, f);
        continue;
      }
      const nullableNow = f.type.kind === 'records' || inRange(f.nullable, this.version);
      if (nullableNow && isNullableField(f) && this.rnd() < 0.2) {
        o[f.prop] = null;
        continue;
      }
      o[f.prop] = this.value(f.type, depth);
    }
    if (this.flexible && this.rnd() < this.opts.unknownTags) {
      const n = this.int(1, 2);
      const tags = [];
      let tag = 1000 + this.int(0, 5);
      for (let i = 0; i < n; i++) {
        tags.push({ tag, data: this.bytes(6) });
        tag += this.int(1, 300);
      }
      o._unknownTaggedFields = tags;
    }
    return o;
  }

  struct(name: string, depth: number): Obj {
    const fields = this.schema.structs[name];
    if (!fields) throw new Error(`no struct ${name}`);
    return this.fields(fields, depth);
  }

  message(): Obj {
    return this.fields(this.schema.fields, 0);
  }
}
