// Looks up the generated decode/encode functions of a message by name.
import * as messages from '../../../../broker/protocol/messages/index.js';
import * as records from '../../../../broker/protocol/messages/records/index.js';
import type { Reader } from '../../../../broker/protocol/reader.js';
import type { Writer } from '../../../../broker/protocol/writer.js';

export type Decode = (r: Reader, version: number) => unknown;
export type Encode = (w: Writer, version: number, m: unknown) => void;

const all: Record<string, unknown> = { ...messages, ...records };

export function codecOf(name: string): { decode: Decode; encode: Encode } {
  const decode = all[`decode${name}`];
  const encode = all[`encode${name}`];
  if (typeof decode !== 'function' || typeof encode !== 'function') throw new Error(`no codec for ${name}`);
  return { decode: decode as Decode, encode: encode as Encode };
}
