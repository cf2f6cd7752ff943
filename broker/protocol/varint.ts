// Zig-zag varints as used inside record batch v2 records (Kafka's
// ByteUtils.readVarint/readVarlong): little-endian base-128 groups, 7 bits
// each, high bit = "more". int32 values take at most 5 bytes, int64 at most 10.
// Pure; no I/O. Readers work on a Cursor so a record walk allocates nothing.

/** A read position inside `buf`, bounded by `end` (exclusive). */
export interface Cursor {
  buf: Buffer;
  pos: number;
  end: number;
}

export function cursor(buf: Buffer, pos = 0, end = buf.length): Cursor {
  return { buf, pos, end };
}

/** Thrown on malformed or truncated varints; callers map it to a Kafka error. */
export class VarintError extends RangeError {
  override name = 'VarintError';
}

export function zigZagEncode32(n: number): number {
  return ((n << 1) ^ (n >> 31)) >>> 0;
}

export function zigZagDecode32(n: number): number {
  return (n >>> 1) ^ -(n & 1);
}

export function zigZagEncode64(n: bigint): bigint {
  return BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
}

export function zigZagDecode64(n: bigint): bigint {
  return BigInt.asIntN(64, (n >> 1n) ^ -(n & 1n));
}

/** Reads a zig-zag int32 varint; throws VarintError past `end` or after 5 bytes. */
export function readVarint(c: Cursor): number {
  let result = 0;
  let shift = 0;
  const { buf, end } = c;
  let pos = c.pos;
  for (let i = 0; i < 5; i++) {
    if (pos >= end) throw new VarintError('varint runs past the end of its buffer');
    const b = buf[pos++] as number;
    result |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      c.pos = pos;
      return zigZagDecode32(result >>> 0);
    }
    shift += 7;
  }
  throw new VarintError('varint is longer than 5 bytes');
}

/** Reads a zig-zag int64 varlong as a bigint; throws after 10 bytes. */
export function readVarlong(c: Cursor): bigint {
  const { buf, end } = c;
  let pos = c.pos;
  // Fast path: up to 4 groups (28 bits) fit a 32-bit accumulator exactly.
  let small = 0;
  for (let i = 0; i < 4; i++) {
    if (pos >= end) throw new VarintError('varlong runs past the end of its buffer');
    const b = buf[pos++] as number;
    small |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) {
      c.pos = pos;
      return BigInt(zigZagDecode32(small >>> 0));
    }
  }
  let result = BigInt(small >>> 0);
  let shift = 28n;
  for (let i = 4; i < 10; i++) {
    if (pos >= end) throw new VarintError('varlong runs past the end of its buffer');
    const b = buf[pos++] as number;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      c.pos = pos;
      return zigZagDecode64(BigInt.asUintN(64, result));
    }
    shift += 7n;
  }
  throw new VarintError('varlong is longer than 10 bytes');
}

/** Skips one varint/varlong without decoding it. */
export function skipVarint(c: Cursor, maxBytes = 10): void {
  const { buf, end } = c;
  let pos = c.pos;
  for (let i = 0; i < maxBytes; i++) {
    if (pos >= end) throw new VarintError('varint runs past the end of its buffer');
    if (((buf[pos++] as number) & 0x80) === 0) {
      c.pos = pos;
      return;
    }
  }
  throw new VarintError(`varint is longer than ${maxBytes} bytes`);
}

export function sizeOfUnsignedVarint(u: number): number {
  let v = u >>> 0;
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

export function sizeOfVarint(n: number): number {
  return sizeOfUnsignedVarint(zigZagEncode32(n));
}

export function sizeOfVarlong(n: bigint): number {
  let v = zigZagEncode64(n);
  let size = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    size++;
  }
  return size;
}

/** Writes a zig-zag int32 varint at `pos`; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, n: number): number {
  let v = zigZagEncode32(n);
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Writes a zig-zag int64 varlong at `pos`; returns the position after it. */
export function writeVarlong(buf: Buffer, pos: number, n: bigint): number {
  let v = zigZagEncode64(n);
  while (v >= 0x80n) {
    buf[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  buf[pos++] = Number(v);
  return pos;
}
