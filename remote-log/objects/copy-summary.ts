// The summary a copy returns as custom metadata: small UTF-8 JSON the
// COPY_SEGMENT_FINISHED record carries in __remote_log_metadata, so a reader
// learns facts about the upload without fetching the manifest. Pure; no I/O.
// Metadata written by other versions or other storage plugins may hold
// anything here: decoding never throws, and what it cannot read counts as
// unknown (not verified).
import type { DataCompression } from '../remote-storage.js';

export interface CopySummary {
  /** The manifest format version the copy wrote. */
  readonly v: number;
  readonly compression: DataCompression;
  readonly chunkSize: number;
  readonly dataSize: number;
  readonly storedDataSize: number;
  /** Every record batch passed its CRC at upload: the chunk CRCs then vouch for each batch on read. */
  readonly batchesVerified: boolean;
}

export function encodeCopySummary(s: CopySummary): Buffer {
  return Buffer.from(JSON.stringify(s), 'utf8');
}

/** Decoded per custom metadata buffer: the metadata cache hands out the same Buffer for a segment on every lookup. */
const verifiedByBuffer = new WeakMap<Buffer, boolean>();

/** True only when `customMetadata` is a copy summary saying the segment's batches were verified at upload. */
export function batchesVerifiedAtUpload(customMetadata: Buffer | undefined): boolean {
  if (customMetadata === undefined) return false;
  let verified = verifiedByBuffer.get(customMetadata);
  if (verified === undefined) {
    verified = false;
    try {
      const json: unknown = JSON.parse(customMetadata.toString('utf8'));
      verified = typeof json === 'object' && json !== null && (json as { batchesVerified?: unknown }).batchesVerified === true;
    } catch {
      // Not a summary of ours: unknown, so not verified.
    }
    verifiedByBuffer.set(customMetadata, verified);
  }
  return verified;
}
