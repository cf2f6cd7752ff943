// A process's CPU time (user + system, every thread, those that have exited
// too) to the nanosecond, read through its POSIX CPU clock: Linux gives every
// process one, clockid (~pid << 3) | 2 (CPUCLOCK_SCHED of the whole thread
// group), and clock_gettime reads it from outside. /proc/<pid>/stat has the
// same total only in 10 ms clock ticks, utime and stime each truncated, so a
// consume of 146 MiB that costs the broker 100-200 ms read ±10-20 ms there.
// Node cannot call clock_gettime on another process's clock; Python's
// time.clock_gettime can, so one short python3 run reads it. Null when that
// fails (no python3, not Linux, the process gone): callers fall back to /proc.
import { spawnSync } from 'node:child_process';

const READ_CLOCK = 'import sys, time\nprint(repr(time.clock_gettime(((~int(sys.argv[1])) << 3) | 2)))';

/** The clock id Linux gives the CPU clock of process `pid` (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)). */
export function processCpuClockId(pid: number): number {
  if (!Number.isInteger(pid) || pid <= 0) throw new RangeError(`not a process id: ${pid}`);
  return ((~pid) << 3) | 2;
}

/** Seconds of CPU process `pid` has used, or null when its CPU clock cannot be read. */
export function readProcessCpuClock(pid: number): number | null {
  processCpuClockId(pid);
  const r = spawnSync('python3', ['-c', READ_CLOCK, String(pid)], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) return null;
  const seconds = Number(r.stdout.trim());
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}
