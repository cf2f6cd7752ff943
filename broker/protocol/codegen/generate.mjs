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

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const srcDir = path.resolve(
  process.argv[2] ?? process.env.KAFKA_PROTOCOL_DIR ?? path.join(repoRoot, '../shared/kafka-protocol'),
);
const protocolDir = path.join(repoRoot, 'broker/protocol');
const outDir = path.join(protocolDir, 'messages');
const recordsOutDir = path.join(outDir, 'records');

// ---------------------------------------------------------------- parsing

/** Strips `//` line comments that are not inside string literals. */
function stripComments(text) {
  return text
    .split('\n')
    .map((line) => {
      let inString = false;
      for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (c === '\\' && inString) {
          i++;
          continue;
        }
        if (c === '"') inString = !inString;
        else if (!inString && c === '/' && line[i + 1] === '/') return line.slice(0, i);
      }
      return line;
    })
    .join('\n');
}

function loadJson(file) {
  return JSON.parse(stripComments(fs.readFileSync(file, 'utf8')));
}

/** Version range string -> { min, max } (max Infinity for "N+"), or null for "none". */
function parseVersions(s) {
  if (s === undefined || s === null) return undefined;
  s = String(s).trim();
  if (s === 'none') return null;
  if (s.endsWith('+')) return { min: Number(s.slice(0, -1)), max: Infinity };
  const dash = s.indexOf('-');
  if (dash > 0) return { min: Number(s.slice(0, dash)), max: Number(s.slice(dash + 1)) };
  return { min: Number(s), max: Number(s) };
}

function intersect(a, b) {
  if (!a || !b) return null;
  const min = Math.max(a.min, b.min);
  const max = Math.min(a.max, b.max);
  return min <= max ? { min, max } : null;
}

const PRIMITIVES = new Set([
  'int8', 'int16', 'int32', 'int64', 'uint16', 'uint32', 'float64', 'bool', 'string', 'bytes', 'records', 'uuid',
]);

function camel(name) {
  return name[0].toLowerCase() + name.slice(1);
}

function kebab(name) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

// ---------------------------------------------------------------- model

/**
 * Builds the struct registry of one message: every struct (commonStructs and
 * inline declarations) by its JSON name, with TS name `<Message><Struct>`.
 */
function buildModel(spec) {
  const structs = new Map();
  const msgName = spec.name;
  const register = (jsonName, fields, versions) => {
    if (structs.has(jsonName)) throw new Error(`${msgName}: struct ${jsonName} declared twice`);
    const s = { jsonName, tsName: msgName + jsonName, fields: null, rawFields: fields, versions };
    structs.set(jsonName, s);
    return s;
  };
  for (const cs of spec.commonStructs ?? []) register(cs.name, cs.fields, parseVersions(cs.versions ?? '0+'));
  const walk = (fields) => {
    for (const f of fields) {
      if (f.fields) {
        const t = f.type.startsWith('[]') ? f.type.slice(2) : f.type;
        register(t, f.fields, parseVersions('0+'));
        walk(f.fields);
      }
    }
  };
  for (const cs of spec.commonStructs ?? []) walk(cs.fields);
  walk(spec.fields);

  const parseType = (t, where) => {
    if (t.startsWith('[]')) {
      const elem = parseType(t.slice(2), where);
      if (elem.kind === 'array') throw new Error(`${where}: nested arrays`);
      return { kind: 'array', elem };
    }
    if (PRIMITIVES.has(t)) return { kind: t };
    const s = structs.get(t);
    if (!s) throw new Error(`${where}: unknown type ${t}`);
    return { kind: 'struct', struct: s };
  };
  const parseField = (f, owner) => {
    const where = `${msgName}.${owner}.${f.name}`;
    const taggedVersions = parseVersions(f.taggedVersions) ?? null;
    let versions = parseVersions(f.versions);
    if (versions === undefined) {
      if (!taggedVersions) throw new Error(`${where}: no versions`);
      versions = taggedVersions;
    }
    const type = parseType(f.type, where);
    const nullableVersions = intersect(parseVersions(f.nullableVersions) ?? null, versions);
    if (taggedVersions) {
      if (f.tag === undefined) throw new Error(`${where}: taggedVersions without tag`);
      const tv = intersect(taggedVersions, versions);
      if (!tv || tv.min !== versions.min || tv.max !== versions.max) {
        throw new Error(`${where}: fields tagged in only some of their versions are not supported`);
      }
    }
    return {
      json: f,
      name: f.name,
      prop: camel(f.name),
      type,
      versions,
      nullableVersions,
      tagged: taggedVersions ? { tag: Number(f.tag), versions: intersect(taggedVersions, versions) } : null,
      flexibleVersions: f.flexibleVersions !== undefined ? parseVersions(f.flexibleVersions) : undefined,
      zeroCopy: f.zeroCopy === true,
      about: f.about,
      default: f.default,
    };
  };
  for (const s of structs.values()) s.fields = s.rawFields.map((f) => parseField(f, s.jsonName));
  const top = { jsonName: msgName, tsName: msgName, fields: spec.fields.map((f) => parseField(f, msgName)), top: true };
  return { structs, top };
}

