#!/usr/bin/env node
// `sediment <command>`: start | cluster | topics | groups | cost. Each command lives in its
// own module; this file only dispatches.
const USAGE = `usage: sediment <command> [args]

commands:
  start [server.properties] [--override key=value]...   run a broker
  cluster start --brokers N [--data DIR]                 a local cluster: etcd and N brokers on loopback
  topics --bootstrap-server H:P ...                      manage topics (kafka-topics style)
  groups --bootstrap-server H:P ...                      consumer groups (kafka-consumer-groups style)
  cost --ingress RATE --retention DURATION ...           monthly cost with and without tiered storage
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const { runStart } = await import('./start.js');
      return runStart(rest);
    }
    case 'cluster': {
      const { runCluster } = await import('./cluster.js');
      return runCluster(rest);
    }
    case 'topics': {
      const { runTopics } = await import('./topics.js');
      return runTopics(rest);
    }
    case 'groups': {
      const { runGroups } = await import('./groups.js');
      return runGroups(rest);
    }
    case 'cost': {
      const { runCost } = await import('./cost.js');
      return runCost(rest);
    }
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`unknown command '${command}'\n${USAGE}`);
      return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0 || (process.argv[2] !== 'start' && process.argv[2] !== 'cluster')) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sediment: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
