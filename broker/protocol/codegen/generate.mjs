#!/usr/bin/env node
// Generates the TypeScript wire codecs in broker/protocol/messages/ and the
// error table broker/protocol/error-codes.ts from Apache Kafka's JSON message
// definitions. The output is committed; run `npm run codegen` after changing
// this script or the definitions.
//
// Source folder: first CLI argument, else $KAFKA_PROTOCOL_DIR, else
// ../shared/kafka-protocol relative to the repository root.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { genErrors, genIndex, genRecordsIndex } from './emit-index.mjs';
import { fileHeader, genMessage, runtimeImport, schemas } from './emit-message.mjs';
import { kebab, loadJson, parseVersions } from './model.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const srcDir = path.resolve(
  process.argv[2] ?? process.env.KAFKA_PROTOCOL_DIR ?? path.join(repoRoot, '../shared/kafka-protocol'),
);
const protocolDir = path.join(repoRoot, 'broker/protocol');
const outDir = path.join(protocolDir, 'messages');
const recordsOutDir = path.join(outDir, 'records');

function writeFile(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const prev = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  if (prev !== text) fs.writeFileSync(file, text);
}

// ---------------------------------------------------------------- main

function main() {
  if (!fs.existsSync(path.join(srcDir, 'clients'))) {
    console.error(`Kafka protocol definitions not found in ${srcDir}`);
    process.exit(1);
  }
  const clientsDir = path.join(srcDir, 'clients');
  const files = fs.readdirSync(clientsDir).filter((f) => f.endsWith('.json')).sort();
  const pairs = new Map();
  const dataSpecs = [];
  let headerSpecs = [];
  for (const f of files) {
    const spec = loadJson(path.join(clientsDir, f));
    spec._file = `clients/${f}`;
    if (spec.type === 'request' || spec.type === 'response') {
      const base = spec.name.replace(/(Request|Response)$/, '');
      const p = pairs.get(base) ?? {};
      p[spec.type] = spec;
      pairs.set(base, p);
    } else if (spec.type === 'header') {
      headerSpecs.push(spec);
    } else {
      dataSpecs.push(spec);
    }
  }
  for (const dir of ['storage', 'group-coordinator', 'transaction-coordinator', 'share-coordinator']) {
    const d = path.join(srcDir, dir);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).filter((x) => x.endsWith('.json')).sort()) {
      const spec = loadJson(path.join(d, f));
      spec._file = `${dir}/${f}`;
      dataSpecs.push(spec);
    }
  }

  // Versions below `validVersions` that Kafka still lists in ApiVersions, with the field
  // annotations of the definition still describing them: Produce 0-2 (removed in 4.0 but
  // advertised because librdkafka disables compression unless the range starts at 0,
  // KAFKA-18659; see ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION). The codec keeps
  // them so the broker can read such a request and answer it with UNSUPPORTED_VERSION.
  const retainedMinVersion = { Produce: 0 };
  for (const [base, min] of Object.entries(retainedMinVersion)) {
    const p = pairs.get(base);
    if (!p?.request || !p.response) throw new Error(`${base}: retained versions of an unknown API`);
    for (const spec of [p.request, p.response]) {
      const v = parseVersions(spec.validVersions);
      if (!v || v.min <= min) throw new Error(`${base}: retained versions ${min}+ are already valid; drop the entry`);
      spec.validVersions = `${min}-${v.max}`;
    }
  }

  const generated = new Set();
  const apis = [];
  const removed = [];
  for (const [base, p] of [...pairs.entries()].sort((a, b) => a[1].request.apiKey - b[1].request.apiKey)) {
    if (!p.request || !p.response) throw new Error(`${base}: missing request or response`);
    if (p.request.apiKey !== p.response.apiKey) throw new Error(`${base}: api keys differ`);
    // Kafka keeps a stub with "validVersions": "none" (and no fields) for an API it removed
    // (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown in 4.0): no codec, and the
    // codec generated from an older definition is removed below as stale.
    if (parseVersions(p.request.validVersions) === null) {
      if (parseVersions(p.response.validVersions) !== null) throw new Error(`${base}: request removed, response not`);
      removed.push(base);
      continue;
    }
    const fileName = `${kebab(base)}.ts`;
    const body = [
      ...genMessage(p.request, { apiName: base }),
      ...genMessage(p.response, { apiName: base }),
    ];
    const code = body.join('\n');
    const text = [
      ...fileHeader([p.request._file, p.response._file], 1),
      ...runtimeImport(code, './runtime.js'),
      ...body,
      '',
    ].join('\n');
    writeFile(path.join(outDir, fileName), text);
    generated.add(fileName);
    apis.push({
      base,
      fileName,
      apiKey: p.request.apiKey,
      valid: parseVersions(p.request.validVersions),
      flex: parseVersions(p.request.flexibleVersions) ?? null,
      respValid: parseVersions(p.response.validVersions),
    });
  }

  // Headers
  headerSpecs = headerSpecs.sort((a, b) => a.name.localeCompare(b.name));
  {
    const body = headerSpecs.flatMap((s) => genMessage(s, {}));
    const code = body.join('\n');
    const text = [
      ...fileHeader(headerSpecs.map((s) => s._file), 1),
      ...runtimeImport(code, './runtime.js'),
      ...body,
      '',
    ].join('\n');
    writeFile(path.join(outDir, 'headers.ts'), text);
    generated.add('headers.ts');
  }

  // Data / metadata records
  const recordFiles = [];
  for (const spec of dataSpecs.sort((a, b) => a.name.localeCompare(b.name))) {
    const fileName = `${kebab(spec.name)}.ts`;
    const body = genMessage(spec, {});
    const code = body.join('\n');
    const text = [
      ...fileHeader([spec._file], 2),
      ...runtimeImport(code, '../runtime.js'),
      ...body,
      '',
    ].join('\n');
    writeFile(path.join(recordsOutDir, fileName), text);
    recordFiles.push({ fileName, spec });
  }

  writeFile(path.join(outDir, 'index.ts'), genIndex(apis));
  writeFile(
    path.join(repoRoot, 'test/broker/protocol/messages/schemas.ts'),
    [
      '// Generated by broker/protocol/codegen/generate.mjs: field schemas of every generated message,',
      '// for the property-based round-trip tests. Do not edit; run `npm run codegen`.',
      "import type { MessageSchema } from './schema-types.js';",
      '',
      `export const schemas: MessageSchema[] = ${JSON.stringify(schemas, (k, v) => (v === undefined ? undefined : v))};`,
      '',
    ].join('\n'),
  );
  writeFile(path.join(recordsOutDir, 'index.ts'), genRecordsIndex(recordFiles));
  writeFile(path.join(protocolDir, 'error-codes.ts'), genErrors(srcDir));

  // Remove stale generated files.
  for (const f of fs.readdirSync(outDir)) {
    if (f.endsWith('.ts') && !generated.has(f) && !['index.ts', 'runtime.ts'].includes(f)) {
      const text = fs.readFileSync(path.join(outDir, f), 'utf8');
      if (text.startsWith('// Generated by broker/protocol/codegen/generate.mjs')) fs.unlinkSync(path.join(outDir, f));
    }
  }
  const keep = new Set(recordFiles.map((r) => r.fileName).concat(['index.ts', 'frame.ts']));
  for (const f of fs.readdirSync(recordsOutDir)) {
    if (f.endsWith('.ts') && !keep.has(f)) {
      const text = fs.readFileSync(path.join(recordsOutDir, f), 'utf8');
      if (text.startsWith('// Generated by broker/protocol/codegen/generate.mjs')) fs.unlinkSync(path.join(recordsOutDir, f));
    }
  }
  console.log(`Generated ${apis.length} APIs, ${headerSpecs.length} headers, ${recordFiles.length} record formats from ${srcDir}`);
  if (removed.length) console.log(`Removed from the protocol (no codec): ${removed.join(', ')}`);
}

main();
