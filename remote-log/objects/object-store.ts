// The lowest layer: a flat key -> bytes store (S3 bucket, directory, memory).
// It knows nothing of segments, manifests or compression; the storage logic in
// object-remote-storage.ts builds on it, so every backend shares one
// implementation of the RemoteStorage contract.
import { RemoteAbortedError } from '../remote-storage.js';

export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  /** Milliseconds since the epoch. */
  readonly lastModified: number;
}

/** Bytes [start, endInclusive] of an object. */
export interface ByteRange {
  readonly start: number;
  readonly endInclusive: number;
}

/** Told each complete piece of a getPieces request: its index in the lengths asked for. */
export type PieceListener = (index: number, piece: Buffer) => void;

/**
 * Memory for piece `index` of a getPieces request (`length` bytes), lent by
 * the caller, or undefined: the store allocates. See ChunkTargets.
 */
export type PieceTargets = (index: number, length: number) => Buffer | undefined;

/** The lent buffer for a piece, cut to its length, or a fresh one. */
export function pieceBuffer(targets: PieceTargets | undefined, index: number, length: number): Buffer {
  const lent = targets?.(index, length);
  return lent !== undefined && lent.length >= length ? lent.subarray(0, length) : Buffer.allocUnsafeSlow(length);
}

/** A whole body in memory, or pieces produced as the upload goes (a file read chunk by chunk). */
export type ObjectBody = Buffer | AsyncIterable<Buffer>;

/**
 * CRC-32C of streamed pieces, recorded by the producer as it yields each piece
 * (keyed by the yielded Buffer object): a store that checksums what it sends
 * combines these instead of reading the bytes again. Optional on both sides.
 */
export const pieceCrc32c = new WeakMap<Buffer, number>();

/** Buffers of one size, lent out and given back (an S3 store's part buffers). */
export interface BufferLender {
  readonly bufferSize: number;
  take(): Buffer;
  give(buf: Buffer): void;
}

/**
 * Streamed pieces whose whole underlying buffer the producer hands over: it
 * took that buffer from the store's `pieceBuffers`, yields views of it in
 * order from its start, and never writes to it again once it has yielded one.
 * The store may then keep the buffer (upload from it in place, no copy) and
 * give it back to its lender when done; a store that does not adopt a piece
 * copies it as usual. Keyed by the yielded Buffer object.
 */
export const handedOverPieces = new WeakSet<Buffer>();

export interface ObjectStore {
  /** For messages: `s3://bucket`, `file:///dir`, `memory://`. */
  readonly description: string;
  /** Streamed bodies are best produced in pieces adding up to this size (S3: the part size). */
  readonly preferredPieceSize?: number;
  /** Where a producer of a streamed body may take the buffers it reads into and hands over (handedOverPieces). */
  readonly pieceBuffers?: BufferLender;
  /**
   * Writes the whole object, replacing any previous one; readers never see a
   * partial object. `sizeHint` (a streamed body's expected size, exact or an
   * upper bound) lets a store choose its upload method before the end.
   */
  put(key: string, body: ObjectBody, signal?: AbortSignal, sizeHint?: number): Promise<void>;
  /**
   * The object's bytes, or a range of them (the end is clamped to the object's
   * last byte). Throws RemoteResourceNotFoundError when the key is absent.
   */
  get(key: string, range?: ByteRange, signal?: AbortSignal): Promise<Buffer>;
  /**
   * Bytes of `range` as consecutive pieces of `lengths` (adding up to the
   * range), each its own allocation rather than a view into one larger
   * buffer, so a cache can hold and drop them one by one. One request. When
   * the object ends early the last pieces are short or missing (the caller
   * judges). Stores without it are served by get() and copyPieces().
   *
   * `onPiece` is told each piece that is complete (all of its length), by its
   * index in `lengths`, in order, as soon as its last byte has arrived, while
   * the rest of the body may still be streaming; a short last piece is not
   * told, only returned. A retried request resumes after the last piece told
   * (none is told twice). A piece told stays valid when the request fails
   * later. An exception thrown by onPiece fails the request at once (not
   * retried).
   */
  getPieces?(key: string, range: ByteRange, lengths: readonly number[], signal?: AbortSignal, onPiece?: PieceListener, targets?: PieceTargets): Promise<Buffer[]>;
  /** Idempotent: deleting an absent key succeeds. */
  delete(key: string, signal?: AbortSignal): Promise<void>;
  /**
   * Every object whose key starts with `prefix`, in key order; with
   * `startAfter`, only those whose key sorts after it (S3's StartAfter: any
   * string, not necessarily a key). An incremental lister pays only for the
   * keys past what it has already seen.
   */
  list(prefix: string, signal?: AbortSignal, startAfter?: string): Promise<ObjectInfo[]>;
  /**
   * Abandons the uploads still open for exactly `key` (a writer that died in
   * the middle of a multipart upload leaves invisible parts that cost storage);
   * resolves with how many. Stores without multipart uploads omit it.
   */
  abortUploads?(key: string, signal?: AbortSignal): Promise<number>;
  close(): Promise<void>;
}

