// The shape of a config definition, after Kafka's ConfigDef: a name, a type, a
// default, a validator, an importance and a doc string. Values are parsed from
// the strings of server.properties or of a CreateTopics/AlterConfigs request and
// rendered back as Kafka renders them (ConfigDef.convertToString), so that
// DescribeConfigs shows what a Kafka broker would show.
//
// Pure: no I/O. Both the broker table and the topic table use these helpers.

export type ConfigType = 'boolean' | 'string' | 'int' | 'short' | 'long' | 'double' | 'list' | 'class' | 'password';

/** DescribeConfigsResponse v3+ ConfigType codes. */
export const ConfigTypeCode: Readonly<Record<ConfigType, number>> = {
  boolean: 1,
  string: 2,
  int: 3,
  short: 4,
  long: 5,
  double: 6,
  list: 7,
  class: 8,
  password: 9,
};

/** DescribeConfigsResponse ConfigSource codes (Kafka's DescribeConfigsResponse.ConfigSource). */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;
export type ConfigSourceCode = (typeof ConfigSource)[keyof typeof ConfigSource];

export type Importance = 'high' | 'medium' | 'low';

/**
 * A parsed value. Kafka's INT/SHORT/LONG/DOUBLE are JS numbers: a LONG outside
 * the safe-integer range (Long.MAX_VALUE is a common default) is kept as the
 * nearest double and rendered back exactly when it is a Long bound.
 */
export type ConfigValue = boolean | string | number | readonly string[] | null;

/** A validator: returns an error message for a bad value, or undefined. */
export interface Validator {
  /** Human text for docs ("[1,...]", "[delete, compact]"). */
  readonly describe: string;
  check(value: ConfigValue): string | undefined;
}

export interface ConfigDef {
  readonly name: string;
  readonly type: ConfigType;
  /** null: no default (the value is optional, or derived from another key). */
  readonly default: ConfigValue;
  readonly validator?: Validator;
  readonly importance: Importance;
  readonly doc: string;
  /** Doc text for a default that is derived rather than a constant. */
  readonly defaultDoc?: string;
}

/** A broker config key. */
export interface BrokerConfigDef extends ConfigDef {
  readonly scope: 'broker';
}

/** A topic config key and the broker keys it inherits from, highest priority first. */
export interface TopicConfigDef extends ConfigDef {
  readonly scope: 'topic';
  /**
   * Kafka's ServerTopicConfigSynonyms: broker keys, in priority order, with the
   * factor that converts the broker value into the topic unit (hours -> ms).
   * Empty when the topic key has no broker default.
   */
  readonly synonyms: readonly BrokerSynonym[];
  /** Kafka's defineInternal: accepted and applied, never listed by DescribeConfigs. */
  readonly internal?: boolean;
}

export interface BrokerSynonym {
  readonly name: string;
  /** Multiply the broker value by this to get the topic value (e.g. 3_600_000 for hours). */
  readonly factor?: number;
}

/** A configuration that cannot be parsed or is invalid; the message names the key. */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const INT_MIN = -2147483648;
export const INT_MAX = 2147483647;
export const SHORT_MIN = -32768;
export const SHORT_MAX = 32767;
export const LONG_MAX = 9223372036854775807n;
export const LONG_MIN = -9223372036854775808n;
/** Long.MAX_VALUE as a number (2^63): the usual "unbounded" default. */
export const LONG_MAX_NUMBER = Number(LONG_MAX);

const TYPE_NAMES: Readonly<Record<ConfigType, string>> = {
  boolean: 'BOOLEAN',
  string: 'STRING',
  int: 'INT',
  short: 'SHORT',
  long: 'LONG',
  double: 'DOUBLE',
  list: 'LIST',
  class: 'CLASS',
  password: 'PASSWORD',
};

export function typeName(type: ConfigType): string {
  return TYPE_NAMES[type];
}

function invalid(name: string, raw: string, why: string): ConfigError {
  return new ConfigError(name, `Invalid value ${raw} for configuration ${name}: ${why}`);
}

/**
 * Parses the string form of a value as Kafka's ConfigDef.parseType does:
 * surrounding whitespace is trimmed, numbers must be plain decimal integers
 * within the type's range, booleans are `true`/`false` in any case, lists are
 * comma separated with blanks trimmed. Then runs the definition's validator.
 */
export function parseConfigValue(def: ConfigDef, raw: string): ConfigValue {
  const value = parseType(def.name, def.type, raw);
  checkValue(def, value, raw);
  return value;
}

/** Runs the validator on an already-typed value (a default, or a parsed one). */
export function checkValue(def: ConfigDef, value: ConfigValue, raw?: string): void {
  if (def.validator === undefined) return;
  const problem = def.validator.check(value);
  if (problem !== undefined) throw invalid(def.name, raw ?? formatConfigValue(def.type, value) ?? 'null', problem);
}