// ---------------------------------------------------------------- code helpers

class Ctx {
  /** @param valid {min,max} message versions; @param flex message flexible range or null */
  constructor(valid, flex) {
    this.valid = valid;
    this.flex = flex;
  }

  /** A JS condition `version in range`, simplified against the message's valid versions. */
  cond(range) {
    const r = intersect(range, this.valid);
    if (!r) return 'false';
    const parts = [];
    if (r.min > this.valid.min) parts.push(`version >= ${r.min}`);
    if (r.max < this.valid.max) parts.push(`version <= ${r.max}`);
    if (parts.length === 0) return 'true';
    if (r.min === r.max) return `version === ${r.min}`;
    return parts.join(' && ');
  }

  flexCond() {
    return this.cond(this.flex);
  }

  /** The same context restricted to the versions where a field is present. */
  narrow(range) {
    const n = new Ctx(intersect(this.valid, range) ?? this.valid, this.flex);
    n.usedDefaults = this.usedDefaults;
    return n;
  }

  fieldFlex(field, flexVar) {
    if (field.flexibleVersions !== undefined) return this.cond(field.flexibleVersions);
    const c = this.flexCond();
    return c === 'true' || c === 'false' ? c : flexVar;
  }
}

function tern(c, a, b) {
  if (c === 'true') return a;
  if (c === 'false') return b;
  const wrap = (x) => (x.includes(' ? ') ? `(${x})` : x);
  return `${paren(c)} ? ${wrap(a)} : ${wrap(b)}`;
}

function paren(c) {
  return /^[\w.]+$/.test(c) ? c : `(${c})`;
}

function isNullableType(field) {
  return field.nullableVersions !== null || field.type.kind === 'records';
}

function baseTsType(type) {
  switch (type.kind) {
    case 'int8': case 'int16': case 'int32': case 'uint16': case 'uint32': case 'float64':
      return 'number';
    case 'int64':
      return 'bigint';
    case 'bool':
      return 'boolean';
    case 'string': case 'uuid':
      return 'string';
    case 'bytes': case 'records':
      return 'Buffer';
    case 'struct':
      return type.struct.tsName;
    case 'array': {
      const e = baseTsType(type.elem);
      return `${e}[]`;
    }
  }
  throw new Error(`no ts type for ${type.kind}`);
}

function tsType(field) {
  const t = baseTsType(field.type);
  return isNullableType(field) ? `${t} | null` : t;
}

const READ_FIXED = {
  int8: 'readInt8()', int16: 'readInt16()', int32: 'readInt32()', int64: 'readInt64()',
  uint16: 'readUInt16()', uint32: 'readUInt32()', float64: 'readFloat64()', bool: 'readBool()',
  uuid: 'readUuid()',
};
const WRITE_FIXED = {
  int8: 'writeInt8', int16: 'writeInt16', int32: 'writeInt32', int64: 'writeInt64',
  uint16: 'writeUInt16', uint32: 'writeUInt32', float64: 'writeFloat64', bool: 'writeBool',
  uuid: 'writeUuid',
};
const FIXED_SIZE = { int8: 1, int16: 2, int32: 4, int64: 8, uint16: 2, uint32: 4, float64: 8, bool: 1, uuid: 16 };

