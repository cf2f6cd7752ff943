// Static membership (group.instance.id) with Java consumers on the KIP-848
// protocol: two members share a topic; one is closed (a static member's
// close sends member epoch -2, so the coordinator keeps its partitions for
// it) and started again with the same instance id. Its partitions wait for
// it: the other member is never given them, the group epoch does not move
// (no rebalance), and the new process gets exactly its old partitions back
// under a new member id. Then it is closed for good and its partitions go to
// the other member once its session times out.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from './java-member.js';
import { assignments, eventually, ownershipProblem, ProcessedLedger, withAdmin } from './support.js';

const topic = 'java-static-848';
const group = 'g-java-static-848';
const partitions = 4;
// Kafka's default (and minimum): a restarted JVM must be back within it, even on a loaded machine.
const sessionTimeoutMs = 45_000;
let broker: SedimentProcess;
let classDir: string;
const ledger = new ProcessedLedger();
const members: JavaMember[] = [];

function start(instanceId: string): JavaMember {
  const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group, instanceId, sessionTimeoutMs, ledger, protocol: 'consumer' });
  members.push(m);
  return m;
}

async function stable(live: readonly JavaMember[]): Promise<Map<string, number[]>> {
  let owned = new Map<string, number[]>();
  await eventually('a stable group', async () => {
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
    owned = assignments(g, topic);
    if (g.state !== 'Stable' || g.members.length !== live.length || ownershipProblem(owned, partitions) !== null) return false;
    return live.every((m) => JSON.stringify(owned.get(String(m.status?.['memberId']))) === JSON.stringify(m.partitions));
  }, 180_000, () => JSON.stringify([...owned]));
  return owned;
}

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment({
    overrides: {
      'group.consumer.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.min.heartbeat.interval.ms': '500',
      'group.consumer.heartbeat.interval.ms': '500',
    },
  });
  await createTopic(broker.bootstrap, topic, partitions);
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
});

test('a static member restarted within its session gets its partitions back without a rebalance', { timeout: 600_000 }, async () => {
  const a = start('static-a');
  const b = start('static-b');
  await stable([a, b]);
  const epochBefore = Number(a.status?.['gen']);
  const aPartitions = a.partitions;
  const bPartitions = b.partitions;
  const oldMemberId = String(a.status?.['memberId']);
  const bCallbacks = b.callbacks.length;
  await a.stop();
  const a2 = start('static-a');
  await eventually('the restarted member to own its partitions', async () => a2.partitions.length > 0, 120_000, () => a2.proc.diagnostics());
  assert.deepEqual(a2.partitions, aPartitions);
  assert.notEqual(String(a2.status?.['memberId']), oldMemberId);
  // b was never asked to take or give anything, and kept its epoch.
  assert.deepEqual(b.partitions, bPartitions);
  assert.deepEqual(b.callbacks.slice(bCallbacks), []);
  assert.equal(Number(b.status?.['gen']), epochBefore);
  await a2.stop();
  // Gone for good: after the session timeout b owns everything.
  await eventually('b to own every partition', async () => b.partitions.length === partitions, 120_000, () => b.proc.diagnostics());
  await b.stop();
  assertNoBrokerErrors(broker.logs);
});
