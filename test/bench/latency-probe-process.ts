// Starts the produce latency probe (test/bench/produce-latency-probe.ts) in a
// process of its own against any broker, for the tiering bench and its Kafka peer:
//   const probe = await startProbe(bootstrap, 'probe-topic', 500);
//   ... the load whose effect on a producer is measured ...
//   const { samples } = await probe.stop();   // then windowStats(samples, from, to)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../support/tools.js';
import type { LatencySample } from './latency-windows.js';

export interface ProbeResult {
  /** Every acknowledged send: when it started (epoch ms) and how long it took. */
  readonly samples: LatencySample[];
  readonly errors: number;
  /** How late the probe's own 10 ms timer ran: its scheduling delay, apart from the broker's. */
  readonly ticks: LatencySample[];
}

export interface LatencyProbe {
  /** Closes the probe's stdin; resolves with every acknowledged send once it has exited. */
  stop(): Promise<ProbeResult>;
}

/** Resolves once the probe's first send is acknowledged (connections and metadata in place). */
export async function startProbe(bootstrap: string, topic: string, rate: number): Promise<LatencyProbe> {
  const script = path.join(repoRoot(), 'dist', 'test', 'bench', 'produce-latency-probe.js');
  const child = spawn(process.execPath, [script, bootstrap, topic, String(rate)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const onData = (): void => {
      if (out.startsWith('ready\n')) {
        child.stdout.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) => reject(new Error(`latency probe exited ${code} before it was ready: ${err.slice(-2000)}`)));
  });
  return {
    async stop() {
      child.stdin.end();
      const code = await exited;
      const last = out.trimEnd().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) throw new Error(`latency probe exited ${code}: ${err.slice(-2000)}`);
      return JSON.parse(last) as ProbeResult;
    },
  };
}

/** Wall-clock milliseconds comparable with the probe's sample times. */
export const epochNow = (): number => performance.timeOrigin + performance.now();
