// `sediment start [server.properties] [--override key=value]...`, the
// kafka-server-start convention. A config error stops start-up with a message
// naming the key; SIGTERM/SIGINT shut down cleanly (flush, close segments,
// write checkpoints) so the next start needs no recovery.
import { loadBrokerConfig, ConfigError } from '../config.js';
import { createLogger } from '../common/logger.js';
import { Broker } from '../broker.js';
import { applyV8Settings } from './heap-growth.js';

export function parseStartArgs(args: readonly string[]): { file?: string; overrides: string[] } {
  const overrides: string[] = [];
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--override') {
      const v = args[++i];
      if (v === undefined) throw new ConfigError('', '--override needs a key=value argument');
      overrides.push(v);
    } else if (a.startsWith('--override=')) {
      overrides.push(a.slice('--override='.length));
    } else if (a.startsWith('-')) {
      throw new ConfigError('', `unknown option ${a}`);
    } else if (file === undefined) {
      file = a;
    } else {
      throw new ConfigError('', `unexpected argument ${a}: only one properties file is accepted`);
    }
  }
  return file === undefined ? { overrides } : { file, overrides };
}

export async function runStart(args: readonly string[]): Promise<number> {
  const log = createLogger();
  let broker: Broker;
  try {
    applyV8Settings();
    const parsed = parseStartArgs(args);
    const config = await loadBrokerConfig(parsed);
    broker = await Broker.start(config, { log });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sediment: configuration error: ${err.message}\n`);
      return 2;
    }
    log.fatal({ err }, 'start-up failed');
    process.stderr.write(`sediment: start-up failed: ${(err as Error).message}\n`);
    return 1;
  }
  // A promise rejected with nobody listening is a bug to log, not a reason to
  // take every partition offline: Node's default would exit the broker.
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled promise rejection'));
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    broker.stop().then(
      () => {
        log.info('shut down cleanly');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return 0;
}
