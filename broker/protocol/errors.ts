// Kafka error codes as data. The table itself is generated from Kafka's
// errors.json (error-codes.ts); this module adds the error class that carries a
// code to the protocol boundary, and the decode error used by the codecs.
import { ErrorCode, errorTable } from './error-codes.js';

export { ErrorCode, errorTable };
export type { ErrorCodeName, ErrorInfo } from './error-codes.js';

const byCode = new Map<number, (typeof errorTable)[number]>();
for (const e of errorTable) byCode.set(e.code, e);

/** The Kafka name of an error code (`'NOT_LEADER_OR_FOLLOWER'`), or `UNKNOWN_ERROR_<code>`. */
export function errorName(code: number): string {
  return byCode.get(code)?.name ?? `UNKNOWN_ERROR_${code}`;
}

/** Whether Kafka's exception for this code descends from RetriableException. */
export function isRetriable(code: number): boolean {
  return byCode.get(code)?.retriable ?? false;
}

/** An error that reaches the protocol as a Kafka error code. */
export class KafkaError extends Error {
  constructor(
    readonly code: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'KafkaError';
  }

  get errorName(): string {
    return errorName(this.code);
  }

  get retriable(): boolean {
    return isRetriable(this.code);
  }
}

/** Malformed wire bytes: truncation, negative or absurd lengths, bad varints. */
export class ProtocolDecodeError extends KafkaError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.CORRUPT_MESSAGE, message, options);
    this.name = 'ProtocolDecodeError';
  }
}

/** A message that cannot be written in the requested version (null where not nullable, out of range). */
export class ProtocolEncodeError extends KafkaError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message, options);
    this.name = 'ProtocolEncodeError';
  }
}
