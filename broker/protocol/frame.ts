// Request/response framing on top of the generated codecs. Pure; no I/O.
// A frame on the wire is an int32 size followed by a header and a body. The
// functions here take and return frame payloads WITHOUT the size prefix on the
// decode side (the connection strips it), and produce size-prefixed chunks on
// the encode side, ready for a vectored socket write.
import { ErrorCode, KafkaError, ProtocolDecodeError } from './errors.js';
import {
  apiRegistry,
  requestHeaderVersion,
  responseHeaderVersion,
  type ApiDescriptor,
  type TaggedField,
} from './messages/index.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';
import type { OutputChunk } from './record-parts.js';

export interface RequestHeaderInfo {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  /** Null when the client sent a null client id, or for header v0. */
  clientId: string | null;
  taggedFields: TaggedField[];
  /** 0, 1 or 2. */
  headerVersion: number;
  /** Bytes of the header, from the start of the payload. */
  headerSize: number;
}

function readTaggedSection(r: Reader): TaggedField[] {
  const out: TaggedField[] = [];
  const n = r.readUVarint();
  for (let i = 0; i < n; i++) {
    const tag = r.readUVarint();
    out.push({ tag, data: r.readRaw(r.readUVarint()) });
  }
  return out;
}

function writeTaggedSection(w: Writer, fields: readonly TaggedField[] | undefined): void {
  if (fields === undefined || fields.length === 0) {
    w.writeUVarint(0);
    return;
  }
  w.writeUVarint(fields.length);
  for (const f of fields) {
    w.writeUVarint(f.tag);
    w.writeUVarint(f.data.length);
    w.writeRaw(f.data);
  }
}

/**
 * Reads the request header of any API and version: api key, version and
 * correlation id come first in every header version; only whether a client id
 * and tagged fields follow depends on the API (unknown APIs are read as v1).
 * `payload` starts after the 4-byte size prefix.
 */
export function decodeRequestHeader(payload: Buffer, headerVersion?: number): RequestHeaderInfo {
  const r = new Reader(payload);
  const apiKey = r.readInt16();
  const apiVersion = r.readInt16();
  const correlationId = r.readInt32();
  const hv = headerVersion ?? requestHeaderVersion(apiKey, apiVersion);
  // The client id is never a compact string, even in header v2.
  const clientId = hv >= 1 ? r.readNullableString() : null;
  const taggedFields = hv >= 2 ? readTaggedSection(r) : [];
  return { apiKey, apiVersion, correlationId, clientId, taggedFields, headerVersion: hv, headerSize: r.offset };
}

/** A request body and what followed it in the frame. */
export interface DecodedRequestBody {
  body: unknown;
  /**
   * Bytes after the end of the body the API's schema describes. Kafka reads the
   * body it knows and ignores the rest (RequestContext.parseRequest never checks
   * that the buffer was used up), and clients rely on it: librdkafka 2.1x pads
   * its all-topics Metadata v12 request with zero bytes.
   */
  trailingBytes: number;
}

/**
 * Decodes the body of a request whose header was read by decodeRequestHeader.
 * Throws KafkaError(UNSUPPORTED_VERSION) for an unknown API or version, and
 * ProtocolDecodeError for a body that is malformed or cut short; bytes after a
 * whole body are counted, not refused.
 */
export function decodeRequestBody(header: RequestHeaderInfo, payload: Buffer): DecodedRequestBody {
  const api = apiRegistry.get(header.apiKey);
  if (api === undefined) {
    throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `Unknown api key ${header.apiKey}`);
  }
  const r = new Reader(payload, header.headerSize);
  const body = api.decodeRequest(r, header.apiVersion);
  return { body, trailingBytes: r.remaining };
}

/** Writes `header` then `body` into one writer with a 4-byte size prefix patched in at the end. */
function frame(writeHeader: (w: Writer) => void, writeBody: (w: Writer) => void, capacity: number): Writer {
  const w = new Writer(capacity);
  w.writeInt32(0);
  writeHeader(w);
  writeBody(w);
  w.patchInt32(0, w.length - 4);
  return w;
}

/**
 * A size-prefixed response frame: response header (v0 or v1 as Kafka decides
 * for this API and version) and the body written by `writeBody`.
 */
export function encodeResponse(
  apiKey: number,
  version: number,
  correlationId: number,
  writeBody: (w: Writer) => void,
  options: { headerTaggedFields?: readonly TaggedField[]; capacity?: number } = {},
): Buffer[] {
  return responseWriter(apiKey, version, correlationId, writeBody, options).toChunks();
}

