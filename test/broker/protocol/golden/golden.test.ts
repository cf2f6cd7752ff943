// Golden frames captured from real clients (kcat and confluent-kafka-python on
// librdkafka 2.0.2, kafkajs 2.2.4) talking to Apache Kafka 4.1.1 through a
// recording proxy (capture.ts). Every request and response must decode with
// our generated codecs and re-encode to exactly the same bytes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  decodeRequestBody,
  decodeRequestHeader,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  payloadOf,
} from '../../../../broker/protocol/frame.js';
import { apiRegistry, type ApiDescriptor } from '../../../../broker/protocol/messages/index.js';
import { repoRoot } from '../../../support/tools.js';

const goldenDir = path.join(repoRoot(), 'test', 'golden');

function kebab(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

const byFileName = new Map<string, ApiDescriptor>();
for (const d of apiRegistry.values()) byFileName.set(kebab(d.name), d);

interface Golden {
  client: string;
  file: string;
  api: ApiDescriptor;
  version: number;
  response: boolean;
}

function goldens(): Golden[] {
  const out: Golden[] = [];
  for (const client of readdirSync(goldenDir).sort()) {
    for (const file of readdirSync(path.join(goldenDir, client)).sort()) {
      const m = /^([a-z-]+)-v(\d+)(\.response)?\.bin$/.exec(file);
      if (!m) continue;
      const api = byFileName.get(m[1] as string);
      if (!api) throw new Error(`golden file ${client}/${file} names no known API`);
      out.push({ client, file, api, version: Number(m[2]), response: m[3] !== undefined });
    }
  }
  return out;
}

const all = goldens();

test('golden frames cover the APIs and clients we must speak with', () => {
  const have = new Set(all.map((g) => `${g.client}/${kebab(g.api.name)}${g.response ? '.response' : ''}`));
  for (const client of ['kcat', 'confluent-kafka-python', 'kafkajs']) {
    for (const api of ['api-versions', 'metadata', 'produce', 'fetch', 'list-offsets']) {
      assert.ok(have.has(`${client}/${api}`), `${client} ${api} request`);
      assert.ok(have.has(`${client}/${api}.response`), `${client} ${api} response`);
    }
  }
  assert.ok(have.has('confluent-kafka-python/create-topics'));
  assert.ok(have.has('kafkajs/create-topics'));
});

for (const g of all) {
  test(`${g.client}/${g.file} decodes and re-encodes byte-identically`, () => {
    const frame = readFileSync(path.join(goldenDir, g.client, g.file));
    const payload = payloadOf([frame]);
    if (!g.response) {
      const h = decodeRequestHeader(payload);
      assert.equal(h.apiKey, g.api.apiKey);
      assert.equal(h.apiVersion, g.version);
      const body = decodeRequestBody(h, payload);
      const again = encodeRequest(h.apiKey, h.apiVersion, h.correlationId, h.clientId, (w) => g.api.encodeRequest(w, g.version, body), {
        headerTaggedFields: h.taggedFields,
      });
      assert.ok(Buffer.concat(again).equals(frame), 'request bytes differ after re-encoding');
    } else {
      const { header, body } = decodeResponse(payload, g.api, g.version);
      const again = encodeResponse(g.api.apiKey, g.version, header.correlationId, (w) => g.api.encodeResponse(w, g.version, body), {
        headerTaggedFields: header.taggedFields,
      });
      assert.ok(Buffer.concat(again).equals(frame), 'response bytes differ after re-encoding');
    }
  });
}
