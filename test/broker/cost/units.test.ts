import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnitError, formatBytes, formatCount, formatDollars, formatDuration, parseDuration, parseRate, parseShare, parseSize } from '../../../broker/cost/units.js';

describe('units', () => {
  it('reads sizes with decimal and binary prefixes', () => {
    assert.equal(parseSize('1GiB'), 1024 ** 3);
    assert.equal(parseSize('500MB'), 500e6);
    assert.equal(parseSize('1.5 kib'), 1536);
    assert.equal(parseSize('1048576'), 1048576);
    assert.throws(() => parseSize('12 parsecs', '--segment-size'), (e: unknown) => e instanceof UnitError && e.message.startsWith('--segment-size'));
  });

  it('reads durations', () => {
    assert.equal(parseDuration('90m'), 90 * 60_000);
    assert.equal(parseDuration('7d'), 7 * 86_400_000);
    assert.equal(parseDuration('1y'), 365 * 86_400_000);
    assert.equal(parseDuration('3600000'), 3_600_000);
    assert.throws(() => parseDuration('soon'), UnitError);
  });

  it('reads rates per second, hour and day', () => {
    assert.equal(parseRate('10MiB/s'), 10 * 1024 ** 2);
    assert.equal(parseRate('36GB/h'), 10e6);
    assert.equal(parseRate('86.4GB/day'), 1e6);
    assert.equal(parseRate('1000'), 1000);
    assert.throws(() => parseRate('1GB/fortnight'), /time unit/);
  });

  it('reads shares as fractions or percentages', () => {
    assert.equal(parseShare('0.05'), 0.05);
    assert.equal(parseShare('5%'), 0.05);
    assert.throws(() => parseShare('some'), UnitError);
  });

  it('prints bytes, durations, dollars and counts', () => {
    assert.equal(formatBytes(1024 ** 3), '1.00 GiB');
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatDuration(3_600_000), '1h');
    assert.equal(formatDuration(7 * 86_400_000), '7d');
    assert.equal(formatDuration(90 * 60_000), '90m');
    assert.equal(formatDollars(1234.567), '$1,235');
    assert.equal(formatDollars(12.345), '$12.35');
    assert.equal(formatDollars(-3), '-$3.00');
    assert.equal(formatCount(1_234_567), '1.23M');
    assert.equal(formatCount(45_600), '45.6k');
  });
});
