import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, it } from 'node:test';
import type { Logger } from 'pino';
import { lowerThreadPriority, type PriorityOutcome } from '../../../remote-log/workers/thread-priority.js';
import { StorageWorkerPool } from '../../../remote-log/workers/storage-worker-pool.js';

/** The nice value of each thread of this process, by thread id (Linux). */
function threadNices(): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state is field 3, nice field 19.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(t), Number(fields[16]));
    } catch {
      // The thread ended while listed.
    }
  }
  return out;
}

const linux = process.platform === 'linux';
const moduleUrl = pathToFileURL(path.join(import.meta.dirname, '../../../remote-log/workers/thread-priority.js')).href;

describe('lowerThreadPriority', { skip: linux ? false : 'per-thread priority is Linux only' }, () => {
  it('lowers the calling worker thread alone', async () => {
    const before = os.getPriority();
    const code = `
      import { parentPort } from 'node:worker_threads';
      import { lowerThreadPriority, currentThreadId } from ${JSON.stringify(moduleUrl)};
      const outcome = await lowerThreadPriority(7);
      parentPort.postMessage({ outcome, tid: currentThreadId() });
      parentPort.once('message', () => process.exit(0));
    `;
    const worker = new Worker(code, { eval: true });
    try {
      const m = await new Promise<{ outcome: PriorityOutcome; tid: number }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      assert.deepEqual(m.outcome, { applied: true, nice: 7 });
      const nices = threadNices();
      assert.equal(nices.get(m.tid), 7, 'the worker thread runs at nice 7');
      assert.equal(nices.get(process.pid), before, 'the main thread keeps its priority');
      const lowered = [...nices].filter(([, n]) => n === 7).map(([t]) => t);
      assert.deepEqual(lowered, [m.tid], 'no other thread (the libuv pool included) was lowered');
      assert.equal(os.getPriority(), before);
    } finally {
      worker.postMessage('stop');
      await new Promise((r) => worker.once('exit', r));
    }
  });

  it('does nothing for 0 and refuses values outside 0-19', async () => {
    assert.deepEqual(await lowerThreadPriority(0), { applied: false, reason: 'not asked for (nice 0)' });
    for (const bad of [-1, 20, 1.5]) {
      const outcome = await lowerThreadPriority(bad);
      assert.equal(outcome.applied, false, String(bad));
    }
    assert.equal(threadNices().get(process.pid), os.getPriority());
  });

  it("runs a StorageWorkerPool's threads at its nice value and says so", async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'sediment-thread-priority-'));
    const told: Array<Record<string, unknown>> = [];
    let bothTold!: () => void;
    const both = new Promise<void>((r) => (bothTold = r));
    const logger = {
      debug: (fields: Record<string, unknown>, msg: string) => {
        if (msg !== 'remote storage worker priority lowered') return;
        told.push(fields);
        if (told.length === 2) bothTold();
      },
      warn: (fields: Record<string, unknown>, msg: string) => assert.fail(`${msg}: ${JSON.stringify(fields)}`),
    } as unknown as Logger;
    const pool = new StorageWorkerPool({ url: pathToFileURL(root).href, rsmConfig: {}, threads: 2, nice: 5, logger });
    try {
      pool.warm();
      await both;
      assert.deepEqual(told.map((f) => f.nice), [5, 5]);
      assert.deepEqual(told.map((f) => f.slot).sort(), [0, 1]);
      assert.equal([...threadNices().values()].filter((n) => n === 5).length, 2, 'two threads at nice 5');
      assert.equal(threadNices().get(process.pid), os.getPriority(), 'the main thread keeps its priority');
    } finally {
      await pool.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
