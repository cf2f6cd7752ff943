// Shared by the admin handlers: an exception becomes a (code, message) pair.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { Logger } from 'pino';

export function toErrorPair(err: unknown, log: Logger): { errorCode: number; errorMessage: string } {
  if (err instanceof KafkaError) return { errorCode: err.code, errorMessage: err.message };
  log.error({ err }, 'admin operation failed');
  return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: (err as Error).message };
}

/** ConfigResource types of DescribeConfigs / AlterConfigs. */
export const ResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, GROUP: 32 } as const;
