import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Most requests one connection may have waiting for their answers. Pipelined requests that arrive in one read are all
 * parsed and handled at once, before any answer is written (Node stops reading a connection only between reads), so
 * only a count bounds what they will produce. Browsers never pipeline; a client that does needs a handful.
 */
export const MAX_PIPELINED_REQUESTS = 16;

export interface SlowReaderLimits {
  /** WRITE_STALL_TIMEOUT_MS: how long bytes may wait to be written while the reader takes none of them. */
  stallTimeoutMs: number;
  /** WRITE_BACKLOG_MAX_KB, in bytes: the answers a connection may have waiting behind the one being written. */
  maxBacklogBytes: number;
}

export type SlowReaderClosure = 'pipelined' | 'backlog' | 'stalled' | 'idle-after-pipelining';

interface Connection {
  /** Answers begun and not yet handed to the kernel in full. */
  responses: Set<ServerResponse>;
  progress: Progress;
  /** When the reader last took bytes, or nothing was waiting. */
  since: number;
  /** Whether the client ever had two requests waiting at once: browsers and well-behaved clients never do. */
  pipelined: boolean;
  /** When the last answer was handed to the kernel in full, while no request waits. */
  idleSince: number;
}

/** How far the kernel has taken a socket's writes: completed writes, and what libuv still holds of the current one. */
interface Progress {
  written: number;
  queued: number;
}

/**
 * Closes (with a reset, which frees the kernel's buffers too) the connections whose client stops reading: one that
 * pipelines more than MAX_PIPELINED_REQUESTS, one whose answers waiting behind the one being written pass
 * maxBacklogBytes, one with bytes waiting that its reader has taken none of for stallTimeoutMs, and one that has
 * pipelined and then sent nothing for stallTimeoutMs after its last answer went to the kernel: answers that fit in the
 * kernel's socket buffers leave nothing for Node to see (it cannot read the kernel's send queue), so a client that
 * pipelines and never reads would otherwise stay until the keep-alive timeout (72 s). Node's own
 * timeouts do not cover this: requestTimeout ends at the last byte of the request, and keepAliveTimeout only starts
 * once every answer is written. Returns the function that stops the watch.
 */
export function closeSlowReaders(
  server: Server,
  limits: SlowReaderLimits,
  onClose: (reason: SlowReaderClosure) => void,
  now: () => number = Date.now,
): () => void {
  const connections = new Map<Socket, Connection>();
  const close = (socket: Socket, reason: SlowReaderClosure) => {
    connections.delete(socket);
    socket.resetAndDestroy();
    onClose(reason);
  };

  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    // The rest of a read that pipelined too many is still parsed after the close.
    if (socket.destroyed) return;
    let connection = connections.get(socket);
    if (connection === undefined) {
      const created: Connection = { responses: new Set(), progress: progressOf(socket), since: now(), pipelined: false, idleSince: 0 };
      connections.set(socket, created);
      socket.once('close', () => connections.delete(socket));
      connection = created;
    }
    const open = connection;
    const { responses } = open;
    responses.add(response);
    if (responses.size > 1) open.pipelined = true;
    response.once('close', () => {
      responses.delete(response);
      if (responses.size === 0) open.idleSince = now();
    });
    if (responses.size > MAX_PIPELINED_REQUESTS) close(socket, 'pipelined');
  });

  const check = () => {
    const at = now();
    for (const [socket, connection] of connections) {
      if (backlogBytes(socket, connection.responses) > limits.maxBacklogBytes) {
        close(socket, 'backlog');
        continue;
      }
      const progress = progressOf(socket);
      const advanced = progress.written > connection.progress.written || progress.queued < connection.progress.queued;
      connection.progress = progress;
      if (socket.writableLength === 0 || advanced) connection.since = at;
      else if (at - connection.since >= limits.stallTimeoutMs) {
        close(socket, 'stalled');
        continue;
      }
      if (connection.pipelined && connection.responses.size === 0 && at - connection.idleSince >= limits.stallTimeoutMs)
        close(socket, 'idle-after-pipelining');
    }
  };
  const timer = setInterval(check, Math.max(50, Math.min(1_000, limits.stallTimeoutMs / 4)));
  timer.unref();
  return () => clearInterval(timer);
}

/** Bytes of the answers queued behind the one on the socket (those not yet given the socket hold their own output). */
function backlogBytes(socket: Socket, responses: Set<ServerResponse>): number {
  let bytes = 0;
  for (const response of responses) if (response.socket !== socket) bytes += response.writableLength;
  return bytes;
}

function progressOf(socket: Socket): Progress {
  // writeQueueSize is libuv's count of bytes not yet taken by the kernel; it falls as a large write goes out in parts,
  // where writableLength only falls once the whole write is done.
  const queued = (socket as unknown as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0;
  return { written: socket.bytesWritten - socket.writableLength, queued };
}
