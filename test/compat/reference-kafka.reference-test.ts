// Proof that the matrix programs' expectations are Apache Kafka's: every client
// of test/compat/clients.ts against the reference Kafka 4.x broker
// (test/support/kafka-reference.ts). Not part of `npm test`:
//   npm run build && node --test --test-reporter=spec dist/test/compat/reference-kafka.reference-test.js
// SEDIMENT_COMPAT_COUNT and SEDIMENT_COMPAT_ONLY work as in matrix.e2e.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultBaseTimestamp } from '../clients/content.js';
import { startKafkaReference, type KafkaReference } from '../support/kafka-reference.js';
import { selectByEnv } from '../support/env-selection.js';
import { clients } from './clients.js';

const count = Number(process.env['SEDIMENT_COMPAT_COUNT'] ?? 50_000);
const selected = selectByEnv('SEDIMENT_COMPAT_ONLY', clients);

let kafka: KafkaReference;
const timings: string[] = [];

describe('compatibility matrix against Apache Kafka', () => {
  before(async () => {
    kafka = await startKafkaReference();
  });

  after(async () => {
    await kafka?.stop();
    console.log(['', `Reference Kafka (${count} records per client):`, ...timings].join('\n'));
  });

  for (const spec of selected) {
    test(`${spec.title} against Apache Kafka`, { timeout: 600_000 + (spec.installMs ?? 0) }, async () => {
      const t0 = performance.now();
      const s = await spec.run({
        bootstrap: kafka.bootstrap,
        topic: `compat-${spec.id}`,
        group: `compat-${spec.id}-group`,
        count,
        partitions: 3,
        codecs: spec.codecs,
        baseTimestamp: defaultBaseTimestamp(),
        timeoutMs: 240_000,
      });
      timings.push(`  ${spec.id.padEnd(18)} ${s.ok ? 'pass' : 'FAIL'}  ${((performance.now() - t0) / 1000).toFixed(1)} s  ${s.operations.map((op) => `${op.name}: ${op.detail}`).join(' | ')}`);
      assert.ok(s.ok, `${spec.title}: ${s.errorCount} errors:\n${s.errors.join('\n')}`);
    });
  }
});
