// A remote storage worker (a worker thread): it opens the broker's remote
// storage itself and serves, off the broker's event loop,
// - fetchChunks requests: the ranged GET, copying the body into chunk buffers
//   and the CRC checks, handing each verified chunk back as soon as it has
//   arrived: read into the slot of shared memory the broker lent for it, or
//   else by transferring its memory (no copy either way);
// - copySegment requests: reading the segment files, the batch CRC scan, the
//   chunk CRCs and the uploads, answering with the copy's result.
import { parentPort, workerData } from 'node:worker_threads';
import type { ChunkTargets } from '../remote-storage.js';
import type { LentSlot, StorageWorkerData, StorageWorkerReply, StorageWorkerRequest } from './storage-worker-protocol.js';
import { receivedSegmentFiles, serializeError } from './storage-worker-protocol.js';
import { createRemoteStorage } from '../storage-url.js';
import { lowerThreadPriority } from './thread-priority.js';

if (parentPort === null) throw new Error('storage-worker.js runs as a worker thread');
const port = parentPort;
const { url, rsmConfig, nice } = workerData as StorageWorkerData;
if (nice !== undefined && nice > 0) {
  void lowerThreadPriority(nice).then((outcome) => port.postMessage({ type: 'priority', outcome } satisfies StorageWorkerReply));
}
const storage = createRemoteStorage(url, rsmConfig);
const running = new Map<number, AbortController>();
/** The broker's shared chunk memory, by the number it gave each buffer. */
const memories = new Map<number, SharedArrayBuffer>();

/** The chunk's whole memory, to transfer: a chunk sharing its memory with others is copied first. */
function transferable(chunk: Buffer): ArrayBuffer {
  if (chunk.byteOffset === 0 && chunk.length === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer) return chunk.buffer;
  const copy = new ArrayBuffer(chunk.length);
  new Uint8Array(copy).set(chunk);
  return copy;
}

function fail(id: number, e: unknown): void {
  const reply: StorageWorkerReply = { type: 'failed', id, error: serializeError(e) };
  port.postMessage(reply);
}

port.on('message', (m: StorageWorkerRequest) => {
  if (m.type === 'cancel') {
    running.get(m.id)?.abort(new Error('cancelled by the broker'));
    return;
  }
  if (m.type === 'memory') {
    memories.set(m.memory, m.buffer);
    return;
  }
  const controller = new AbortController();
  running.set(m.id, controller);
  let work: Promise<void>;
  if (m.type === 'copy') {
    work = storage.copySegment(m.ref, receivedSegmentFiles(m.files), controller.signal).then((result) => {
      const reply: StorageWorkerReply = { type: 'copied', id: m.id, result };
      port.postMessage(reply);
    });
  } else {
    const lent = m.targets;
    const slotOf = (index: number): { slot: LentSlot; buffer: SharedArrayBuffer } | undefined => {
      const slot = lent?.[index - m.first] ?? null;
      const buffer = slot === null ? undefined : memories.get(slot.memory);
      return slot === null || buffer === undefined ? undefined : { slot, buffer };
    };
    const targets: ChunkTargets | undefined =
      lent === undefined
        ? undefined
        : (index, length) => {
            const at = slotOf(index);
            return at === undefined || length > at.slot.length ? undefined : Buffer.from(at.buffer, at.slot.offset, at.slot.length);
          };
    const onChunk = (index: number, chunk: Buffer): void => {
      const at = slotOf(index);
      if (at !== undefined && chunk.buffer === at.buffer && chunk.byteOffset === at.slot.offset) {
        // In the broker's own memory already: only its length crosses.
        const reply: StorageWorkerReply = { type: 'filled', id: m.id, index, length: chunk.length };
        port.postMessage(reply);
        return;
      }
      // Transferring detaches the worker's Buffer: the storage keeps no use for it once told.
      const memory = transferable(chunk);
      const reply: StorageWorkerReply = { type: 'chunk', id: m.id, index, chunk: memory };
      port.postMessage(reply, [memory]);
    };
    const manifest = m.manifest;
    work = Promise.resolve()
      .then(() => {
        if (manifest !== undefined) storage.adoptManifest(m.ref, manifest);
        return storage.fetchChunks(m.ref, m.first, m.last, m.chunkSize, controller.signal, onChunk, targets);
      })
      .then(() => {
        const reply: StorageWorkerReply = { type: 'done', id: m.id };
        port.postMessage(reply);
      });
  }
  work.catch((e: unknown) => fail(m.id, e)).finally(() => running.delete(m.id));
});
