// Splits a TCP byte stream into size-prefixed Kafka frames. Pure: fed chunks,
// it yields whole frames and enforces the size limit from the 4-byte prefix
// alone, before a body is buffered (socket.request.max.bytes).

export class FrameTooLargeError extends Error {
  constructor(readonly size: number, readonly limit: number) {
    super(`request of ${size} bytes exceeds socket.request.max.bytes=${limit}`);
  }
}

export class InvalidFrameSizeError extends Error {
  constructor(readonly size: number) {
    super(`invalid frame size ${size}`);
  }
}

export class FrameSplitter {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private expected = -1;

  constructor(private readonly maxFrameBytes: number) {}

  /** Feeds a chunk; returns the frames (without the size prefix) it completes. */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < 4) break;
        const size = this.peekInt32();
        if (size < 0) throw new InvalidFrameSizeError(size);
        if (size > this.maxFrameBytes) throw new FrameTooLargeError(size, this.maxFrameBytes);
        this.consume(4);
        this.expected = size;
      }
      if (this.buffered < this.expected) break;
      frames.push(this.consume(this.expected));
      this.expected = -1;
    }
    return frames;
  }

  get pendingBytes(): number {
    return this.buffered;
  }

  private peekInt32(): number {
    const first = this.chunks[0]!;
    if (first.length >= 4) return first.readInt32BE(0);
    return this.flatten().readInt32BE(0);
  }

  private flatten(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private consume(n: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return out;
    }
    const all = this.flatten();
    const out = all.subarray(0, n);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.buffered -= n;
    return out;
  }
}
