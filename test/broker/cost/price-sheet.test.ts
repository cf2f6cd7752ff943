import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUILTIN_SHEETS, PRICE_KEYS, PriceSheetError, builtinSheet, parsePriceSheet, selectPrices } from '../../../broker/cost/price-sheet.js';

describe('price sheets', () => {
  it('ships AWS, GCP and Azure sheets, each dated and sourced, with the classes and disks the docs name', () => {
    assert.deepEqual([...BUILTIN_SHEETS.keys()].sort(), ['aws-us-east-1', 'azure-eastus', 'gcp-us-central1']);
    for (const s of BUILTIN_SHEETS.values()) {
      assert.match(s.date, /^\d{4}-\d{2}-\d{2}$/);
      assert.ok(s.sources.length > 0 && s.sources.every((u) => u.startsWith('https://')), s.id);
    }
    assert.deepEqual(Object.keys(builtinSheet('aws')!.storageClasses), ['standard', 'standard-ia', 'glacier-ir']);
    assert.deepEqual(Object.keys(builtinSheet('aws')!.disks), ['gp3', 'st1']);
    assert.deepEqual(Object.keys(builtinSheet('gcp')!.storageClasses), ['standard', 'nearline']);
    assert.deepEqual(Object.keys(builtinSheet('azure')!.storageClasses), ['hot', 'cool']);
  });

  it('selects the default class and disk, or the chosen ones, and applies overrides', () => {
    const aws = builtinSheet('aws')!;
    const d = selectPrices(aws);
    assert.equal(d.storageClass, 'standard');
    assert.equal(d.disk, 'gp3');
    assert.equal(d.prices['object.gbMonth'], 0.023);
    assert.equal(d.prices['disk.gbMonth'], 0.08);
    const s = selectPrices(aws, { storageClass: 'glacier-ir', disk: 'st1', overrides: { 'object.gbMonth': 0.0035, 'network.crossAzPerGB': 0 } });
    assert.equal(s.prices['object.gbMonth'], 0.0035);
    assert.equal(s.prices['object.getPer1000'], 0.01);
    assert.equal(s.prices['disk.gbMonth'], 0.045);
    assert.equal(s.prices['network.crossAzPerGB'], 0);
    assert.deepEqual(s.overridden, ['object.gbMonth', 'network.crossAzPerGB']);
    assert.equal(PRICE_KEYS.length, Object.keys(s.prices).length);
  });

  it('refuses unknown classes, disks and keys, naming the choices', () => {
    const aws = builtinSheet('aws')!;
    assert.throws(() => selectPrices(aws, { storageClass: 'deep-archive' }), /choose one of: standard, standard-ia, glacier-ir/);
    assert.throws(() => selectPrices(aws, { disk: 'io2' }), /choose one of: gp3, st1/);
    assert.throws(() => selectPrices(aws, { overrides: { ['object.bogus' as 'object.gbMonth']: 1 } }), PriceSheetError);
  });

  it('validates a user-given sheet field by field', () => {
    const good = JSON.parse(JSON.stringify(builtinSheet('aws')));
    assert.equal(parsePriceSheet(good, 'mine.json').id, 'aws-us-east-1');
    assert.throws(() => parsePriceSheet({ ...good, date: 'last week' }, 'mine.json'), /mine.json: "date" must be YYYY-MM-DD/);
    assert.throws(() => parsePriceSheet({ ...good, sources: [] }, 'x'), /sources/);
    assert.throws(() => parsePriceSheet({ ...good, defaultDisk: 'nvme' }, 'x'), /defaultDisk/);
    const broken = JSON.parse(JSON.stringify(good));
    broken.storageClasses.standard.getPer1000 = -1;
    assert.throws(() => parsePriceSheet(broken, 'x'), /storageClasses.standard.getPer1000 must be a number >= 0/);
  });
});
