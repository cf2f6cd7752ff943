// docs/configuration.md is generated from the config definitions: this fails
// when the committed file differs from what the code generates, so the
// reference cannot drift.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CONFIGURATION_MD, checkRsmDocRows, generateConfigurationMd, knownRsmKeys, rsmDocRows } from '../support/gen-config-docs.js';
import { repoRoot } from '../support/tools.js';
import { configDocRows } from '../../metadata/config-defs.js';

describe('docs/configuration.md', () => {
  it('is exactly what test/support/gen-config-docs.ts generates from the code', () => {
    const committed = readFileSync(path.join(repoRoot(), CONFIGURATION_MD), 'utf8');
    const generated = generateConfigurationMd();
    if (committed !== generated) {
      const a = committed.split('\n');
      const b = generated.split('\n');
      const i = a.findIndex((line, n) => line !== b[n]);
      assert.fail(
        `${CONFIGURATION_MD} is stale (first difference at line ${i + 1}:\n  committed: ${a[i] ?? '(end)'}\n  generated: ${b[i] ?? '(end)'})\n` +
          'Regenerate it: npm run build && node dist/test/support/gen-config-docs.js',
      );
    }
  });

  it('lists every broker, topic and rsm.config key with its default', () => {
    const text = generateConfigurationMd();
    for (const r of [...configDocRows('broker'), ...configDocRows('topic')]) {
      assert.ok(text.includes(`| \`${r.name}\` | ${r.type} | \`${r.default === '' ? '""' : r.default}\``), r.name);
    }
    for (const k of knownRsmKeys()) assert.ok(text.includes(`| \`${k}\` |`), k);
  });

  it('refuses a documented rsm.config default that is not the code default, and a key the code does not know', () => {
    const rows = [{ name: 'rsm.config.chunk.size.bytes', default: '4194304', meaning: '' }];
    const all = knownRsmKeys().map((name) => rows.find((r) => r.name === name) ?? { name, default: '(x)', meaning: '' });
    assert.throws(() => checkRsmDocRows(all), /rsm.config.chunk.size.bytes is documented with default 4194304/);
    assert.throws(() => checkRsmDocRows([...all, { name: 'rsm.config.s3.bogus', default: '1', meaning: '' }]), /unknown \["rsm.config.s3.bogus"\]/);
    assert.throws(() => checkRsmDocRows(all.slice(1)), /undocumented/);
    assert.equal(rsmDocRows('// | rsm.config.a.b | 1 | x |\n// | other | 2 | y |').length, 1);
  });
});