function parseType(name: string, type: ConfigType, raw: string): ConfigValue {
  const text = raw.trim();
  switch (type) {
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      throw invalid(name, raw, 'Expected value to be either true or false');
    }
    case 'string':
    case 'class':
      return text;
    case 'password':
      // Kafka keeps passwords verbatim (no trim).
      return raw;
    case 'int':
      return parseInteger(name, raw, text, BigInt(INT_MIN), BigInt(INT_MAX), 'INT');
    case 'short':
      return parseInteger(name, raw, text, BigInt(SHORT_MIN), BigInt(SHORT_MAX), 'SHORT');
    case 'long':
      return parseInteger(name, raw, text, LONG_MIN, LONG_MAX, 'LONG');
    case 'double': {
      // Java's Double.parseDouble accepts a leading sign, decimals and exponents.
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?$/.test(text)) {
        throw invalid(name, raw, 'Not a number of type DOUBLE');
      }
      return Number(text.replace(/[dDfF]$/, ''));
    }
    case 'list':
      if (text === '') return [];
      return text.split(',').map((part) => part.trim());
  }
}

function parseInteger(name: string, raw: string, text: string, min: bigint, max: bigint, label: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw invalid(name, raw, `Not a number of type ${label}`);
  const big = BigInt(text);
  if (big < min || big > max) throw invalid(name, raw, `Not a number of type ${label}`);
  return Number(big);
}

/** Renders a value as Kafka's ConfigDef.convertToString; null stays null. */
export function formatConfigValue(type: ConfigType, value: ConfigValue): string | null {
  if (value === null) return null;
  if (Array.isArray(value)) return value.join(',');
  switch (type) {
    case 'long':
    case 'int':
    case 'short':
      return formatInteger(value as number);
    case 'double': {
      const n = value as number;
      // Java renders doubles with at least one decimal: 0.5, 1.0.
      return Number.isInteger(n) && Math.abs(n) < 1e7 ? `${n}.0` : String(n);
    }
    default:
      return String(value);
  }
}

function formatInteger(n: number): string {
  if (n >= LONG_MAX_NUMBER) return LONG_MAX.toString();
  if (n <= Number(LONG_MIN)) return LONG_MIN.toString();
  if (Number.isSafeInteger(n)) return String(n);
  return BigInt(Math.trunc(n)).toString();
}

// ---- validators (Kafka's ConfigDef.Range, ValidString, ValidList) ----

export function atLeast(min: number): Validator {
  return {
    describe: `[${formatInteger(min)},...]`,
    check(value) {
      if (typeof value === 'number' && value < min) return `Value must be at least ${formatBound(min)}`;
      return undefined;
    },
  };
}

export function between(min: number, max: number): Validator {
  return {
    describe: `[${formatBound(min)},...,${formatBound(max)}]`,
    check(value) {
      if (typeof value !== 'number') return undefined;
      if (value < min) return `Value must be at least ${formatBound(min)}`;
      if (value > max) return `Value must be no more than ${formatBound(max)}`;
      return undefined;
    },
  };
}

function formatBound(n: number): string {
  return Number.isInteger(n) ? formatInteger(n) : String(n);
}

/** One of the given strings (exact case, as Kafka's ValidString). */
export function oneOf(...allowed: string[]): Validator {
  return {
    describe: `[${allowed.join(', ')}]`,
    check(value) {
      if (typeof value === 'string' && !allowed.includes(value)) return `String must be one of: ${allowed.join(', ')}`;
      return undefined;
    },
  };
}

/** Every list element one of the given strings (Kafka's ValidList.in). */
export function listOf(...allowed: string[]): Validator {
  return {
    describe: `[${allowed.join(', ')}]`,
    check(value) {
      if (!Array.isArray(value)) return undefined;
      for (const item of value) {
        if (!allowed.includes(item)) return `Invalid value ${item} for configuration: String must be one of: ${allowed.join(', ')}`;
      }
      return undefined;
    },
  };
}

/** A list without blanks or duplicates (Kafka's ValidList.anyNonDuplicateValues). */
export function nonDuplicateList(allowEmpty: boolean): Validator {
  return {
    describe: allowEmpty ? 'list of unique values' : 'non-empty list of unique values',
    check(value) {
      if (!Array.isArray(value)) return undefined;
      if (!allowEmpty && value.length === 0) return 'Empty list not allowed';
      if (value.some((v) => v === '')) return 'Empty values are not allowed';
      if (new Set(value).size !== value.length) return 'Values must not be duplicated';
      return undefined;
    },
  };
}

/** A custom validator with a describe text. */
export function validator(describe: string, check: (value: ConfigValue) => string | undefined): Validator {
  return { describe, check };
}

/** compression.type (topic and broker): Kafka's BrokerCompressionType names, in its order. */
export const compressionTypeValidator = oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer');

/** compression.gzip.level: 1-9 or -1 (zlib's default), as Kafka's GzipCompression.LevelValidator. */
export const gzipLevelValidator = validator('[1,...,9] or -1', (value) =>
  typeof value === 'number' && value !== -1 && (value < 1 || value > 9) ? 'Value must be between 1 and 9 or equal to -1' : undefined,
);

/** Whether DescribeConfigs must hide the value (Kafka: PASSWORD types, and Sediment's secret keys). */
export function isSensitiveKey(name: string, type: ConfigType | undefined): boolean {
  if (type === 'password') return true;
  return /(password|secret|credential|session\.token)/i.test(name);
}
