// Xerial snappy framing, which Java producers (xerial SnappyOutputStream) and
// kafkajs put around raw snappy blocks: a 16-byte header — magic
// 82 53 4E 41 50 50 59 00, int32 version, int32 min-compatible version — then
// chunks of big-endian int32 length + one raw snappy block. librdkafka writes a
// single raw block instead; decoders accept both.

export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
export const XERIAL_HEADER_SIZE = 16;
const XERIAL_VERSION = 1;
const XERIAL_MIN_COMPATIBLE = 1;
/** xerial's default block size. */
export const XERIAL_BLOCK_SIZE = 32 * 1024;

export function isXerialFramed(data: Buffer): boolean {
  return data.length >= XERIAL_HEADER_SIZE && data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

/** Yields the raw snappy blocks of a framed buffer; `fail` builds the error thrown on bad framing. */
export function* xerialUnframe(data: Buffer, fail: (detail: string) => Error): Generator<Buffer> {
  let pos = XERIAL_HEADER_SIZE;
  while (pos < data.length) {
    if (pos + 4 > data.length) throw fail('xerial chunk length is truncated');
    const len = data.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > data.length) throw fail(`xerial chunk of ${len} bytes overruns the buffer`);
    yield data.subarray(pos, pos + len);
    pos += len;
  }
}

/** Frames `data` as xerial does, compressing each block with `compressRaw`. */
export function xerialFrame(
  data: Buffer,
  compressRaw: (block: Buffer) => Buffer,
  blockSize = XERIAL_BLOCK_SIZE,
): Buffer {
  const header = Buffer.alloc(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(XERIAL_VERSION, 8);
  header.writeInt32BE(XERIAL_MIN_COMPATIBLE, 12);
  const parts: Buffer[] = [header];
  for (let pos = 0; pos < data.length; pos += blockSize) {
    const block = compressRaw(data.subarray(pos, Math.min(data.length, pos + blockSize)));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}
