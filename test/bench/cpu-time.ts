// CPU time of the processes a benchmark phase keeps busy, from /proc: this
// process (process.cpuUsage, every thread), its reaped children (cutime and
// cstime: the kcat clients, counted once they exit) and another process by pid
// (MinIO). Linux only; elsewhere the /proc figures read as zero.
import { readFileSync } from 'node:fs';

/** Milliseconds of CPU (user + system). */
export interface CpuTimes {
  readonly self: number;
  /** The system (kernel) part of `self`. */
  readonly selfSystem: number;
  readonly children: number;
  readonly other: number;
}

const TICK_MS = 10; // USER_HZ is 100 on every Linux ABI Node runs on.

/** Fields after the command name of /proc/<pid>/stat (index 0 = field 3, the state). */
function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

const field = (f: string[] | undefined, n: number): number => Number(f?.[n - 3] ?? 0) * TICK_MS;

export function cpuTimes(otherPid?: number): CpuTimes {
  const u = process.cpuUsage();
  const self = statFields('self');
  const other = otherPid === undefined ? undefined : statFields(otherPid);
  return {
    self: (u.user + u.system) / 1000,
    selfSystem: u.system / 1000,
    children: field(self, 16) + field(self, 17),
    other: field(other, 14) + field(other, 15),
  };
}

export function cpuSince(start: CpuTimes, otherPid?: number): CpuTimes {
  const now = cpuTimes(otherPid);
  return { self: now.self - start.self, selfSystem: now.selfSystem - start.selfSystem, children: now.children - start.children, other: now.other - start.other };
}
