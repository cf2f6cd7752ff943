// Primitive encoders for the Kafka wire protocol. Pure; no I/O.
// The writer appends into pooled Buffers and never copies what it already
// wrote: when a buffer fills up, it is sealed as a chunk and a larger one is
// started. Large payloads (record batches read from disk) can be appended by
// reference with writeRawRef, so a Fetch response is a list of chunks ready for
// a vectored socket write rather than one big copy.
import { ProtocolEncodeError } from './errors.js';
import { FileRecords, RecordParts, type OutputChunk, type Records } from './record-parts.js';

/** Buffers shorter than this are copied by writeRawRef: a chunk entry costs more than the copy. */
export const RAW_REF_MIN_BYTES = 64;

const EMPTY = Buffer.alloc(0);

// Scratch space for int64: Buffer.writeBigInt64BE splits the value with BigInt
// arithmetic, several times slower than a byte swap out of a BigInt64Array.
const scratch64 = new BigInt64Array(1);
const scratch8 = new Uint8Array(scratch64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function sizeOfUVarint(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  return 5;
}

export class Writer {
  private buf: Buffer;
  private pos: number;
  /** Start in `buf` of the bytes not yet sealed into `chunks`. */
  private chunkStart = 0;
  private readonly chunks: OutputChunk[] = [];
  /** Parallel to `chunks`: false for buffers appended by reference (never patched). */
  private readonly chunkOwned: boolean[] = [];
  private sealedBytes = 0;

  constructor(initialCapacity = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialCapacity));
    this.pos = 0;
  }

  /** Total bytes written so far. */
  get length(): number {
    return this.sealedBytes + this.pos - this.chunkStart;
  }

  private ensure(n: number): void {
    if (this.buf.length - this.pos < n) this.grow(n);
  }

  private seal(): void {
    if (this.pos > this.chunkStart) {
      this.chunks.push(this.buf.subarray(this.chunkStart, this.pos));
      this.chunkOwned.push(true);
      this.sealedBytes += this.pos - this.chunkStart;
      this.chunkStart = this.pos;
    }
  }

  private grow(n: number): void {
    this.seal();
    this.buf = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2, 256));
    this.pos = 0;
    this.chunkStart = 0;
  }

  writeInt8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  writeBool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  writeInt16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  writeUInt16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  writeInt32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  writeUInt32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  writeInt64(v: bigint): void {
    this.ensure(8);
    const b = this.buf;
    const o = this.pos;
    this.pos = o + 8;
    if (!littleEndian) {
      b.writeBigInt64BE(v, o);
      return;
    }
    if (v < -0x8000000000000000n || v > 0x7fffffffffffffffn) {
      throw new RangeError(`int64 out of range: ${v}`);
    }
    scratch64[0] = v;
    const s = scratch8;
    b[o] = s[7] as number;
    b[o + 1] = s[6] as number;
    b[o + 2] = s[5] as number;
    b[o + 3] = s[4] as number;
    b[o + 4] = s[3] as number;
    b[o + 5] = s[2] as number;
    b[o + 6] = s[1] as number;
    b[o + 7] = s[0] as number;
  }

  writeFloat64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  /** Unsigned base-128 varint, 0 .. 2^32-1. */
  writeUVarint(v: number): void {
    this.ensure(5);
    const buf = this.buf;
    let pos = this.pos;
    let n = v >>> 0;
    while (n >= 0x80) {
      buf[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[pos++] = n;
    this.pos = pos;
  }

  /** Zig-zag signed varint (int32). */
  writeVarint(v: number): void {
    this.writeUVarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** Zig-zag signed varlong (int64). */
  writeVarlong(v: bigint): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    while (u >= 0x80n) {
      buf[pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    buf[pos++] = Number(u);
    this.pos = pos;
  }

  /** A uuid in Kafka's base64url form (22 characters) as 16 bytes. */
  writeUuid(v: string): void {
    this.ensure(16);
    if (v.length !== 22 || this.buf.write(v, this.pos, 16, 'base64url') !== 16) {
      throw new ProtocolEncodeError(`Invalid uuid ${JSON.stringify(v)}: expected 22 base64url characters`);
    }
    this.pos += 16;
  }

  private utf8(v: string, len: number): void {
    this.ensure(len);
    this.buf.write(v, this.pos, len, 'utf8');
    this.pos += len;
  }

  private stringLength(v: string): number {
    const len = Buffer.byteLength(v, 'utf8');
    if (len > 0x7fff) throw new ProtocolEncodeError(`String of ${len} bytes exceeds 32767`);
    return len;
  }

  writeString(v: string): void {
    const len = this.stringLength(v);
    this.writeInt16(len);
    this.utf8(v, len);
  }

  writeNullableString(v: string | null): void {
    if (v === null) this.writeInt16(-1);
    else this.writeString(v);
  }

  writeCompactString(v: string): void {
    const len = this.stringLength(v);
    this.writeUVarint(len + 1);
    this.utf8(v, len);
  }

  writeCompactNullableString(v: string | null): void {
    if (v === null) this.writeUVarint(0);
    else this.writeCompactString(v);
  }

  writeBytes(v: Buffer): void {
    this.writeInt32(v.length);
    this.writeRaw(v);
  }

  writeNullableBytes(v: Buffer | null): void {
    if (v === null) this.writeInt32(-1);
    else this.writeBytes(v);
  }

  writeCompactBytes(v: Buffer): void {
    this.writeUVarint(v.length + 1);
    this.writeRaw(v);
  }

  writeCompactNullableBytes(v: Buffer | null): void {
    if (v === null) this.writeUVarint(0);
    else this.writeCompactBytes(v);
  }

  /**
   * Like writeNullableBytes, but large payloads (record batches) are appended by
   * reference; a RecordParts goes out as its total length and then each part.
   */
  writeNullableBytesRef(v: Records | null): void {
    if (v === null) {
      this.writeInt32(-1);
    } else {
      this.writeInt32(v.length);
      this.writeRecordsRef(v);
    }
  }

  /** Like writeCompactNullableBytes, but large payloads are appended by reference (see writeNullableBytesRef). */
  writeCompactNullableBytesRef(v: Records | null): void {
    if (v === null) {
      this.writeUVarint(0);
    } else {
      this.writeUVarint(v.length + 1);
      this.writeRecordsRef(v);
    }
  }

  /** The bytes of `v` without a length, each part appended by reference as writeRawRef does. */
  writeRecordsRef(v: Records): void {
    if (v instanceof FileRecords) {
      this.writeFileRef(v);
    } else if (v instanceof RecordParts) {
      for (const p of v.parts) this.writeRawRef(p);
    } else {
      this.writeRawRef(v);
    }
  }

  /** int32 element count, -1 for null. */
  writeArrayLength(n: number): void {
    this.writeInt32(n);
  }

  /** Unsigned varint (count + 1), 0 for null (pass -1). */
  writeCompactArrayLength(n: number): void {
    this.writeUVarint(n + 1);
  }

  /** Copies `v` into the output. */
  writeRaw(v: Buffer): void {
    const n = v.length;
    if (n === 0) return;
    this.ensure(n);
    v.copy(this.buf, this.pos);
    this.pos += n;
  }

  /**
   * Appends `v` by reference: the caller must not modify it until the output
   * has been consumed. Buffers under RAW_REF_MIN_BYTES are copied instead.
   */
  writeRawRef(v: Buffer): void {
    if (v.length < RAW_REF_MIN_BYTES) {
      this.writeRaw(v);
      return;
    }
    this.seal();
    this.chunks.push(v);
    this.chunkOwned.push(false);
    this.sealedBytes += v.length;
  }

  /** Appends a file region (sent from the page cache by the server); only toOutput() returns it. */
  writeFileRef(v: FileRecords): void {
    if (v.length === 0) return;
    this.seal();
    this.chunks.push(v);
    this.chunkOwned.push(false);
    this.sealedBytes += v.length;
  }

  /** Overwrites an int32 previously written at absolute output position `position`. */
  patchInt32(position: number, v: number): void {
    if (position >= this.sealedBytes) {
      const at = this.chunkStart + (position - this.sealedBytes);
      if (at + 4 > this.pos) throw new RangeError(`patchInt32 at ${position} beyond written bytes`);
      this.buf.writeInt32BE(v, at);
      return;
    }
    let base = 0;
    for (let i = 0; i < this.chunks.length; i++) {
      const c = this.chunks[i] as OutputChunk;
      if (position < base + c.length) {
        if (!this.chunkOwned[i] || position + 4 > base + c.length || c instanceof FileRecords) {
          throw new RangeError(`patchInt32 at ${position} does not land on a value this writer wrote`);
        }
        c.writeInt32BE(v, position - base);
        return;
      }
      base += c.length;
    }
    throw new RangeError(`patchInt32 at ${position} beyond written bytes`);
  }

  /** The output as chunks (views, no copy), in order. Empty chunks are left out. Throws if it holds file records. */
  toChunks(): Buffer[] {
    const out = this.toOutput();
    if (out.some((c) => c instanceof FileRecords)) throw new TypeError('this output holds file records: write it with toOutput()');
    return out as Buffer[];
  }

  /** The output as buffers and file regions, in order, for the server to send. */
  toOutput(): OutputChunk[] {
    const out = this.chunks.slice();
    if (this.pos > this.chunkStart) out.push(this.buf.subarray(this.chunkStart, this.pos));
    return out;
  }

  /** The output as one Buffer: a view when it is a single chunk, else a concatenation. */
  toBuffer(): Buffer {
    if (this.chunks.length === 0) {
      return this.pos > this.chunkStart ? this.buf.subarray(this.chunkStart, this.pos) : EMPTY;
    }
    return Buffer.concat(this.toChunks(), this.length);
  }
}