/** The default value expression of a field, as Kafka's generator defines it. */
function defaultExpr(field, ctx, where) {
  const d = field.default;
  const t = field.type;
  const isNullDefault = d === 'null' || d === null;
  if (isNullDefault && !isNullableType(field)) throw new Error(`${where}: null default on non-nullable field`);
  switch (t.kind) {
    case 'int8': case 'int16': case 'int32': case 'uint16': case 'uint32': {
      if (d === undefined || d === '') return '0';
      const n = Number(d);
      if (!Number.isInteger(n)) throw new Error(`${where}: bad int default ${d}`);
      return String(n);
    }
    case 'float64':
      return d === undefined ? '0' : String(Number(d));
    case 'int64':
      return d === undefined ? '0n' : `${BigInt(d)}n`;
    case 'bool':
      return d === true || d === 'true' ? 'true' : 'false';
    case 'string':
      if (isNullDefault) return 'null';
      return JSON.stringify(d ?? '');
    case 'uuid':
      return 'ZERO_UUID';
    case 'bytes':
      return isNullDefault ? 'null' : 'EMPTY_BUFFER';
    case 'records':
      return 'null';
    case 'array':
      if (isNullDefault) return 'null';
      if (d !== undefined && d !== '') throw new Error(`${where}: unsupported array default ${d}`);
      return '[]';
    case 'struct':
      if (isNullDefault) return 'null';
      ctx.usedDefaults.add(t.struct);
      return `default${t.struct.tsName}()`;
  }
  throw new Error(`${where}: no default`);
}

/**
 * Expression reading one value of `type` from reader `rv`.
 * flex: condition string for compact encodings; nul: condition string for nullability.
 */
function readExpr(type, rv, flex, nul, tagged) {
  switch (type.kind) {
    case 'string':
      return tern(flex, tern(nul, `${rv}.readCompactNullableString()`, `${rv}.readCompactString()`),
        tern(nul, `${rv}.readNullableString()`, `${rv}.readString()`));
    case 'bytes':
      return tern(flex, tern(nul, `${rv}.readCompactNullableBytes()`, `${rv}.readCompactBytes()`),
        tern(nul, `${rv}.readNullableBytes()`, `${rv}.readBytes()`));
    case 'records':
      return tern(flex, `${rv}.readCompactNullableBytes()`, `${rv}.readNullableBytes()`);
    case 'struct': {
      const call = `decode${type.struct.tsName}(${rv}, version)`;
      if (nul === 'false') return call;
      const marker = tagged ? `${rv}.readUVarint() <= 0` : `${rv}.readInt8() < 0`;
      return tern(nul, `(${marker} ? null : ${call})`, call);
    }
    case 'array': {
      const fn = `(e) => ${readExpr(type.elem, 'e', flex, 'false', false)}`;
      return tern(flex, tern(nul, `${rv}.readCompactNullableArray(${fn})`, `${rv}.readCompactArray(${fn})`),
        tern(nul, `${rv}.readNullableArray(${fn})`, `${rv}.readArray(${fn})`));
    }
    default:
      return `${rv}.${READ_FIXED[type.kind]}`;
  }
}

