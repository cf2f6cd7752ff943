// docs/cost-model.md shows real output of the cost model: every ```text block
// that starts with `$ sediment cost ...` must be exactly what that command
// prints today.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCost } from '../../broker/cli/cost.js';
import { repoRoot } from '../support/tools.js';

function examples(markdown: string): Array<{ args: string[]; output: string }> {
  const out: Array<{ args: string[]; output: string }> = [];
  for (const m of markdown.matchAll(/```text\n\$ sediment cost ([^\n]*)\n([\s\S]*?)```/g)) {
    out.push({ args: (m[1] as string).trim().split(/\s+/), output: m[2] as string });
  }
  return out;
}

describe('docs/cost-model.md', () => {
  it('its worked examples are what sediment cost prints', async () => {
    const doc = readFileSync(path.join(repoRoot(), 'docs', 'cost-model.md'), 'utf8');
    const found = examples(doc);
    assert.ok(found.length >= 1, 'no `$ sediment cost` example found');
    for (const { args, output } of found) {
      let printed = '';
      const code = await runCost(args, { out: (t) => void (printed += t), err: (t) => void (printed += t) });
      assert.equal(code, 0, printed);
      assert.equal(output, printed, `sediment cost ${args.join(' ')}: the output in docs/cost-model.md is stale; paste the new output`);
    }
  });
});
