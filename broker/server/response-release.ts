// What to run once a response's bytes have been written to the socket: the
// dispatcher attaches it to the chunks a handler's answer was encoded into,
// the connection runs it from the socket's write callback. A Fetch response
// carries record bytes read into pooled buffers (broker/common/read-buffer-pool.ts)
// by reference; they may be reused only after that. Chunks never written (the
// connection closed first) keep their hook unrun: the buffers are then left to
// the garbage collector, never reused while a write could still read them.

import type { OutputChunk } from '../protocol/record-parts.js';

const hooks = new WeakMap<readonly OutputChunk[], () => void>();

export function releaseAfterWrite(chunks: readonly OutputChunk[], release: () => void): void {
  hooks.set(chunks, release);
}

/** The hook attached to these chunks, removed so it runs at most once. */
export function takeRelease(chunks: readonly OutputChunk[]): (() => void) | undefined {
  const release = hooks.get(chunks);
  if (release !== undefined) hooks.delete(chunks);
  return release;
}