/** Statements writing value expression `v` of `type` to writer `wv`. */
function writeStmts(type, wv, v, flex, nul, fieldLabel, ind, tagged, zeroCopy, typeNullable) {
  const out = [];
  const nn = (x) => (nul === 'true' || !typeNullable ? x : `nonNull(${x}, '${fieldLabel}')`);
  const branch = (c, a, b) => {
    if (c === 'true') return a;
    if (c === 'false') return b;
    return [`if (${c}) {`, ...a.map((l) => '  ' + l), '} else {', ...b.map((l) => '  ' + l), '}'];
  };
  switch (type.kind) {
    case 'string': case 'bytes': case 'records': {
      const kind = type.kind === 'string' ? 'String' : 'Bytes';
      const ref = type.kind === 'records' || zeroCopy ? (kind === 'Bytes' ? 'Ref' : '') : '';
      const compact = (n) =>
        n === 'nullable' ? [`${wv}.writeCompactNullable${kind}${ref}(${v});`]
          : ref ? [`${wv}.writeCompactNullable${kind}${ref}(${nn(v)});`] : [`${wv}.writeCompact${kind}(${nn(v)});`];
      const classic = (n) =>
        n === 'nullable' ? [`${wv}.writeNullable${kind}${ref}(${v});`]
          : ref ? [`${wv}.writeNullable${kind}${ref}(${nn(v)});`] : [`${wv}.write${kind}(${nn(v)});`];
      const byNul = (f) => (nul === 'true' ? f('nullable') : nul === 'false' ? f('strict') : branch(nul, f('nullable'), f('strict')));
      out.push(...branch(flex, byNul(compact), byNul(classic)));
      break;
    }
    case 'struct': {
      const call = (x) => `encode${type.struct.tsName}(${wv}, version, ${x});`;
      if (nul === 'false') {
        out.push(call(nn(v)));
      } else {
        const present = tagged ? `${wv}.writeUVarint(1);` : `${wv}.writeInt8(1);`;
        const absent = tagged ? `${wv}.writeUVarint(0);` : `${wv}.writeInt8(-1);`;
        const nullable = [`if (${v} === null) {`, `  ${absent}`, '} else {', `  ${present}`, `  ${call(v)}`, '}'];
        out.push(...branch(nul, nullable, [call(`nonNull(${v}, '${fieldLabel}')`)]));
      }
      break;
    }
    case 'array': {
      const elemLines = writeStmts(type.elem, wv, 'e', flex, 'false', fieldLabel + '[]', '', false, false, false);
      const body = (arr) => [
        ...branch(flex, [`${wv}.writeCompactArrayLength(${arr}.length);`], [`${wv}.writeArrayLength(${arr}.length);`]),
        `for (const e of ${arr}) {`,
        ...elemLines.map((l) => '  ' + l),
        '}',
      ];
      if (nul === 'true') {
        out.push('{', `  const a = ${v};`, '  if (a === null) {',
          ...branch(flex, [`${wv}.writeCompactArrayLength(-1);`], [`${wv}.writeArrayLength(-1);`]).map((l) => '    ' + l),
          '  } else {', ...body('a').map((l) => '    ' + l), '  }', '}');
      } else if (nul === 'false') {
        out.push('{', `  const a = ${nn(v)};`, ...body('a').map((l) => '  ' + l), '}');
      } else {
        out.push('{', `  const a = ${v};`, `  if (a === null && (${nul})) {`,
          ...branch(flex, [`${wv}.writeCompactArrayLength(-1);`], [`${wv}.writeArrayLength(-1);`]).map((l) => '    ' + l),
          '  } else {', `    const b = nonNull(a, '${fieldLabel}');`, ...body('b').map((l) => '    ' + l), '  }', '}');
      }
      break;
    }
    default:
      out.push(`${wv}.${WRITE_FIXED[type.kind]}(${v});`);
  }
  return out.map((l) => ind + l);
}


/** Condition under which a tagged field's value differs from its default (and so is written). */
function nonDefaultCond(field, v, ctx, where) {
  const d = defaultExpr(field, ctx, where);
  if (d === 'null') return `${v} != null`;
  const t = field.type.kind;
  const notUndef = `${v} !== undefined`;
  const nullPart = isNullableType(field) ? `${v} === null || ` : '';
  switch (t) {
    case 'bytes':
      return `${notUndef} && (${nullPart}${v}.length !== 0)`;
    case 'array':
      return `${notUndef} && (${nullPart}${v}.length !== 0)`;
    case 'struct':
      return `${notUndef} && !isDeepStrictEqual(${v}, ${d})`;
    default:
      return `${notUndef} && ${v} !== ${d}`;
  }
}

// ---------------------------------------------------------------- schema for tests

/** Compact field schemas, emitted for the property-based round-trip tests. */
const schemas = [];

function rangeArr(r) {
  return r ? [r.min, r.max === Infinity ? 32767 : r.max] : null;
}

function typeSchema(t) {
  if (t.kind === 'array') return { kind: 'array', elem: typeSchema(t.elem) };
  if (t.kind === 'struct') return { kind: 'struct', struct: t.struct.tsName };
  return { kind: t.kind };
}

function fieldSchema(f) {
  return {
    prop: f.prop,
    type: typeSchema(f.type),
    versions: rangeArr(f.versions),
    nullable: rangeArr(f.nullableVersions),
    tagged: f.tagged ? { tag: f.tagged.tag, versions: rangeArr(f.tagged.versions) } : null,
    flexible: f.flexibleVersions === undefined ? undefined : rangeArr(f.flexibleVersions),
    default: f.default === undefined ? null : String(f.default),
  };
}

function schemaOf(spec, model, valid, flex, ctxExtra) {
  const structs = {};
  for (const s of model.structs.values()) structs[s.tsName] = s.fields.map(fieldSchema);
  return {
    name: spec.name,
    kind: spec.type,
    api: ctxExtra.apiName ?? spec.name,
    apiKey: spec.apiKey ?? -1,
    valid: rangeArr(valid),
    flexible: rangeArr(flex),
    fields: model.top.fields.map(fieldSchema),
    structs,
  };
}

