// Option parsing for `sediment topics` and `sediment groups`, and the shared table format.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable } from '../../../broker/common/text-table.js';
import { UsageError, parseArgs, parseKeyValue, usageText, type OptionSpecs } from '../../../broker/cli/args.js';
import { parseGroupsArgs } from '../../../broker/cli/groups.js';
import { parseTopicsArgs } from '../../../broker/cli/topics.js';

const specs: OptionSpecs = {
  a: { kind: 'flag', help: 'a flag' },
  v: { kind: 'value', help: 'a value' },
  m: { kind: 'multi', help: 'repeatable' },
};

test('parseArgs: flags, --name value, --name=value, repeatable, negative numbers as values', () => {
  const p = parseArgs(['--a', '--v', '-3', '--m', 'x=1', '--m=y=2'], specs);
  assert.equal(p.has('a'), true);
  assert.equal(p.value('v'), '-3');
  assert.deepEqual(p.all('m'), ['x=1', 'y=2']);
  assert.equal(p.int('v', -10), -3);
  assert.equal(p.has('nope'), false);
});

test('parseArgs rejects unknown options, missing values, repeated single values, stray words', () => {
  assert.throws(() => parseArgs(['--zzz'], specs), /unknown option --zzz/);
  assert.throws(() => parseArgs(['--v'], specs), /--v needs a value/);
  assert.throws(() => parseArgs(['--v', '--a'], specs), /--v needs a value/);
  assert.throws(() => parseArgs(['--v', '1', '--v', '2'], specs), /more than once/);
  assert.throws(() => parseArgs(['word'], specs), /unexpected argument 'word'/);
  assert.throws(() => parseArgs(['--a=1'], specs), /takes no value/);
  assert.throws(() => parseArgs(['--v', 'x'], specs).int('v', 0), UsageError);
  assert.throws(() => parseArgs(['--v', '0'], specs).int('v', 1), /between 1 and/);
});

test('parseKeyValue keeps = inside values', () => {
  assert.deepEqual(parseKeyValue('a.b=x=y', '--config'), ['a.b', 'x=y']);
  assert.throws(() => parseKeyValue('=x', '--config'), /key=value/);
  assert.throws(() => parseKeyValue('novalue', '--config'), /key=value/);
});

test('formatTable pads columns to the widest cell, with no trailing spaces', () => {
  const t = formatTable(['A', 'LONG-HEADER', 'C'], [['xxxx', '1', 'last'], ['y', '22', '']]);
  assert.equal(t, 'A     LONG-HEADER  C\nxxxx  1            last\ny     22\n');
});

test('usageText lists every option', () => {
  const u = usageText('usage: x', specs);
  assert.match(u, /--a +a flag/);
  assert.match(u, /--v <value> +a value/);
  assert.match(u, /--m <value> +repeatable \(repeatable\)/);
});

test('topics: create with defaults and configs', () => {
  const inv = parseTopicsArgs(['--bootstrap-server', 'h:1', '--create', '--topic', 't', '--config', 'retention.ms=5', '--config', 'cleanup.policy=compact']);
  assert.equal(inv.bootstrap, 'h:1');
  assert.equal(inv.timeoutMs, 30000);
  assert.deepEqual(inv.command, {
    kind: 'create', topic: 't', partitions: -1, replicationFactor: -1,
    configs: new Map([['retention.ms', '5'], ['cleanup.policy', 'compact']]), ifNotExists: false,
  });
  const c = parseTopicsArgs(['--bootstrap-server=h:1', '--create', '--topic=t', '--partitions', '6', '--replication-factor', '3', '--if-not-exists']).command;
  assert.equal(c.kind === 'create' && c.partitions === 6 && c.replicationFactor === 3 && c.ifNotExists, true);
});

test('topics: describe derives the HTTP URL from the bootstrap host; --http none disables it', () => {
  assert.deepEqual(parseTopicsArgs(['--bootstrap-server', 'broker.local:9092,b2:9092', '--describe']).command, {
    kind: 'describe', topic: undefined, http: 'http://broker.local:9644', excludeInternal: false, ifExists: false,
  });
  const d = parseTopicsArgs(['--bootstrap-server', 'h:1', '--describe', '--topic', 't', '--http', 'none']).command;
  assert.equal(d.kind === 'describe' && d.http === null && d.topic === 't', true);
  const e = parseTopicsArgs(['--bootstrap-server', 'h:1', '--describe', '--http', 'http://127.0.0.1:1234']).command;
  assert.equal(e.kind === 'describe' && e.http, 'http://127.0.0.1:1234');
});

