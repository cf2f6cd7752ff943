// Primitive decoders for the Kafka wire protocol over one Buffer. Pure; no I/O.
// Every length read from the wire is checked against the bytes that remain
// before anything is sliced or allocated, so a hostile frame cannot make us
// allocate more than it carries. Bytes and strings are views (no copy) where
// the type allows it.
import { ProtocolDecodeError } from './errors.js';

// Scratch space for int64: Buffer.readBigInt64BE builds the value with BigInt
// arithmetic, about 3x slower than a byte swap into a BigInt64Array.
const scratch64 = new BigInt64Array(1);
const scratch8 = new Uint8Array(scratch64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Kafka's Uuid.ZERO_UUID in its string form. */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export class Reader {
  /** Absolute position in `buf` of the next byte to read. */
  offset: number;
  /** Absolute end (exclusive) of the readable region. */
  readonly end: number;

  constructor(
    readonly buf: Buffer,
    offset = 0,
    end = buf.length,
  ) {
    if (offset < 0 || end > buf.length || offset > end) {
      throw new RangeError(`Reader bounds [${offset}, ${end}) outside buffer of ${buf.length}`);
    }
    this.offset = offset;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  /** Throws unless `n` more bytes are available. */
  private need(n: number): void {
    if (this.end - this.offset < n) {
      throw new ProtocolDecodeError(
        `Truncated message: needed ${n} bytes at offset ${this.offset}, ${this.end - this.offset} remain`,
      );
    }
  }

  skip(n: number): void {
    this.need(n);
    this.offset += n;
  }

  /** A view of the next `n` bytes (no copy). */
  readRaw(n: number): Buffer {
    this.need(n);
    const start = this.offset;
    this.offset += n;
    return this.buf.subarray(start, start + n);
  }

  /** A Reader over the next `n` bytes; this reader moves past them. */
  sub(n: number): Reader {
    this.need(n);
    const r = new Reader(this.buf, this.offset, this.offset + n);
    this.offset += n;
    return r;
  }

  readInt8(): number {
    this.need(1);
    return this.buf.readInt8(this.offset++);
  }

  readBool(): boolean {
    this.need(1);
    return this.buf[this.offset++] !== 0;
  }

  readInt16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  readUInt16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  readInt32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  readUInt32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  readInt64(): bigint {
    this.need(8);
    const b = this.buf;
    const o = this.offset;
    this.offset = o + 8;
    if (!littleEndian) return b.readBigInt64BE(o);
    const s = scratch8;
    s[7] = b[o] as number;
    s[6] = b[o + 1] as number;
    s[5] = b[o + 2] as number;
    s[4] = b[o + 3] as number;
    s[3] = b[o + 4] as number;
    s[2] = b[o + 5] as number;
    s[1] = b[o + 6] as number;
    s[0] = b[o + 7] as number;
    return scratch64[0] as bigint;
  }

  readFloat64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.offset);
    this.offset += 8;
    return v;
  }

  /** Unsigned base-128 varint of at most 5 bytes (0 .. 2^32-1), as Kafka's readUnsignedVarint. */
  readUVarint(): number {
    const buf = this.buf;
    let pos = this.offset;
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (pos >= this.end) {
        throw new ProtocolDecodeError(`Truncated varint at offset ${this.offset}`);
      }
      const b = buf[pos++] as number;
      if (shift === 28) {
        if (b > 0x0f) throw new ProtocolDecodeError(`Varint too long at offset ${this.offset}`);
        result += b * 0x10000000;
        this.offset = pos;
        return result;
      }
      result |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.offset = pos;
        return result >>> 0;
      }
    }
    throw new ProtocolDecodeError(`Varint too long at offset ${this.offset}`);
  }

  /** Zig-zag signed varint (int32). */
  readVarint(): number {
    const u = this.readUVarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zig-zag signed varlong (int64), at most 10 bytes. */
  readVarlong(): bigint {
    const buf = this.buf;
    let pos = this.offset;
    // Fast path: fits in 28 bits (4 bytes) as a plain number.
    let small = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= this.end) throw new ProtocolDecodeError(`Truncated varlong at offset ${this.offset}`);
      const b = buf[pos++] as number;
      small |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.offset = pos;
        return BigInt((small >>> 1) ^ -(small & 1));
      }
    }
    let result = BigInt(small);
    for (let shift = 28n; shift < 70n; shift += 7n) {
      if (pos >= this.end) throw new ProtocolDecodeError(`Truncated varlong at offset ${this.offset}`);
      const b = buf[pos++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) {
        this.offset = pos;
        const u = BigInt.asUintN(64, result);
        return (u >> 1n) ^ -(u & 1n);
      }
    }
    throw new ProtocolDecodeError(`Varlong too long at offset ${this.offset}`);
  }

  /** 16 bytes, returned in Kafka's base64url string form (22 characters). */
  readUuid(): string {
    this.need(16);
    const s = this.buf.toString('base64url', this.offset, this.offset + 16);
    this.offset += 16;
    return s;
  }

  private utf8(len: number): string {
    this.need(len);
    const start = this.offset;
    this.offset += len;
    return this.buf.toString('utf8', start, start + len);
  }

  /** int16 length, then UTF-8; any negative length is null, as in Kafka's generated readers. */
  readNullableString(): string | null {
    const len = this.readInt16();
    return len < 0 ? null : this.utf8(len);
  }

  readString(): string {
    const s = this.readNullableString();
    if (s === null) throw new ProtocolDecodeError('Non-nullable string was null');
    return s;
  }

  /** Unsigned varint (length + 1), then UTF-8; 0 is null. */
  readCompactNullableString(): string | null {
    const n = this.readUVarint();
    if (n === 0) return null;
    if (n - 1 > 0x7fff) throw new ProtocolDecodeError(`String length ${n - 1} exceeds 32767`);
    return this.utf8(n - 1);
  }

  readCompactString(): string {
    const s = this.readCompactNullableString();
    if (s === null) throw new ProtocolDecodeError('Non-nullable compact string was null');
    return s;
  }

  /** int32 length, then bytes (a view); any negative length is null, as in Kafka. */
  readNullableBytes(): Buffer | null {
    const len = this.readInt32();
    return len < 0 ? null : this.readRaw(len);
  }

  readBytes(): Buffer {
    const b = this.readNullableBytes();
    if (b === null) throw new ProtocolDecodeError('Non-nullable bytes were null');
    return b;
  }

  readCompactNullableBytes(): Buffer | null {
    const n = this.readUVarint();
    if (n === 0) return null;
    return this.readRaw(n - 1);
  }

  readCompactBytes(): Buffer {
    const b = this.readCompactNullableBytes();
    if (b === null) throw new ProtocolDecodeError('Non-nullable compact bytes were null');
    return b;
  }

  /**
   * int32 element count; any negative count means null (returned as -1), as
   * Kafka's generated readers take it. Counts above the remaining bytes are
   * rejected, as Kafka rejects them (every element takes at least one byte).
   */
  readArrayLength(): number {
    const n = this.readInt32();
    if (n < 0) return -1;
    this.checkCount(n);
    return n;
  }

  /** Unsigned varint (count + 1); returns -1 for null. */
  readCompactArrayLength(): number {
    const n = this.readUVarint() - 1;
    if (n >= 0) this.checkCount(n);
    return n;
  }

  private checkCount(n: number): void {
    if (n > this.end - this.offset) {
      throw new ProtocolDecodeError(
        `Array of ${n} elements cannot fit in the ${this.end - this.offset} remaining bytes`,
      );
    }
  }

  readArray<T>(read: (r: Reader) => T): T[] {
    const n = this.readArrayLength();
    if (n < 0) throw new ProtocolDecodeError('Non-nullable array was null');
    return this.readElements(n, read);
  }

  readNullableArray<T>(read: (r: Reader) => T): T[] | null {
    const n = this.readArrayLength();
    return n < 0 ? null : this.readElements(n, read);
  }

  readCompactArray<T>(read: (r: Reader) => T): T[] {
    const n = this.readCompactArrayLength();
    if (n < 0) throw new ProtocolDecodeError('Non-nullable compact array was null');
    return this.readElements(n, read);
  }

  readCompactNullableArray<T>(read: (r: Reader) => T): T[] | null {
    const n = this.readCompactArrayLength();
    return n < 0 ? null : this.readElements(n, read);
  }

  private readElements<T>(n: number, read: (r: Reader) => T): T[] {
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = read(this);
    return out;
  }

  /** Throws unless every byte of the region was consumed. */
  expectEnd(what: string): void {
    if (this.offset !== this.end) {
      throw new ProtocolDecodeError(`${this.end - this.offset} unexpected trailing bytes after ${what}`);
    }
  }
}
