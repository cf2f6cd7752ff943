// Golden frames captured from real clients (kcat and confluent-kafka-python on
// librdkafka 2.0.2, kafkajs 2.2.4, Kafka's Java 4.3.1 client and CLI tools)
// talking to Apache Kafka 4.3.1 through a recording proxy (capture.ts here, and
// the kafka-responses capture of test/clients/capture-golden.ts). Every request
// and response must decode with our generated codecs and re-encode to exactly
// the same bytes. kafka-parity.test.ts checks Sediment's answers against them.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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
import { ErrorCode, KafkaError } from '../../../../broker/protocol/errors.js';
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

/**
 * Request files are `<api>-v<n>.bin` or `<api>-v<n>.request.bin`, responses
 * `<api>-v<n>.response.bin`; in a folder with an index.json (the
 * kafka-responses capture), `<api>-v<n>.bin` is the response instead.
 */
function goldens(): Golden[] {
  const out: Golden[] = [];
  for (const client of readdirSync(goldenDir).sort()) {
    const dir = path.join(goldenDir, client);
    if (!statSync(dir).isDirectory()) continue;
    const plainIsResponse = existsSync(path.join(dir, 'index.json'));
    for (const file of readdirSync(dir).sort()) {
      const m = /^([a-z-]+)-v(\d+)(\.request|\.response)?\.bin$/.exec(file);
      if (!m) continue;
      const api = byFileName.get(m[1] as string);
      if (!api) throw new Error(`golden file ${client}/${file} names no known API`);
      const response = m[3] === '.response' || (m[3] === undefined && plainIsResponse);
      out.push({ client, file, api, version: Number(m[2]), response });
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

const isUnsupported = (e: unknown): boolean => e instanceof KafkaError && e.code === ErrorCode.UNSUPPORTED_VERSION;

for (const g of all) {
  const known = g.version >= g.api.validVersions.min && g.version <= g.api.validVersions.max;
  if (!known) {
    // Newer than the Kafka definitions we generate from (a newer client talking to a newer broker):
    // the header still reads, the body is refused as UNSUPPORTED_VERSION.
    test(`${g.client}/${g.file} (v${g.version} beyond our ${g.api.name} ${g.api.validVersions.max}) is refused cleanly`, () => {
      const payload = payloadOf([readFileSync(path.join(goldenDir, g.client, g.file))]);
      if (g.response) {
        assert.throws(() => decodeResponse(payload, g.api, g.version), isUnsupported);
      } else {
        const h = decodeRequestHeader(payload);
        assert.deepEqual([h.apiKey, h.apiVersion], [g.api.apiKey, g.version]);
        assert.throws(() => decodeRequestBody(h, payload), isUnsupported);
      }
    });
    continue;
  }
  test(`${g.client}/${g.file} decodes and re-encodes byte-identically`, () => {
    const frame = readFileSync(path.join(goldenDir, g.client, g.file));
    const payload = payloadOf([frame]);
    if (!g.response) {
      const h = decodeRequestHeader(payload);
      assert.equal(h.apiKey, g.api.apiKey);
      assert.equal(h.apiVersion, g.version);
      const { body, trailingBytes } = decodeRequestBody(h, payload);
      assert.equal(trailingBytes, 0, 'a captured request is read to its last byte');
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