test('topics: alter combines partitions, set and delete; needs at least one', () => {
  const c = parseTopicsArgs(['--bootstrap-server', 'h:1', '--alter', '--topic', 't', '--partitions', '4', '--config', 'a=1', '--delete-config', 'b']).command;
  assert.deepEqual(c, { kind: 'alter', topic: 't', partitions: 4, set: new Map([['a', '1']]), deleteConfigs: ['b'], ifExists: false });
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1', '--alter', '--topic', 't']), /needs --partitions, --config or --delete-config/);
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1', '--alter', '--topic', 't', '--config', 'a=1', '--delete-config', 'a']), /both set and deleted/);
});

test('topics: exactly one action, required options, options foreign to the action', () => {
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1']), /exactly one of --create/);
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1', '--list', '--delete']), /only one of/);
  assert.throws(() => parseTopicsArgs(['--list']), /--bootstrap-server is required/);
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1', '--create']), /--topic is required with --create/);
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1', '--delete', '--topic', 't', '--partitions', '3']), /--partitions cannot be used with --delete/);
  assert.throws(() => parseTopicsArgs(['--bootstrap-server', 'h:1', '--create', '--topic', 't', '--partitions', '0']), /between 1 and/);
  assert.deepEqual(parseTopicsArgs(['--bootstrap-server', 'h:1', '--list', '--exclude-internal']).command, { kind: 'list', excludeInternal: true });
});

test('groups: describe views, list, delete of several groups', () => {
  assert.deepEqual(parseGroupsArgs(['--bootstrap-server', 'h:1', '--describe', '--group', 'g']).command, { kind: 'describe', group: 'g', view: 'offsets' });
  assert.deepEqual(parseGroupsArgs(['--bootstrap-server', 'h:1', '--describe', '--group', 'g', '--members']).command, { kind: 'describe', group: 'g', view: 'members' });
  assert.deepEqual(parseGroupsArgs(['--bootstrap-server', 'h:1', '--list', '--state']).command, { kind: 'list', state: true });
  assert.deepEqual(parseGroupsArgs(['--bootstrap-server', 'h:1', '--delete', '--group', 'a', '--group', 'b']).command, { kind: 'delete', groups: ['a', 'b'] });
  assert.throws(() => parseGroupsArgs(['--bootstrap-server', 'h:1', '--describe']), /exactly one --group/);
  assert.throws(() => parseGroupsArgs(['--bootstrap-server', 'h:1', '--list', '--group', 'g']), /--group cannot be used with --list/);
});

test('groups: reset-offsets strategies, topics with partitions, dry-run by default', () => {
  const c = parseGroupsArgs(['--bootstrap-server', 'h:1', '--reset-offsets', '--group', 'g', '--topic', 't', '--topic', 'u:2,0', '--shift-by', '-5']).command;
  assert.deepEqual(c, {
    kind: 'reset', group: 'g', topics: [{ topic: 't', partitions: null }, { topic: 'u', partitions: [0, 2] }],
    strategy: { kind: 'shift', by: -5n }, execute: false, explicitDryRun: false,
  });
  const e = parseGroupsArgs(['--bootstrap-server', 'h:1', '--reset-offsets', '--group', 'g', '--all-topics', '--to-datetime', '2024-03-01T10:00:00.000Z', '--execute']).command;
  assert.deepEqual(e, { kind: 'reset', group: 'g', topics: 'all', strategy: { kind: 'datetime', timestamp: BigInt(Date.UTC(2024, 2, 1, 10)) }, execute: true, explicitDryRun: false });
  const base = ['--bootstrap-server', 'h:1', '--reset-offsets', '--group', 'g'];
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't']), /exactly one of --to-earliest/);
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't', '--to-earliest', '--to-latest']), /only one of/);
  assert.throws(() => parseGroupsArgs([...base, '--to-earliest']), /--topic or --all-topics/);
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't', '--all-topics', '--to-earliest']), /cannot be combined/);
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't', '--to-earliest', '--dry-run', '--execute']), /cannot be combined/);
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't', '--to-offset', 'abc']), /must be an integer/);
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't:x', '--to-earliest']), /must be an integer/);
  assert.throws(() => parseGroupsArgs([...base, '--topic', 't', '--to-datetime', 'yesterday']), /YYYY-MM-DDTHH:mm:SS/);
});
