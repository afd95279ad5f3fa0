import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { XMLParser } from 'fast-xml-parser';
import { listenOnFreePort } from './listen.js';

/** One request a DAV client sent through the recorder, and what it got back. */
export interface DavExchange {
  method: string;
  path: string;
  status: number;
  /** Body bytes as sent on the wire (headers not counted). */
  requestBytes: number;
  responseBytes: number;
  /** From the request's first byte received to the response's last byte sent. */
  ms: number;
  /** The response's Content-Encoding, if any. */
  encoding: string | null;
  /** The cards the request asked for: the hrefs of an addressbook-multiget, or 1 for a GET of a card. */
  cardsAsked: number;
}

export interface DavTraffic {
  requests: number;
  requestBytes: number;
  responseBytes: number;
  cardsAsked: number;
  /** The exchanges' times added up: the server's share of a client that sends one request at a time. */
  exchangeMs: number;
  /** Requests per method, e.g. `{ PROPFIND: 5, REPORT: 1 }`. */
  methods: Record<string, number>;
  /** Responses per Content-Encoding (`identity` for none). */
  encodings: Record<string, number>;
}

/** A pass-through HTTP proxy in front of the server that writes down what each client request cost. */
export interface DavRecorder {
  /** `http://127.0.0.1:<port>`: give it to the client as the server's base URL. */
  url: string;
  /** The exchanges since the last `take()`, which starts the count again. */
  take(): DavExchange[];
  close(): Promise<void>;
}

const xml = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, isArray: (name) => name === 'href' });

/**
 * Starts a recorder that forwards every request to `target` (an origin) unchanged, Host header included, so what the
 * server builds from the Host (a redirect's Location) names the recorder. It counts on the client's side of the wire:
 * bytes as the client sent and received them, compressed or not.
 */
export async function startDavRecorder(target: string): Promise<DavRecorder> {
  const upstream = new URL(target);
  let exchanges: DavExchange[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    void forward(upstream, incoming, outgoing).then(
      (exchange) => exchanges.push(exchange),
      () => outgoing.destroy(),
    );
  });
  const { origin } = await listenOnFreePort(server);
  return {
    url: origin,
    take: () => {
      const taken = exchanges;
      exchanges = [];
      return taken;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function forward(upstream: URL, incoming: IncomingMessage, outgoing: ServerResponse): Promise<DavExchange> {
  const started = performance.now();
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const answer = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      resolve,
    );
    sent.on('error', reject);
    sent.end(body);
  });
  outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
  let responseBytes = 0;
  for await (const chunk of answer) {
    responseBytes += (chunk as Buffer).length;
    outgoing.write(chunk);
  }
  outgoing.end();
  const method = incoming.method ?? '';
  return {
    method,
    path: incoming.url ?? '',
    status: answer.statusCode ?? 0,
    requestBytes: body.length,
    responseBytes,
    ms: performance.now() - started,
    encoding: (answer.headers['content-encoding'] as string | undefined) ?? null,
    cardsAsked: cardsAsked(method, incoming.url ?? '', body),
  };
}

function cardsAsked(method: string, path: string, body: Buffer): number {
  if (method === 'GET') return path.endsWith('.vcf') ? 1 : 0;
  if (method !== 'REPORT' || body.length === 0) return 0;
  const parsed = xml.parse(body.toString('utf8')) as { 'addressbook-multiget'?: { href?: unknown[] } };
  return parsed['addressbook-multiget']?.href?.length ?? 0;
}

/** The exchanges added up. */
export function trafficOf(exchanges: readonly DavExchange[]): DavTraffic {
  const methods: Record<string, number> = {};
  const encodings: Record<string, number> = {};
  for (const { method, encoding } of exchanges) {
    methods[method] = (methods[method] ?? 0) + 1;
    encodings[encoding ?? 'identity'] = (encodings[encoding ?? 'identity'] ?? 0) + 1;
  }
  const sum = (field: 'requestBytes' | 'responseBytes' | 'cardsAsked' | 'ms') =>
    exchanges.reduce((total, exchange) => total + exchange[field], 0);
  return {
    requests: exchanges.length,
    requestBytes: sum('requestBytes'),
    responseBytes: sum('responseBytes'),
    cardsAsked: sum('cardsAsked'),
    exchangeMs: sum('ms'),
    methods,
    encodings,
  };
}
