// Lowers the CPU priority of the calling thread alone (Linux), so that a
// worker thread doing background work (segment uploads) gives way to the
// broker's event loop and to other processes when the CPU is contended, and
// still has all of it when nothing else runs. Linux's setpriority() on a
// thread id changes that one thread; /proc/thread-self names the calling one.
//
// Threads inherit the nice value of the thread that creates them, and libuv
// creates its thread pool (file I/O, DNS, zlib; shared by every thread of the
// process, the broker's log appends included) on its first use. So the pool is
// made to exist before the priority changes: `await` this before any work.
import { readlinkSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import os from 'node:os';

/** What applying a nice value did: applied, not asked for (0), or why it could not be. */
export type PriorityOutcome = { readonly applied: true; readonly nice: number } | { readonly applied: false; readonly reason: string };

/** The kernel id of the calling thread (Linux), or undefined where /proc/thread-self does not exist. */
export function currentThreadId(): number | undefined {
  try {
    const id = Number(pathTail(readlinkSync('/proc/thread-self')));
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

function pathTail(link: string): string {
  return link.slice(link.lastIndexOf('/') + 1);
}

/** Sets the calling thread's nice value to `nice` (1-19; 0 changes nothing). */
export async function lowerThreadPriority(nice: number): Promise<PriorityOutcome> {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) return { applied: false, reason: `nice must be 0-19: ${nice}` };
  if (nice === 0) return { applied: false, reason: 'not asked for (nice 0)' };
  if (process.platform !== 'linux') return { applied: false, reason: `per-thread priority is Linux only (${process.platform})` };
  // The first use of the libuv pool starts its threads, from this thread: do it before lowering.
  await stat(os.tmpdir());
  const tid = currentThreadId();
  if (tid === undefined) return { applied: false, reason: '/proc/thread-self is not readable' };
  try {
    os.setPriority(tid, nice);
    return { applied: true, nice };
  } catch (e) {
    return { applied: false, reason: e instanceof Error ? e.message : String(e) };
  }
}
