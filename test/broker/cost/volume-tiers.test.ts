import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinSheet, parsePriceSheet, PriceSheetError, selectPrices } from '../../../broker/cost/price-sheet.js';
import { checkVolumeTiers, parseVolumeTiers, tieredStorageCost, type VolumeTier } from '../../../broker/cost/volume-tiers.js';

// AWS us-east-1 S3 Standard: first 50 TB, next 450 TB, over 500 TB (TB = 1024 GiB).
const S3: readonly VolumeTier[] = [
  { upToGB: 51_200, gbMonth: 0.023 },
  { upToGB: 512_000, gbMonth: 0.022 },
  { upToGB: null, gbMonth: 0.021 },
];

const close = (actual: number, expected: number): void => {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${actual} != ${expected}`);
};

describe('volume tiers', () => {
  it('bills each GiB at the rate of its own tier, at and around the boundaries', () => {
    close(tieredStorageCost(0, S3).cost, 0);
    close(tieredStorageCost(1, S3).cost, 0.023);
    close(tieredStorageCost(51_200, S3).cost, 51_200 * 0.023);
    close(tieredStorageCost(51_201, S3).cost, 51_200 * 0.023 + 0.022);
    close(tieredStorageCost(512_000, S3).cost, 51_200 * 0.023 + 460_800 * 0.022);
    close(tieredStorageCost(512_001, S3).cost, 51_200 * 0.023 + 460_800 * 0.022 + 0.021);
    close(tieredStorageCost(1_000_000, S3).cost, 51_200 * 0.023 + 460_800 * 0.022 + 488_000 * 0.021);
  });

  it('is continuous and never dearer per GiB past a boundary (the marginal rate falls, the bill never jumps)', () => {
    for (const b of [51_200, 512_000]) {
      const below = tieredStorageCost(b - 1e-6, S3).cost;
      const at = tieredStorageCost(b, S3).cost;
      const above = tieredStorageCost(b + 1e-6, S3).cost;
      assert.ok(below <= at && at <= above);
      assert.ok(above - below < 1e-7);
    }
    assert.ok(tieredStorageCost(600_000, S3).cost / 600_000 < 0.023);
  });

  it('reports every tier as a band, reached or not', () => {
    const { bands } = tieredStorageCost(60_000, S3);
    assert.deepEqual(
      bands.map((b) => [b.fromGB, b.toGB, b.gbMonth, b.gb]),
      [
        [0, 51_200, 0.023, 51_200],
        [51_200, 512_000, 0.022, 8_800],
        [512_000, null, 0.021, 0],
      ],
    );
    close(bands.reduce((a, b) => a + b.cost, 0), tieredStorageCost(60_000, S3).cost);
  });

  it('a single open tier is a flat price', () => {
    close(tieredStorageCost(123_456, [{ upToGB: null, gbMonth: 0.02 }]).cost, 123_456 * 0.02);
  });

  it('refuses schedules that are not one, and negative volumes', () => {
    assert.equal(checkVolumeTiers(S3), undefined);
    assert.match(checkVolumeTiers([]) ?? '', /at least one/);
    assert.match(checkVolumeTiers([{ upToGB: 10, gbMonth: 1 }]) ?? '', /last tier/);
    assert.match(checkVolumeTiers([{ upToGB: 10, gbMonth: 1 }, { upToGB: 5, gbMonth: 1 }, { upToGB: null, gbMonth: 1 }]) ?? '', /above 10/);
    assert.match(checkVolumeTiers([{ upToGB: null, gbMonth: 1 }, { upToGB: null, gbMonth: 1 }]) ?? '', /only the last/);
    assert.match(checkVolumeTiers([{ upToGB: null, gbMonth: -1 }]) ?? '', />= 0/);
    assert.equal(typeof parseVolumeTiers('x'), 'string');
    assert.match(String(parseVolumeTiers([{ upToGB: '5', gbMonth: 1 }])), /number or null/);
    assert.throws(() => tieredStorageCost(-1, S3), RangeError);
  });

  it('the shipped AWS sheet prices S3 Standard by its tiers; --price object.gbMonth prices it flat', () => {
    const aws = builtinSheet('aws')!;
    assert.deepEqual(aws.storageClasses['standard']?.gbMonthTiers, S3);
    assert.deepEqual(selectPrices(aws).prices['object.gbMonthTiers'], S3);
    assert.equal(selectPrices(aws, { storageClass: 'standard-ia' }).prices['object.gbMonthTiers'], undefined);
    assert.equal(selectPrices(aws, { overrides: { 'object.gbMonth': 0.02 } }).prices['object.gbMonthTiers'], undefined);
    assert.deepEqual(selectPrices(aws, { overrides: { 'object.getPer1000': 0 } }).prices['object.gbMonthTiers'], S3);
  });

  it('a sheet whose tiers disagree with its flat price, or are malformed, is refused with the field named', () => {
    const aws = JSON.parse(JSON.stringify(builtinSheet('aws'))) as { storageClasses: { standard: Record<string, unknown> } };
    aws.storageClasses.standard['gbMonth'] = 0.03;
    assert.throws(() => parsePriceSheet(aws, 'x.json'), (e: unknown) => e instanceof PriceSheetError && /standard\.gbMonth must equal the first tier/.test(e.message));
    aws.storageClasses.standard['gbMonth'] = 0.023;
    aws.storageClasses.standard['gbMonthTiers'] = [{ upToGB: 51_200, gbMonth: 0.023 }];
    assert.throws(() => parsePriceSheet(aws, 'x.json'), (e: unknown) => e instanceof PriceSheetError && /standard\.gbMonthTiers tier 0/.test(e.message));
  });
});
