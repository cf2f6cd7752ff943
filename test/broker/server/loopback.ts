// One server on a free loopback port and one client connected to it, for the
// Connection tests: each server-side socket goes to `onSocket`.
import net from 'node:net';

export interface LoopbackPair {
  readonly client: net.Socket;
  /** Destroys the client and closes the server. */
  close(): Promise<void>;
}

export async function loopbackPair(onSocket: (socket: net.Socket) => void): Promise<LoopbackPair> {
  const server = net.createServer(onSocket);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const client = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  return {
    client,
    close: async () => {
      client.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
