// A real crash: a child process appends in a loop and acknowledges each append
// on stdout; it is SIGKILLed mid-flight, several times. After each kill the log
// reopens (unclean: full recovery) and every acknowledged record must be
// readable, intact, at the offset it was acknowledged with.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeRecordBatches } from '../../../broker/protocol/record-batch.js';
import { openLog, readAll, tempDir } from './helpers.js';

const appender = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'appender.js');

interface Ack {
  baseOffset: bigint;
  count: number;
  tag: string;
}

/** Runs the appender until it has acknowledged `killAfter` appends, then SIGKILLs it. */
function runAndKill(dir: string, round: number, killAfter: number): Promise<{ acks: Ack[]; readyAt: bigint }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [appender, dir, String(round), '3000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acks: Ack[] = [];
    let readyAt = -1n;
    let buffered = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const parts = line.split(' ');
        if (parts[0] === 'ready') readyAt = BigInt(parts[1] as string);
        else if (parts[0] === 'ack') acks.push({ baseOffset: BigInt(parts[1] as string), count: Number(parts[2]), tag: parts[3] as string });
        if (acks.length === killAfter) child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`appender exited with ${code}: ${stderr}`));
      else resolve({ acks, readyAt });
    });
  });
}

describe('kill -9', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir: root, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('keeps every acknowledged append across repeated SIGKILLs', { timeout: 120_000 }, async () => {
    const dir = path.join(root, 'topic-0');
    const acked: Ack[] = [];
    for (let round = 1; round <= 4; round++) {
      const { acks, readyAt } = await runAndKill(dir, round, 150 + round * 37);
      assert.ok(acks.length > 0);
      // The reopened log starts at or after everything acknowledged before.
      const lastAcked = acked.at(-1);
      if (lastAcked !== undefined) assert.ok(readyAt >= lastAcked.baseOffset + BigInt(lastAcked.count));
      acked.push(...acks);
    }
    const { log } = await openLog(root, {}, { cleanShutdown: false });
    const byOffset = new Map<bigint, string>();
    for (const b of decodeRecordBatches(Buffer.concat(await readAll(log)))) {
      for (const r of b.records) byOffset.set(r.offset, r.value?.toString() ?? '');
    }
    for (const a of acked) {
      for (let j = 0; j < a.count; j++) {
        const v = byOffset.get(a.baseOffset + BigInt(j));
        assert.ok(v !== undefined && v.startsWith(`${a.tag}/${j}`), `offset ${a.baseOffset + BigInt(j)}: ${v} (ack ${a.tag})`);
      }
    }
    // Offsets are dense from 0 to the end: nothing torn is served in between.
    assert.equal(BigInt(byOffset.size), log.logEndOffset);
    await log.close();
  });
});