/** Collects a body into one Buffer (copying each piece, which is only valid until the next), honouring the signal. */
export async function collectBody(body: ObjectBody, signal?: AbortSignal): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const pieces: Buffer[] = [];
  for await (const piece of body) {
    if (signal?.aborted) throw new RemoteAbortedError('upload aborted', { cause: signal.reason });
    pieces.push(Buffer.from(piece));
  }
  return Buffer.concat(pieces);
}

/**
 * `bytes` cut into consecutive copies of `lengths` (fewer or shorter at its
 * end), each its own allocation (or the target lent for it); `onPiece` is told
 * each complete one.
 */
export function copyPieces(bytes: Buffer, lengths: readonly number[], onPiece?: PieceListener, targets?: PieceTargets): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const n of lengths) {
    if (at >= bytes.length) break;
    const piece = bytes.subarray(at, Math.min(at + n, bytes.length));
    const own = pieceBuffer(targets, out.length, piece.length);
    piece.copy(own);
    out.push(own);
    if (own.length === n) onPiece?.(out.length - 1, own);
    at += n;
  }
  return out;
}

/**
 * Fills fresh (or lent) buffers of `lengths` from streamed pieces, in order, telling
 * `onPiece` each one as soon as it is full; what a store's getPieces reads its
 * body with.
 */
export class PieceFiller {
  readonly pieces: Buffer[] = [];
  private current: Buffer | undefined;
  private filled = 0;
  private next = 0;
  /** Bytes taken so far. */
  total = 0;

  constructor(
    private readonly lengths: readonly number[],
    private readonly onPiece?: PieceListener,
    private readonly targets?: PieceTargets,
  ) {}

  /**
   * Takes the next bytes of the body; throws when they run past the expected
   * total (or when onPiece throws). A piece told to onPiece is never touched
   * again: its listener may take it away (a worker transfers its memory).
   */
  push(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.length) {
      if (this.current === undefined) {
        const n = this.lengths[this.next++];
        if (n === undefined) throw new Error(`response body longer than the ${this.lengths.reduce((a, b) => a + b, 0)} bytes asked for`);
        this.current = pieceBuffer(this.targets, this.next - 1, n);
        this.filled = 0;
        this.pieces.push(this.current);
      }
      const piece = this.current;
      const take = Math.min(bytes.length - at, piece.length - this.filled);
      piece.set(bytes.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      this.total += take;
      if (this.filled === piece.length) {
        this.current = undefined;
        this.onPiece?.(this.pieces.length - 1, piece);
      }
    }
  }

  /** Pieces told to onPiece so far (every full one). */
  get completed(): number {
    return this.current !== undefined ? this.pieces.length - 1 : this.pieces.length;
  }

  /** The pieces; a last piece filled only partly is cut to what arrived. */
  finish(): Buffer[] {
    if (this.current !== undefined) this.pieces[this.pieces.length - 1] = this.current.subarray(0, this.filled);
    return this.pieces;
  }
}

/** Clamps a range to an object of `size` bytes: [start, endExclusive). */
export function clampRange(size: number, range: ByteRange | undefined): { start: number; end: number } {
  if (range === undefined) return { start: 0, end: size };
  const start = Math.min(Math.max(0, range.start), size);
  const end = Math.min(Math.max(start, range.endInclusive + 1), size);
  return { start, end };
}