/**
 * encodeResponse for the server: the record bytes of a Fetch answer may stay in
 * their segment files (FileRecords), sent from the page cache.
 */
export function encodeResponseOutput(
  apiKey: number,
  version: number,
  correlationId: number,
  writeBody: (w: Writer) => void,
  options: { headerTaggedFields?: readonly TaggedField[]; capacity?: number } = {},
): OutputChunk[] {
  return responseWriter(apiKey, version, correlationId, writeBody, options).toOutput();
}

function responseWriter(
  apiKey: number,
  version: number,
  correlationId: number,
  writeBody: (w: Writer) => void,
  options: { headerTaggedFields?: readonly TaggedField[]; capacity?: number },
): Writer {
  const hv = responseHeaderVersion(apiKey, version);
  return frame(
    (w) => {
      w.writeInt32(correlationId);
      if (hv >= 1) writeTaggedSection(w, options.headerTaggedFields);
    },
    writeBody,
    options.capacity ?? 512,
  );
}

/** Like encodeResponse, with the body encoded by the API's generated codec. */
export function encodeResponseMessage<Res>(
  api: ApiDescriptor<unknown, Res>,
  version: number,
  correlationId: number,
  message: Res,
): Buffer[] {
  return encodeResponse(api.apiKey, version, correlationId, (w) => api.encodeResponse(w, version, message));
}

/** A size-prefixed request frame (client side: our CLI and tests). */
export function encodeRequest(
  apiKey: number,
  version: number,
  correlationId: number,
  clientId: string | null,
  writeBody: (w: Writer) => void,
  options: { headerTaggedFields?: readonly TaggedField[]; capacity?: number } = {},
): Buffer[] {
  const hv = requestHeaderVersion(apiKey, version);
  return frame(
    (w) => {
      w.writeInt16(apiKey);
      w.writeInt16(version);
      w.writeInt32(correlationId);
      if (hv >= 1) w.writeNullableString(clientId);
      if (hv >= 2) writeTaggedSection(w, options.headerTaggedFields);
    },
    writeBody,
    options.capacity ?? 512,
  ).toChunks();
}

/** Like encodeRequest, with the body encoded by the API's generated codec. */
export function encodeRequestMessage<Req>(
  api: ApiDescriptor<Req, unknown>,
  version: number,
  correlationId: number,
  clientId: string | null,
  message: Req,
): Buffer[] {
  return encodeRequest(api.apiKey, version, correlationId, clientId, (w) => api.encodeRequest(w, version, message));
}

export interface ResponseHeaderInfo {
  correlationId: number;
  taggedFields: TaggedField[];
  headerVersion: number;
  headerSize: number;
}

/** Reads a response header; the caller must know which request it answers. `payload` excludes the size prefix. */
export function decodeResponseHeader(payload: Buffer, apiKey: number, version: number): ResponseHeaderInfo {
  const r = new Reader(payload);
  const hv = responseHeaderVersion(apiKey, version);
  const correlationId = r.readInt32();
  const taggedFields = hv >= 1 ? readTaggedSection(r) : [];
  return { correlationId, taggedFields, headerVersion: hv, headerSize: r.offset };
}

/** Decodes a whole response payload (size prefix excluded) with the API's generated codec. */
export function decodeResponse<Res = unknown>(
  payload: Buffer,
  api: ApiDescriptor<unknown, Res> | number,
  version: number,
): { header: ResponseHeaderInfo; body: Res } {
  const d = typeof api === 'number' ? apiRegistry.get(api) : api;
  if (d === undefined) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `Unknown api key ${String(api)}`);
  const header = decodeResponseHeader(payload, d.apiKey, version);
  const r = new Reader(payload, header.headerSize);
  const body = d.decodeResponse(r, version) as Res;
  if (r.remaining !== 0) {
    throw new ProtocolDecodeError(`${r.remaining} trailing bytes after ${d.name} response v${version} body`);
  }
  return { header, body };
}

/** Concatenates frame chunks and strips the size prefix, checking it (tests and simple clients). */
export function payloadOf(chunks: readonly Buffer[]): Buffer {
  const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const r = new Reader(buf);
  const size = r.readInt32();
  if (size !== buf.length - 4) throw new ProtocolDecodeError(`Frame size ${size} does not match ${buf.length - 4} bytes`);
  return buf.subarray(4);
}
