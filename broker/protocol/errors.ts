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

/** One rejected record of a batch (KIP-467): its index in the batch and why. */
export interface RecordError {
  readonly batchIndex: number;
  readonly message: string | null;
}

/**
 * A batch refused because of some of its records (Kafka's
 * RecordValidationException): the Produce answer carries `recordErrors` and
 * this message as its error_message. Built by recordValidationError.
 */
export class RecordValidationError extends KafkaError {
  constructor(
    code: number,
    message: string,
    readonly recordErrors: readonly RecordError[],
  ) {
    super(code, message);
    this.name = 'RecordValidationError';
  }
}

/**
 * Kafka's LogValidator.processRecordErrors: INVALID_TIMESTAMP when any record
 * error is a timestamp one, else INVALID_RECORD listing the first three errors
 * the way Java prints a List of RecordError.
 */
export function recordValidationError(errors: readonly { readonly code: number; readonly error: RecordError }[]): RecordValidationError {
  const recordErrors = errors.map((e) => e.error);
  if (errors.some((e) => e.code === ErrorCode.INVALID_TIMESTAMP)) {
    return new RecordValidationError(ErrorCode.INVALID_TIMESTAMP, 'One or more records have been rejected due to invalid timestamp', recordErrors);
  }
  const shown = recordErrors
    .slice(0, 3)
    .map((e) => `RecordError(batchIndex=${e.batchIndex}, message=${e.message === null ? 'null' : `'${e.message}'`})`)
    .join(', ');
  return new RecordValidationError(
    ErrorCode.INVALID_RECORD,
    `One or more records have been rejected due to ${recordErrors.length} record errors in total, and only showing the first three errors at most: [${shown}]`,
    recordErrors,
  );
}
