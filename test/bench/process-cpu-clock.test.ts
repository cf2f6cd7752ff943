// The benchmarks' CPU figure of another process: its POSIX CPU clock, read
// from outside to the nanosecond (Linux; elsewhere the reader answers null).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { processCpuClockId, readProcessCpuClock } from './process-cpu-clock.js';

test('the clock id of a process is MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)', () => {
  assert.equal(processCpuClockId(1), -14); // (~1 << 3) | 2
  assert.equal(processCpuClockId(12345), ((~12345) << 3) | 2);
  assert.throws(() => processCpuClockId(0), RangeError);
  assert.throws(() => processCpuClockId(-5), RangeError);
});

test('reads a busy child process to well under a clock tick, and null once it is gone', { skip: process.platform !== 'linux' }, async () => {
  // The child spins for about 150 ms of CPU, prints the CPU it measured itself, then waits to be read.
  const child = spawn(process.execPath, ['-e', [
    'const t0 = process.cpuUsage(); let x = 0;',
    'while (process.cpuUsage(t0).user < 150000) x += Math.sqrt(x + 1);',
    'const u = process.cpuUsage(); console.log(JSON.stringify((u.user + u.system) / 1e6));',
    'setInterval(() => {}, 1000);',
  ].join('\n')], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const selfSeconds = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (b: Buffer) => resolve(Number(b.toString('utf8').trim())));
      child.once('error', reject);
    });
    const read = readProcessCpuClock(child.pid!);
    assert.notEqual(read, null, 'python3 reads the clock');
    // Everything the child reported, plus whatever it spent since (its exit path is idle).
    assert.ok(read! >= selfSeconds - 0.001, `clock ${read} against the child's own ${selfSeconds}`);
    assert.ok(read! < selfSeconds + 0.05, `clock ${read} against the child's own ${selfSeconds}`);
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  assert.equal(readProcessCpuClock(child.pid!), null);
});
