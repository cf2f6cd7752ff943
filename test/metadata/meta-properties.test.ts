import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../../metadata/config-schema.js';
import { decodeMetaProperties, encodeMetaProperties, ensureMetaProperties, META_PROPERTIES_FILE } from '../../metadata/meta-properties.js';

let root = '';
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sediment-meta-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const CLUSTER = 'MkU3OEVBNTcwNTJENDM2Qg';
const DIR_ID = 'ABEiM0RVZneImaq7zN3u_w';

describe('meta.properties codec', () => {
  it('writes Kafka\'s KRaft v1 keys and reads them back', () => {
    const text = encodeMetaProperties({ version: 1, clusterId: CLUSTER, nodeId: 3, directoryId: DIR_ID }, new Date(0));
    assert.match(text, /^#\n#Thu, 01 Jan 1970 00:00:00 GMT\n/);
    assert.match(text, /\nnode.id=3\n/);
    assert.match(text, /\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n/);
    assert.match(text, /\nversion=1\n/);
    assert.deepEqual(decodeMetaProperties(text), { version: 1, clusterId: CLUSTER, nodeId: 3, directoryId: DIR_ID });
  });

  it('reads a file written by Kafka and refuses other versions', () => {
    const kafka = `#\n#Mon Jan 01 00:00:00 UTC 2024\nnode.id=1\ndirectory.id=${DIR_ID}\nversion=1\ncluster.id=${CLUSTER}\n`;
    assert.equal(decodeMetaProperties(kafka).nodeId, 1);
    assert.throws(() => decodeMetaProperties(`version=0\nbroker.id=1\ncluster.id=${CLUSTER}\n`), /version 0/);
    assert.throws(() => decodeMetaProperties(`version=1\nnode.id=1\ndirectory.id=${DIR_ID}\n`), /cluster.id/);
  });
});

describe('ensureMetaProperties', () => {
  it('formats empty dirs once with one cluster id, then reuses it', async () => {
    const dirs = [path.join(root, 'a1'), path.join(root, 'a2')];
    const first = await ensureMetaProperties(dirs, { nodeId: 1, clusterId: null });
    assert.deepEqual(first.formatted, dirs);
    assert.equal(first.directoryIds.length, 2);
    assert.notEqual(first.directoryIds[0], first.directoryIds[1]);
    const second = await ensureMetaProperties(dirs, { nodeId: 1, clusterId: null });
    assert.deepEqual(second.formatted, []);
    assert.equal(second.clusterId, first.clusterId);
    assert.deepEqual(second.directoryIds, first.directoryIds);
    for (const d of dirs) assert.match(await readFile(path.join(d, META_PROPERTIES_FILE), 'utf8'), new RegExp(`cluster.id=${first.clusterId}`));
  });

  it('uses a configured cluster id and refuses a mismatch', async () => {
    const dir = path.join(root, 'b');
    assert.equal((await ensureMetaProperties([dir], { nodeId: 2, clusterId: CLUSTER })).clusterId, CLUSTER);
    await assert.rejects(ensureMetaProperties([dir], { nodeId: 2, clusterId: DIR_ID }), (err: unknown) => err instanceof ConfigError && err.key === 'cluster.id');
    await assert.rejects(ensureMetaProperties([dir], { nodeId: 3, clusterId: null }), /Stored node id 2 .* doesn't match the configured node.id 3/);
  });

  it('a new log dir joins the cluster of the existing one; disagreeing dirs are refused', async () => {
    const old = path.join(root, 'c1');
    const added = path.join(root, 'c2');
    const { clusterId } = await ensureMetaProperties([old], { nodeId: 1, clusterId: null });
    const both = await ensureMetaProperties([old, added], { nodeId: 1, clusterId: null });
    assert.equal(both.clusterId, clusterId);
    assert.deepEqual(both.formatted, [added]);
    const other = path.join(root, 'c3');
    await mkdir(other, { recursive: true });
    await writeFile(path.join(other, META_PROPERTIES_FILE), encodeMetaProperties({ version: 1, clusterId: CLUSTER, nodeId: 1, directoryId: DIR_ID }));
    await assert.rejects(ensureMetaProperties([old, other], { nodeId: 1, clusterId: null }), /another log directory/);
  });
});
