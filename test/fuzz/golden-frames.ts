// Request frames captured from real clients (test/golden/<client>/): the seed
// corpus the frame fuzzer mutates. Files are whole frames, size prefix included.
// In a folder with an index.json (the kafka-responses capture) requests are the
// `*.request.bin` files; elsewhere every `*.bin` that is not `*.response.bin`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/tools.js';

export interface GoldenRequest {
  readonly name: string;
  readonly apiKey: number;
  readonly apiVersion: number;
  /** The whole frame, size prefix included. */
  readonly frame: Buffer;
}

export function loadGoldenRequests(dir = path.join(repoRoot(), 'test', 'golden')): GoldenRequest[] {
  const out: GoldenRequest[] = [];
  for (const client of readdirSync(dir).sort()) {
    const d = path.join(dir, client);
    if (!statSync(d).isDirectory()) continue;
    const indexed = existsSync(path.join(d, 'index.json'));
    for (const file of readdirSync(d).sort()) {
      if (!file.endsWith('.bin') || file.endsWith('.response.bin')) continue;
      if (indexed && !file.endsWith('.request.bin')) continue;
      const frame = readFileSync(path.join(d, file));
      if (frame.length < 12 || frame.readInt32BE(0) !== frame.length - 4) continue;
      out.push({ name: `${client}/${file}`, apiKey: frame.readInt16BE(4), apiVersion: frame.readInt16BE(6), frame });
    }
  }
  return out;
}
