// A paced producer in its own process, for the tiering bench's produce latency
// phase: kafkajs sends one 1 KiB record per request (acks=all) at a fixed rate
// and records, per send, when it started (epoch milliseconds, sub-millisecond
// resolution, comparable across processes) and how long it took to be
// acknowledged. It prints `ready` once the first send is acknowledged, runs until
// its stdin closes, then prints its samples as one JSON line and exits.
//
//   node dist/test/bench/produce-latency-probe.js BOOTSTRAP TOPIC RATE
import { Kafka, logLevel } from 'kafkajs';
import type { LatencySample } from './latency-windows.js';

const TICK_MS = 10;

async function main(): Promise<void> {
  const [bootstrap, topic, rateArg] = process.argv.slice(2);
  const rate = Number(rateArg);
  if (bootstrap === undefined || topic === undefined || !Number.isFinite(rate) || rate <= 0) {
    console.error('usage: produce-latency-probe BOOTSTRAP TOPIC RATE');
    process.exit(2);
  }
  const kafka = new Kafka({ clientId: 'latency-probe', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const value = Buffer.alloc(1024, 'x');
  const now = (): number => performance.timeOrigin + performance.now();
  const samples: LatencySample[] = [];
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const sendOne = (): void => {
    const started = now();
    const p = producer
      .send({ topic, acks: -1, messages: [{ value }] })
      .then(
        () => {
          samples.push({ at: started, ms: now() - started });
        },
        () => {
          errors++;
        },
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  // The first acknowledged send: connections and metadata are in place.
  sendOne();
  await Promise.all(inFlight);
  samples.length = 0;
  process.stdout.write('ready\n');
  let owed = 0;
  // How late each tick ran: the probe's own scheduling delay, reported with the samples so a
  // slow send can be told from a probe that was not running.
  const ticks: LatencySample[] = [];
  let expected = now() + TICK_MS;
  const timer = setInterval(() => {
    const t = now();
    ticks.push({ at: expected, ms: Math.max(0, t - expected) });
    expected = t + TICK_MS;
    owed += (rate * TICK_MS) / 1000;
    for (; owed >= 1; owed--) sendOne();
  }, TICK_MS);
  await new Promise<void>((resolve) => {
    process.stdin.on('end', resolve);
    process.stdin.on('close', resolve);
    process.stdin.resume();
  });
  clearInterval(timer);
  await Promise.all(inFlight);
  await producer.disconnect();
  process.stdout.write(`${JSON.stringify({ samples, errors, ticks })}\n`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
