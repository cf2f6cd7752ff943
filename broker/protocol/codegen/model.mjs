// Parsing of Kafka's JSON message definitions into a model the emitters use.
import fs from 'node:fs';

// ---------------------------------------------------------------- parsing

/** Strips `//` line comments that are not inside string literals. */
export function stripComments(text) {
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

export function loadJson(file) {
  return JSON.parse(stripComments(fs.readFileSync(file, 'utf8')));
}

/** Version range string -> { min, max } (max Infinity for "N+"), or null for "none". */
export function parseVersions(s) {
  if (s === undefined || s === null) return undefined;
  s = String(s).trim();
  if (s === 'none') return null;
  if (s.endsWith('+')) return { min: Number(s.slice(0, -1)), max: Infinity };
  const dash = s.indexOf('-');
  if (dash > 0) return { min: Number(s.slice(0, dash)), max: Number(s.slice(dash + 1)) };
  return { min: Number(s), max: Number(s) };
}

export function intersect(a, b) {
  if (!a || !b) return null;
  const min = Math.max(a.min, b.min);
  const max = Math.min(a.max, b.max);
  return min <= max ? { min, max } : null;
}

const PRIMITIVES = new Set([
  'int8', 'int16', 'int32', 'int64', 'uint16', 'uint32', 'float64', 'bool', 'string', 'bytes', 'records', 'uuid',
]);

export function camel(name) {
  return name[0].toLowerCase() + name.slice(1);
}

export function kebab(name) {
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
export function buildModel(spec) {
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
