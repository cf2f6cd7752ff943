// The old-generation growing factor `sediment start` gives V8: 4 unless the
// environment or node's own flags say otherwise; a malformed override stops
// start-up with a configuration error naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HEAP_GROWING_PERCENT, heapGrowingPercent } from '../../../broker/cli/heap-growth.js';

test('the default is a fixed factor of 4; SEDIMENT_HEAP_GROWING_PERCENT changes it, 0 leaves it to V8', () => {
  assert.equal(DEFAULT_HEAP_GROWING_PERCENT, 300);
  assert.equal(heapGrowingPercent({}, []), 300);
  assert.equal(heapGrowingPercent({ SEDIMENT_HEAP_GROWING_PERCENT: '' }, []), 300);
  assert.equal(heapGrowingPercent({ SEDIMENT_HEAP_GROWING_PERCENT: '50' }, []), 50);
  assert.equal(heapGrowingPercent({ SEDIMENT_HEAP_GROWING_PERCENT: '0' }, []), null);
});

test("node's own --heap-growing-percent wins over both", () => {
  assert.equal(heapGrowingPercent({ SEDIMENT_HEAP_GROWING_PERCENT: '50' }, ['--heap-growing-percent=30']), null);
  assert.equal(heapGrowingPercent({}, ['--heap-growing-percent', '30']), null);
});

test('a malformed override is refused with its name', () => {
  for (const bad of ['lots', '-1', '2.5', '1001']) {
    assert.throws(() => heapGrowingPercent({ SEDIMENT_HEAP_GROWING_PERCENT: bad }, []), /SEDIMENT_HEAP_GROWING_PERCENT/);
  }
});

test('sediment start with a malformed override exits 2 with a configuration error, before opening anything', () => {
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'broker', 'cli', 'sediment.js');
  const r = spawnSync(process.execPath, [cli, 'start', '--override', 'log.dirs=/nonexistent/never-created'], {
    encoding: 'utf8',
    env: { ...process.env, SEDIMENT_HEAP_GROWING_PERCENT: 'lots' },
    timeout: 30_000,
  });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /configuration error: SEDIMENT_HEAP_GROWING_PERCENT must be an integer/);
});
