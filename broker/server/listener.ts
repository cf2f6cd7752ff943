// Parses Kafka listener strings (`PLAINTEXT://127.0.0.1:9092`) and runs the TCP
// server that hands sockets to connections.
import net from 'node:net';
import type { Logger } from 'pino';
import { Connection, type RequestProcessor } from './connection.js';

export interface ListenerAddress {
  name: string;
  host: string;
  port: number;
}

export function parseListener(spec: string): ListenerAddress {
  const m = /^([A-Za-z_][A-Za-z0-9_]*):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(spec.trim());
  if (m === null) throw new Error(`invalid listener '${spec}': expected NAME://host:port`);
  const host = m[2]!.replace(/^\[|\]$/g, '');
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listener '${spec}': port ${port} out of range`);
  return { name: m[1]!.toUpperCase(), host, port };
}

export function parseListeners(value: string): ListenerAddress[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(parseListener);
}

export class KafkaListener {
  private server: net.Server | null = null;
  private readonly connections = new Set<Connection>();
  private nextId = 1;

  constructor(
    private readonly address: ListenerAddress,
    private readonly processor: RequestProcessor,
    private readonly maxFrameBytes: number,
    private readonly log: Logger,
  ) {}

  /** Binds; resolves with the bound port (useful with port 0 in tests). */
  async start(): Promise<number> {
    const server = net.createServer((socket) => {
      const conn = new Connection(socket, this.nextId++, this.maxFrameBytes, this.processor, this.log, (c) => this.connections.delete(c));
      this.connections.add(conn);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.address.port, this.address.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = server.address();
    return typeof bound === 'object' && bound !== null ? bound.port : this.address.port;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const c of this.connections) c.close('broker shutting down');
    await closed;
  }
}