// ---------------------------------------------------------------- generation per message

function genMessage(spec, ctxExtra) {
  const valid = parseVersions(spec.validVersions);
  const flex = parseVersions(spec.flexibleVersions) ?? null;
  const model = buildModel(spec);
  const ctx = new Ctx(valid, flex);
  ctx.usedDefaults = new Set();
  const hasFlexible = ctx.flexCond() !== 'false';
  const lines = [];
  const emit = (...ls) => lines.push(...ls);

  const structList = [model.top, ...model.structs.values()];
  schemas.push(schemaOf(spec, model, valid, flex, ctxExtra));

  // Interfaces
  for (const s of structList) {
    emit('');
    if (s.top && spec.about) emit(`/** ${spec.about} */`);
    emit(`export interface ${s.tsName} {`);
    for (const f of s.fields) {
      const about = (f.about ?? '').replace(/\*\//g, '* /').trim();
      const vnote = `versions ${fmtRange(f.versions)}${f.tagged ? `, tagged (tag ${f.tagged.tag})` : ''}`;
      emit(`  /** ${about ? about + ' ' : ''}(${vnote}) */`);
      emit(`  ${f.prop}${f.tagged ? '?' : ''}: ${tsType(f)};`);
    }
    if (hasFlexible) emit('  _unknownTaggedFields?: TaggedField[];');
    emit('}');
  }

  // Meta
  const metaName = `${spec.name}Meta`;
  const apiName = ctxExtra.apiName ?? spec.name;
  emit(
    '',
    `export const ${metaName}: MessageMeta = {`,
    `  apiKey: ${spec.apiKey ?? -1},`,
    `  name: '${apiName}',`,
    `  validVersions: { min: ${valid.min}, max: ${valid.max} },`,
    `  flexibleVersions: ${flex ? `{ min: ${flex.min}, max: ${flex.max === Infinity ? 'null' : flex.max} }` : 'null'},`,
    '};',
  );

  // Decoders / encoders
  for (const s of structList) {
    const fnSuffix = s.tsName;
    const where = `${spec.name}.${s.jsonName}`;
    // decode
    const body = [];
    const flexVar = 'flexible';
    for (const f of s.fields) {
      if (f.tagged) {
        body.push(`    ${f.prop}: ${defaultExpr(f, ctx, where + '.' + f.name)},`);
        continue;
      }
      const present = ctx.cond(f.versions);
      const fctx = ctx.narrow(f.versions);
      const fflex = fctx.fieldFlex(f, flexVar);
      const nul = f.type.kind === 'records' ? 'true' : fctx.cond(f.nullableVersions);
      const rd = readExpr(f.type, 'r', fflex, nul, false);
      const def = defaultExpr(f, ctx, where + '.' + f.name);
      body.push(`    ${f.prop}: ${present === 'true' ? rd : present === 'false' ? def : `${paren(present)} ? ${rd} : ${def}`},`);
    }
    const taggedFields = s.fields.filter((f) => f.tagged).sort((a, b) => a.tagged.tag - b.tagged.tag);
    const tail = [];
    if (hasFlexible) {
      const fc = ctx.flexCond();
      const open = fc === 'true' ? [] : [`  if (${fc === 'false' ? 'false' : flexVar}) {`];
      const ind = fc === 'true' ? '  ' : '    ';
      if (taggedFields.length === 0) {
        tail.push(...open, `${ind}readUnknownTaggedFields(r, m);`);
      } else {
        tail.push(...open,
          `${ind}const n = r.readUVarint();`,
          `${ind}for (let i = 0; i < n; i++) {`,
          `${ind}  const tag = r.readUVarint();`,
          `${ind}  const t = r.sub(r.readUVarint());`,
          `${ind}  switch (tag) {`);
        for (const f of taggedFields) {
          const c = ctx.cond(f.tagged.versions);
          const nul = ctx.narrow(f.tagged.versions).cond(f.nullableVersions);
          const rd = readExpr(f.type, 't', 'true', nul, true);
          tail.push(`${ind}    case ${f.tagged.tag}:`);
          if (c === 'true') {
            tail.push(`${ind}      m.${f.prop} = ${rd};`, `${ind}      break;`);
          } else {
            tail.push(`${ind}      if (!(${c})) unknownTagInVersion(tag, version);`,
              `${ind}      m.${f.prop} = ${rd};`, `${ind}      break;`);
          }
        }
        tail.push(`${ind}    default:`, `${ind}      pushUnknownTag(m, tag, t);`, `${ind}  }`, `${ind}}`);
      }
      if (open.length) tail.push('  }');
    }
    const dec = [];
    dec.push('', `export function decode${fnSuffix}(r: Reader, version: number): ${s.tsName} {`);
    if (s.top) dec.push(`  checkVersion(${metaName}, version, 'decode');`);
    const decBodyText = [...body, ...tail].join('\n');
    if (/\bflexible\b/.test(decBodyText)) dec.push(`  const flexible = ${ctx.flexCond()};`);
    dec.push(`  const m: ${s.tsName} = {`, ...body, '  };', ...tail, '  return m;', '}');
    emit(...dec);

    // encode
    const eb = [];
    for (const f of s.fields) {
      if (f.tagged) continue;
      const present = ctx.cond(f.versions);
      if (present === 'false') continue;
      const fctx = ctx.narrow(f.versions);
      const fflex = fctx.fieldFlex(f, flexVar);
      const nul = f.type.kind === 'records' ? 'true' : fctx.cond(f.nullableVersions);
      const st = writeStmts(f.type, 'w', `m.${f.prop}`, fflex, nul, `${s.jsonName}.${f.name}`, present === 'true' ? '  ' : '    ', false, f.zeroCopy, isNullableType(f));
      if (present === 'true') eb.push(...st);
      else eb.push(`  if (${present}) {`, ...st, '  }');
    }
    if (hasFlexible) {
      const fc = ctx.flexCond();
      const inner = [];
      if (taggedFields.length === 0) {
        inner.push('writeTaggedFields(w, null, m._unknownTaggedFields);');
      } else {
        inner.push('let tagged: TaggedField[] | null = null;');
        for (const f of taggedFields) {
          const c = ctx.cond(f.tagged.versions);
          const v = `m.${f.prop}`;
          const nd = nonDefaultCond(f, v, ctx, `${where}.${f.name}`);
          const nul = ctx.narrow(f.tagged.versions).cond(f.nullableVersions);
          const st = writeStmts(f.type, 'tw', 'v', 'true', nul, `${s.jsonName}.${f.name}`, '    ', true, f.zeroCopy, isNullableType(f));
          inner.push(`if (${c === 'true' ? '' : `(${c}) && `}${nd}) {`,
            `  const v = ${v};`,
            `  (tagged ??= []).push(encodeTagged(${f.tagged.tag}, (tw) => {`,
            ...st,
            '  }));',
            '}');
        }
        inner.push('writeTaggedFields(w, tagged, m._unknownTaggedFields);');
      }
      if (fc === 'true') eb.push(...inner.map((l) => '  ' + l));
      else if (fc !== 'false') eb.push(`  if (${flexVar}) {`, ...inner.map((l) => '    ' + l), '  }');
    }
    const enc = ['', `export function encode${fnSuffix}(w: Writer, version: number, m: ${s.tsName}): void {`];
    if (s.top) enc.push(`  checkVersion(${metaName}, version, 'encode');`);
    if (/\bflexible\b/.test(eb.join('\n'))) enc.push(`  const flexible = ${ctx.flexCond()};`);
    enc.push(...eb, '}');
    emit(...enc);
  }

  // Default factories for struct-typed fields (and their own nested struct defaults).
  const done = new Set();
  let pending = [...ctx.usedDefaults];
  while (pending.length) {
    const s = pending.pop();
    if (done.has(s)) continue;
    done.add(s);
    const before = new Set(ctx.usedDefaults);
    const props = s.fields.map((f) => `    ${f.prop}: ${defaultExpr(f, ctx, `${spec.name}.${s.jsonName}.${f.name}`)},`);
    emit('', `/** ${s.tsName} with every field at its default. */`,
      `export function default${s.tsName}(): ${s.tsName} {`, '  return {', ...props, '  };', '}');
    for (const x of ctx.usedDefaults) if (!before.has(x)) pending.push(x);
  }

  return lines;
}

function fmtRange(r) {
  if (!r) return 'none';
  if (r.max === Infinity) return `${r.min}+`;
  return r.min === r.max ? `${r.min}` : `${r.min}-${r.max}`;
}

function fileHeader(sources, depth) {
  const up = '../'.repeat(depth);
  return [
    `// Generated by broker/protocol/codegen/generate.mjs from ${sources.join(', ')}`,
    '// (Apache Kafka message definitions, Apache License 2.0). Do not edit; run `npm run codegen`.',
    '/* eslint-disable */',
    `import type { Reader } from '${up}reader.js';`,
    `import type { Writer } from '${up}writer.js';`,
  ];
}

const RUNTIME_NAMES = [
  'EMPTY_BUFFER', 'ZERO_UUID', 'checkVersion', 'encodeTagged', 'isDeepStrictEqual', 'nonNull', 'pushUnknownTag',
  'readUnknownTaggedFields', 'unknownTagInVersion', 'writeTaggedFields',
];

function runtimeImport(code, runtimePath) {
  const used = RUNTIME_NAMES.filter((n) => new RegExp(`\\b${n}\\b`).test(code));
  const types = ['MessageMeta'];
  if (/\bTaggedField\b/.test(code)) types.push('TaggedField');
  const lines = [];
  lines.push(`import type { ${types.join(', ')} } from '${runtimePath}';`);
  if (used.length) lines.push(`import { ${used.join(', ')} } from '${runtimePath}';`);
  return lines;
}

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
  for (const dir of ['storage', 'group-coordinator', 'transaction-coordinator']) {
    const d = path.join(srcDir, dir);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).filter((x) => x.endsWith('.json')).sort()) {
      const spec = loadJson(path.join(d, f));
      spec._file = `${dir}/${f}`;
      dataSpecs.push(spec);
    }
  }

  const generated = new Set();
  const apis = [];
  for (const [base, p] of [...pairs.entries()].sort((a, b) => a[1].request.apiKey - b[1].request.apiKey)) {
    if (!p.request || !p.response) throw new Error(`${base}: missing request or response`);
    if (p.request.apiKey !== p.response.apiKey) throw new Error(`${base}: api keys differ`);
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
  writeFile(path.join(protocolDir, 'error-codes.ts'), genErrors());

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
}

