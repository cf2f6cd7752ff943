// Share groups over tiered storage and through Kafka 4.3.1's own
// kafka-share-groups tool (org.apache.kafka.tools.consumer.group.ShareGroupCommand):
// a KafkaShareConsumer reads a topic whose older segments are only in the
// remote tier (a file:// store), every record once; then --list, --describe
// (offsets, --members, --state), --reset-offsets (after which the records are
// delivered again, from the remote tier), --delete-offsets and --delete, with
// their outputs checked.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { eventually } from '../e2e-groups/support.js';
import { tieredTopicConfigs, tierOffsets } from '../e2e-tiering/support.js';
import { compileShareMember, createAndProduce, groupRows, Ledger, type MemberEnv, shareGroupsTool, ShareMember } from './support.js';

let broker: SedimentProcess;
let classes: string;
let store: string;
const members: ShareMember[] = [];
let env: MemberEnv;
const topic = 'share-tiered';
const group = 'g-tiered';
const values = Array.from({ length: 300 }, (_, i) => `tiered-${i}-${'x'.repeat(400)}`);

/** kafka-share-groups (4.3.1) against the broker: its stdout. */
const shareGroups = (...args: string[]): Promise<string> => shareGroupsTool(broker.bootstrap, ...args);

const rows = (output: string): string[][] => groupRows(output, group);

before(async () => {
  requireTools(['java', 'kafka']);
  classes = compileShareMember();
  store = mkdtempSync(path.join(os.tmpdir(), 'sediment-share-store-'));
  broker = await startSediment({
    overrides: {
      'remote.log.storage.system.enable': 'true',
      'remote.log.storage.url': `file://${store}`,
      'remote.log.manager.task.interval.ms': '500',
      'log.retention.check.interval.ms': '500',
    },
  });
  env = { classes, get bootstrap() { return broker.bootstrap; }, members };
  await createAndProduce(broker.bootstrap, topic, 1, values, tieredTopicConfigs(16_384));
  await eventually('the older segments to be remote only', async () => (await tierOffsets(broker.bootstrap, topic, 1)).earliestLocal[0]! > 100n, 120_000);
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  for (const d of [classes, store]) if (d !== undefined) rmSync(d, { recursive: true, force: true });
});

async function consumeAll(name: string): Promise<Ledger> {
  const ledger = new Ledger();
  const m = new ShareMember(env, name, ledger, group, topic, 'explicit', false, { 'share.auto.offset.reset': 'earliest' });
  await eventually(`${name} to receive every record`, () => ledger.distinct().size === values.length, 180_000, () => `${ledger.distinct().size} of ${values.length}`);
  await eventually(`${name} to poll empty`, () => m.idle >= 3, 60_000);
  await m.stop();
  assert.deepEqual(m.errors, []);
  return ledger;
}

test('a share consumer reads a topic whose older segments are remote: every record once, in offset order', { timeout: 400_000 }, async () => {
  const offsets = await tierOffsets(broker.bootstrap, topic, 1);
  assert.equal(offsets.earliest[0], 0n, 'nothing expired: offset 0 is in the remote tier');
  const ledger = await consumeAll('reader');
  assert.deepEqual(ledger.deliveries.map((d) => d.o), values.map((_, i) => i), 'each offset once, in order');
  assert.deepEqual(ledger.deliveries.map((d) => d.v), values, 'byte-identical values across the tier boundary');
});

test('kafka-share-groups --list, --describe, --reset-offsets, --delete-offsets, --delete', { timeout: 400_000 }, async () => {
  assert.ok((await shareGroups('--list')).split('\n').map((l) => l.trim()).includes(group), '--list shows the group');
  assert.deepEqual(rows(await shareGroups('--describe', '--group', group)), [[group, topic, '0', String(values.length), '0']], 'START-OFFSET past every record, LAG 0');
  const state = rows(await shareGroups('--describe', '--group', group, '--state'));
  assert.equal(state.length, 1);
  assert.deepEqual([state[0]!.at(-2), state[0]!.at(-1)], ['Empty', '0'], 'STATE Empty, #MEMBERS 0');
  assert.deepEqual(rows(await shareGroups('--describe', '--group', group, '--members')), [], 'no members (the tool says so on stderr)');
  assert.deepEqual(rows(await shareGroups('--reset-offsets', '--to-earliest', '--execute', '--group', group, '--topic', topic)), [[group, topic, '0', '0']], 'NEW-OFFSET 0');
  assert.deepEqual(rows(await shareGroups('--describe', '--group', group)), [[group, topic, '0', '0', String(values.length)]], 'START-OFFSET 0, LAG every record');
  // Reset to the start, the records are delivered again (from the remote tier).
  const again = await consumeAll('again');
  assert.deepEqual(again.deliveries.map((d) => d.o), values.map((_, i) => i));
  assert.ok(again.deliveries.every((d) => d.dc === 1), 'a reset starts the delivery counts afresh');
  assert.match(await shareGroups('--delete-offsets', '--group', group, '--topic', topic), new RegExp(`${topic}\\s+Successful`));
  assert.deepEqual(rows(await shareGroups('--describe', '--group', group)).map((r) => r.slice(1, 3)), [], 'no share-partition state left');
  assert.match(await shareGroups('--delete', '--group', group), new RegExp(`Deletion of requested share groups \\('${group}'\\) was successful`));
  assert.ok(!(await shareGroups('--list')).split('\n').map((l) => l.trim()).includes(group), 'the group is gone');
});
