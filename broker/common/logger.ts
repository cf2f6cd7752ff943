// Structured logs: pino JSON to stdout. Level from SEDIMENT_LOG_LEVEL (info).
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: options.name ?? 'sediment',
    level: options.level ?? process.env['SEDIMENT_LOG_LEVEL'] ?? 'info',
    base: { pid: process.pid },
  });
}

/** A logger that drops everything: for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