function genIndex(apis) {
  const L = [
    '// Generated by broker/protocol/codegen/generate.mjs. Do not edit; run `npm run codegen`.',
    '// The registry of every API: key, name, versions and codecs. Header versions follow',
    "// Kafka's rules: flexible requests use request header v2 (else v1) and flexible",
    '// responses response header v1 (else v0), except that ApiVersions responses always',
    '// use header v0 and ControlledShutdown v0 requests use header v0.',
    "import type { Reader } from '../reader.js';",
    "import type { Writer } from '../writer.js';",
    "import type { FlexibleVersions, VersionRange } from './runtime.js';",
  ];
  for (const a of apis) {
    const n = a.base;
    L.push(
      `import { ${n}RequestMeta, decode${n}Request, encode${n}Request, decode${n}Response, encode${n}Response } from './${a.fileName.replace(/\.ts$/, '.js')}';`,
    );
    L.push(`import type { ${n}Request, ${n}Response } from './${a.fileName.replace(/\.ts$/, '.js')}';`);
  }
  L.push('', "export * from './runtime.js';", "export * from './headers.js';");
  for (const a of apis) L.push(`export * from './${a.fileName.replace(/\.ts$/, '.js')}';`);
  L.push(
    '',
    '/** Everything needed to read and write one API. Methods (not function properties) so that',
    ' * a descriptor of specific message types is assignable to ApiDescriptor<unknown, unknown>. */',
    'export interface ApiDescriptor<Req = unknown, Res = unknown> {',
    '  apiKey: number;',
    '  name: string;',
    '  validVersions: VersionRange;',
    '  flexibleVersions: FlexibleVersions;',
    '  decodeRequest(r: Reader, version: number): Req;',
    '  encodeRequest(w: Writer, version: number, m: Req): void;',
    '  decodeResponse(r: Reader, version: number): Res;',
    '  encodeResponse(w: Writer, version: number, m: Res): void;',
    '}',
    '',
    '/** API keys by name (`ApiKey.Produce === 0`). */',
    'export const ApiKey = {',
    ...apis.map((a) => `  ${a.base}: ${a.apiKey},`),
    '} as const;',
    'export type ApiName = keyof typeof ApiKey;',
    '',
    'function api<Req, Res>(',
    '  meta: { apiKey: number; name: string; validVersions: VersionRange; flexibleVersions: FlexibleVersions },',
    '  decodeRequest: (r: Reader, version: number) => Req,',
    '  encodeRequest: (w: Writer, version: number, m: Req) => void,',
    '  decodeResponse: (r: Reader, version: number) => Res,',
    '  encodeResponse: (w: Writer, version: number, m: Res) => void,',
    '): ApiDescriptor<Req, Res> {',
    '  return {',
    '    apiKey: meta.apiKey,',
    '    name: meta.name,',
    '    validVersions: meta.validVersions,',
    '    flexibleVersions: meta.flexibleVersions,',
    '    decodeRequest,',
    '    encodeRequest,',
    '    decodeResponse,',
    '    encodeResponse,',
    '  };',
    '}',
    '',
    '/** Typed descriptors by API name (`apis.Produce.decodeRequest(...)` returns a ProduceRequest). */',
    'export const apis = {',
    ...apis.map(
      (a) =>
        `  ${a.base}: api<${a.base}Request, ${a.base}Response>(${a.base}RequestMeta, decode${a.base}Request, encode${a.base}Request, decode${a.base}Response, encode${a.base}Response),`,
    ),
    '} as const;',
    '',
    '/** Every API by key. */',
    'export const apiRegistry: ReadonlyMap<number, ApiDescriptor> = new Map<number, ApiDescriptor>(',
    '  Object.values(apis).map((d): [number, ApiDescriptor] => [d.apiKey, d]),',
    ');',
    '',
    'function flexibleAt(d: ApiDescriptor, version: number): boolean {',
    '  const f = d.flexibleVersions;',
    '  return f !== null && version >= f.min && (f.max === null || version <= f.max);',
    '}',
    '',
    '/** Whether `version` of an API uses the flexible encoding; false for unknown APIs. */',
    'export function isFlexibleVersion(apiKey: number, version: number): boolean {',
    '  const d = apiRegistry.get(apiKey);',
    '  return d !== undefined && flexibleAt(d, version);',
    '}',
    '',
    '/** Request header version (0, 1 or 2) for an API version. Unknown APIs get v1. */',
    'export function requestHeaderVersion(apiKey: number, version: number): number {',
    `  if (apiKey === ApiKey.ControlledShutdown && version === 0) return 0;`,
    '  return isFlexibleVersion(apiKey, version) ? 2 : 1;',
    '}',
    '',
    '/** Response header version (0 or 1) for an API version. ApiVersions always answers with v0. */',
    'export function responseHeaderVersion(apiKey: number, version: number): number {',
    '  if (apiKey === ApiKey.ApiVersions) return 0;',
    '  return isFlexibleVersion(apiKey, version) ? 1 : 0;',
    '}',
    '',
  );
  return L.join('\n');
}

