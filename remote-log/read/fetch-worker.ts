// A remote fetch worker (a worker thread): it opens the broker's remote storage
// itself and serves fetchChunks requests - the ranged GET, copying the body
// into chunk buffers and the CRC checks - off the broker's event loop, handing
// each verified chunk back as soon as it has arrived, by transferring its
// memory (no copy).
import { parentPort, workerData } from 'node:worker_threads';
import type { FetchWorkerData, FetchWorkerReply, FetchWorkerRequest } from './fetch-worker-protocol.js';
import { serializeError } from './fetch-worker-protocol.js';
import { createRemoteStorage } from '../storage-url.js';

if (parentPort === null) throw new Error('fetch-worker.js runs as a worker thread');
const port = parentPort;
const { url, rsmConfig } = workerData as FetchWorkerData;
const storage = createRemoteStorage(url, rsmConfig);
const running = new Map<number, AbortController>();

/** The chunk's whole memory, to transfer: a chunk sharing its memory with others is copied first. */
function transferable(chunk: Buffer): ArrayBuffer {
  if (chunk.byteOffset === 0 && chunk.length === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer) return chunk.buffer;
  const copy = new ArrayBuffer(chunk.length);
  new Uint8Array(copy).set(chunk);
  return copy;
}

port.on('message', (m: FetchWorkerRequest) => {
  if (m.type === 'cancel') {
    running.get(m.id)?.abort(new Error('fetch cancelled by the broker'));
    return;
  }
  const controller = new AbortController();
  running.set(m.id, controller);
  const onChunk = (index: number, chunk: Buffer): void => {
    // Transferring detaches the worker's Buffer: the storage keeps no use for it once told.
    const memory = transferable(chunk);
    const reply: FetchWorkerReply = { type: 'chunk', id: m.id, index, chunk: memory };
    port.postMessage(reply, [memory]);
  };
  storage
    .fetchChunks(m.ref, m.first, m.last, m.chunkSize, controller.signal, onChunk)
    .then(
      () => {
        const reply: FetchWorkerReply = { type: 'done', id: m.id };
        port.postMessage(reply);
      },
      (e: unknown) => {
        const reply: FetchWorkerReply = { type: 'failed', id: m.id, error: serializeError(e) };
        port.postMessage(reply);
      },
    )
    .finally(() => running.delete(m.id));
});
