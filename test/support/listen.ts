import { once } from 'node:events';
import { Server as HttpsServer } from 'node:https';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { FastifyInstance } from 'fastify';

const LOOPBACK = '127.0.0.1';

export interface Listening {
  port: number;
  /** `http://127.0.0.1:<port>`, or `https://…` for a TLS server. */
  origin: string;
}

/** Starts the app, or a plain Node server, on a port of 127.0.0.1 that the system picks, and says which. */
export async function listenOnFreePort(server: FastifyInstance | Server): Promise<Listening> {
  let address: AddressInfo;
  if ('inject' in server) {
    await server.listen({ host: LOOPBACK, port: 0 });
    address = server.server.address() as AddressInfo;
  } else {
    server.listen(0, LOOPBACK);
    await once(server, 'listening');
    address = server.address() as AddressInfo;
  }
  const scheme = server instanceof HttpsServer ? 'https' : 'http';
  return { port: address.port, origin: `${scheme}://${LOOPBACK}:${address.port}` };
}

/**
 * A port of 127.0.0.1 free right now (bound, then released): for a server that must know its URL before it starts, or for
 * an address where nothing listens.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  const { port } = await listenOnFreePort(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}
