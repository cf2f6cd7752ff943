// docs/cost-model.md shows real output of the cost model: every ```text block
// that starts with `$ sediment cost ...` must be exactly what that command
// prints today.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCost } from '../../broker/cli/cost.js';
import { formatDollars } from '../../broker/cost/units.js';
import { repoRoot } from '../support/tools.js';

function examples(markdown: string): Array<{ args: string[]; output: string }> {
  const out: Array<{ args: string[]; output: string }> = [];
  for (const m of markdown.matchAll(/```text\n\$ sediment cost ([^\n]*)\n([\s\S]*?)```/g)) {
    out.push({ args: (m[1] as string).trim().split(/\s+/), output: m[2] as string });
  }
  return out;
}

/** Rows of the variations table: the options in backticks (none for the example itself) and the four totals. */
function variations(markdown: string): Array<{ options: string[]; totals: string[] }> {
  const out: Array<{ options: string[]; totals: string[] }> = [];
  for (const m of markdown.matchAll(/^\| ([^|]*) \| (\$[\d,]+) \| (\$[\d,]+) \| (\$[\d,]+) \| (\$[\d,]+) \|$/gm)) {
    const flags = /`([^`]+)`/.exec(m[1] as string)?.[1];
    out.push({ options: flags === undefined ? [] : flags.split(/\s+/), totals: [m[2], m[3], m[4], m[5]] as string[] });
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

  it('its table of variations holds the totals the model computes', async () => {
    const doc = readFileSync(path.join(repoRoot(), 'docs', 'cost-model.md'), 'utf8');
    const base = examples(doc)[0]?.args ?? [];
    const rows = variations(doc);
    assert.ok(rows.length >= 4, `found ${rows.length} rows`);
    for (const row of rows) {
      let printed = '';
      const code = await runCost([...base, ...row.options, '--json'], { out: (t) => void (printed += t), err: (t) => void (printed += t) });
      assert.equal(code, 0, printed);
      const totals = (JSON.parse(printed) as Array<{ total: number }>).map((s) => formatDollars(s.total));
      assert.deepEqual(row.totals, totals, `variation ${row.options.join(' ') || '(the example)'} in docs/cost-model.md is stale`);
    }
  });
});
