// CPU time per thread of a process, from /proc/<pid>/task/*/schedstat (Linux).
import { readdirSync, readFileSync } from 'node:fs';

/** CPU nanoseconds per thread of `pid`, by task id (threads that end between two reads drop out). */
export function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended.
    }
  }
  return out;
}

/** Milliseconds of CPU the main thread (task id = pid) used between two threadCpu readings. */
export function mainThreadMs(pid: number, before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  return ((after.get(pid) ?? 0) - (before.get(pid) ?? 0)) / 1e6;
}
