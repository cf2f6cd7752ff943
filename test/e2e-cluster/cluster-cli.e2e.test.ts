// `sediment cluster start`: etcd and two brokers from one command, the
// bootstrap list printed, both brokers in every broker's metadata, and SIGTERM
// stopping everything (exit 0, the ports closed).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { etcdBinaryPath, requireTools } from '../support/tools.js';
import { sedimentCli } from '../support/sediment.js';

async function freePorts(count: number): Promise<number> {
  // A run of `count` consecutive free ports starting at a free one.
  for (;;) {
    const base = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
        srv.close(() => resolve(port));
      });
    });
    if (base + count >= 65535) continue;
    let ok = true;
    for (let p = base; p < base + count && ok; p++) {
      ok = await new Promise<boolean>((resolve) => {
        const srv = createServer();
        srv.once('error', () => resolve(false));
        srv.listen(p, '127.0.0.1', () => srv.close(() => resolve(true)));
      });
    }
    if (ok) return base;
  }
}

function canConnect(port: number): Promise<boolean> {
  return AdminClient.connect(`127.0.0.1:${port}`).then(
    (a) => {
      a.close();
      return true;
    },
    () => false,
  );
}

it('sediment cluster start --brokers 2: etcd and two brokers, the bootstrap list, SIGTERM stops all', async () => {
  requireTools(['etcd']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-cluster-cli-'));
  const kafkaPort = await freePorts(2);
  const etcdPort = await freePorts(2);
  const child = spawn(process.execPath, [sedimentCli, 'cluster', 'start', '--brokers', '2', '--data', dir, '--port', String(kafkaPort), '--etcd-port', String(etcdPort)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SEDIMENT_ETCD_BIN: etcdBinaryPath() },
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    const bootstrap = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no bootstrap line within 90 s:\n${out}\n${err}`)), 90_000);
      child.stdout.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        const m = /bootstrap servers: (\S+)/.exec(out);
        if (m !== null) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exited.then((e) => reject(new Error(`exited early (${e.code ?? e.signal}):\n${out}\n${err}`)));
    });
    assert.equal(bootstrap, `127.0.0.1:${kafkaPort},127.0.0.1:${kafkaPort + 1}`);
    for (const port of [kafkaPort, kafkaPort + 1]) {
      const admin = await AdminClient.connect(`127.0.0.1:${port}`);
      try {
        const md = await admin.metadata([]);
        assert.deepEqual(md.brokers.map((b) => `${b.nodeId}@${b.host}:${b.port}`).sort(), [`1@127.0.0.1:${kafkaPort}`, `2@127.0.0.1:${kafkaPort + 1}`]);
        assert.ok(md.controllerId === 1 || md.controllerId === 2, `controller ${md.controllerId}`);
      } finally {
        admin.close();
      }
    }
    child.kill('SIGTERM');
    const how = await exited;
    assert.equal(how.code, 0, `exit ${how.code ?? how.signal}:\n${out}\n${err}`);
    assert.equal(await canConnect(kafkaPort), false, 'broker 1 stopped');
    assert.equal(await canConnect(kafkaPort + 1), false, 'broker 2 stopped');
    const etcdUp = await fetch(`http://127.0.0.1:${etcdPort}/health`).then(() => true, () => false);
    assert.equal(etcdUp, false, 'etcd stopped');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
