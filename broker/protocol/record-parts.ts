// The bytes of a `records` field (Produce, Fetch, ShareFetch, FetchSnapshot) as
// one Buffer or as a list of buffers sent one after another. A Fetch answer read
// from several cached chunks or log segments keeps them as they are: the writer
// appends each part by reference and the server writes them with writev, so the
// record bytes are never joined into one buffer; a Fetch answer of bytes in the
// page cache may instead name a region of a segment file (FileRecords), sent
// with sendfile(2). Decoders always produce a Buffer. Pure; no I/O.

/** Record bytes held as consecutive buffers; empty buffers are dropped. */
export class RecordParts {
  readonly parts: readonly Buffer[];
  /** Total bytes over all parts. */
  readonly length: number;

  constructor(parts: readonly Buffer[]) {
    let length = 0;
    let empty = 0;
    for (const p of parts) {
      length += p.length;
      if (p.length === 0) empty++;
    }
    this.parts = empty === 0 ? parts.slice() : parts.filter((p) => p.length > 0);
    this.length = length;
  }
}

/**
 * Record bytes still in a log segment file: `length` bytes at `position` of the
 * open descriptor `fd`, which belongs to this value (a dup of the segment's
 * own, so it outlives a retention deletion or a closed handle). A Fetch answer
 * carries them to the connection, which sends them with sendfile(2) straight
 * from the page cache (broker/common/sendfile.ts) and closes `fd`; nothing
 * reads them into memory. Only answers written to a socket hold them.
 */
export class FileRecords {
  constructor(
    readonly fd: number,
    readonly position: number,
    readonly length: number,
  ) {}
}

/** The bytes of a `records` field: one Buffer, several sent in order, or a file region. */
export type Records = Buffer | RecordParts | FileRecords;

/** What a response is written as: buffers, and file regions sent from the page cache. */
export type OutputChunk = Buffer | FileRecords;

function notInMemory(): never {
  throw new TypeError('file records are only sent to a socket, never read back into memory');
}

const EMPTY = Buffer.alloc(0);

/**
 * The smallest form of `parts`: null for none, the buffer itself for one
 * non-empty buffer, else a RecordParts (no copy in any case).
 */
export function recordsOf(parts: readonly Buffer[]): Records | null {
  if (parts.length === 0) return null;
  if (parts.length === 1) return parts[0] as Buffer;
  const r = new RecordParts(parts);
  return r.parts.length === 1 ? (r.parts[0] as Buffer) : r;
}

/** The buffers of `r`, in order (a Buffer is its own single part; empty ones are left out). */
export function recordsParts(r: Records): readonly Buffer[] {
  if (r instanceof RecordParts) return r.parts;
  if (r instanceof FileRecords) return notInMemory();
  return r.length === 0 ? [] : [r];
}

/**
 * The bytes as one Buffer: `r` itself when it is a Buffer, its only part, or a
 * concatenation (a copy) when there are several parts.
 */
export function recordsBuffer(r: Records): Buffer {
  if (r instanceof FileRecords) return notInMemory();
  if (!(r instanceof RecordParts)) return r;
  const { parts } = r;
  if (parts.length === 0) return EMPTY;
  if (parts.length === 1) return parts[0] as Buffer;
  return Buffer.concat(parts as Buffer[], r.length);
}