function genRecordsIndex(recordFiles) {
  const L = [
    '// Generated by broker/protocol/codegen/generate.mjs. Do not edit; run `npm run codegen`.',
    '// Record formats of internal topics and KRaft/consumer-protocol data. Framing helpers',
    "// (the metadata record envelope and the coordinator int16 version prefix) live in frame.ts.",
  ];
  for (const r of recordFiles) L.push(`export * from './${r.fileName.replace(/\.ts$/, '.js')}';`);
  L.push("export * from './frame.js';", '');
  return L.join('\n');
}

function genErrors() {
  const errors = JSON.parse(stripComments(fs.readFileSync(path.join(srcDir, 'errors.json'), 'utf8')));
  errors.sort((a, b) => a.code - b.code);
  const L = [
    '// Generated by broker/protocol/codegen/generate.mjs from errors.json (Apache Kafka,',
    '// Apache License 2.0). Do not edit; run `npm run codegen`.',
    '',
    '/** Every Kafka protocol error code by name. */',
    'export const ErrorCode = {',
    ...errors.map((e) => `  ${e.name}: ${e.code},`),
    '} as const;',
    '',
    'export type ErrorCodeName = keyof typeof ErrorCode;',
    '',
    'export interface ErrorInfo {',
    '  code: number;',
    '  name: ErrorCodeName;',
    '  /** The Java exception class Kafka maps the code to (null for NONE). */',
    '  exception: string | null;',
    '  retriable: boolean;',
    '}',
    '',
    'export const errorTable: readonly ErrorInfo[] = [',
    ...errors.map(
      (e) =>
        `  { code: ${e.code}, name: '${e.name}', exception: ${e.exception === null ? 'null' : `'${e.exception}'`}, retriable: ${e.retriable} },`,
    ),
    '];',
    '',
  ];
  return L.join('\n');
}

main();
