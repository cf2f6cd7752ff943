// Emits the TypeScript codec of one message (interfaces, Meta, decode/encode
// per struct, default factories) and records its field schema for tests.
import { buildModel, intersect, parseVersions } from './model.mjs';

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
    case 'bytes':
      return 'Buffer';
    case 'records':
      // A Buffer (what decoders produce) or a RecordParts (written part by part, never joined).
      return 'Records';
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
export const schemas = [];

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

export function genMessage(spec, ctxExtra) {
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
    `  latestVersionUnstable: ${spec.latestVersionUnstable === true},`,
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

export function fileHeader(sources, depth) {
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

export function runtimeImport(code, runtimePath) {
  const used = RUNTIME_NAMES.filter((n) => new RegExp(`\\b${n}\\b`).test(code));
  const types = ['MessageMeta'];
  if (/\bRecords \| null\b/.test(code)) types.push('Records');
  if (/\bTaggedField\b/.test(code)) types.push('TaggedField');
  const lines = [];
  lines.push(`import type { ${types.join(', ')} } from '${runtimePath}';`);
  if (used.length) lines.push(`import { ${used.join(', ')} } from '${runtimePath}';`);
  return lines;
}
