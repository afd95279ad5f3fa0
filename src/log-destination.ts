import { constants, fstatSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { destination as sonicBoom } from 'pino';

/**
 * Log bytes a process holds while its reader does not read. Past this, lines are dropped and counted: a stalled
 * log pipe costs at most this much memory, never the event loop.
 */
export const LOG_BUFFER_BYTES = 1024 * 1024;

/** Where log lines go, with what could not be written accounted for. */
export interface LogDestination {
  write(line: string): void;
  /** Lines dropped so far: the reader stalled past LOG_BUFFER_BYTES, or went away. */
  dropped(): number;
  /** Called once the reader has caught up after drops, with how many were dropped meanwhile. */
  onCaughtUp(listener: (dropped: number) => void): void;
  /** Resolves once buffered lines are written, or after `timeoutMs`, whichever is first. */
  flush(timeoutMs: number): Promise<void>;
}

/**
 * The most a pipe takes in one write without splitting it (POSIX PIPE_BUF on Linux). Several processes write to
 * one log pipe, so each write is whole lines within this size: a longer write may be cut where the pipe is full,
 * and another process's line would land in the middle of one of ours.
 */
const ATOMIC_WRITE_BYTES = 4096;

/**
 * Lines written to a pipe or socket without ever blocking: the descriptor is non-blocking, and libuv writes what
 * the reader takes, one write of whole lines (at most ATOMIC_WRITE_BYTES, unless one line is longer) at a time.
 * What the reader leaves waits in memory up to `maxBufferedBytes`; further lines are dropped. A broken pipe (the
 * reader exited) stops logging and nothing else. The handle never keeps the process alive.
 */
function nonBlockingDestination(socket: Socket, maxBufferedBytes = LOG_BUFFER_BYTES): LogDestination {
  const queue: string[] = [];
  let queuedBytes = 0;
  let writing = false;
  let dropped = 0;
  let droppedSinceCaughtUp = 0;
  let broken = false;
  const caughtUpListeners: ((dropped: number) => void)[] = [];
  const idleListeners = new Set<() => void>();
  socket.unref();
  socket.on('error', () => {
    broken = true;
    queue.length = 0;
    queuedBytes = 0;
    socket.destroy();
    for (const listener of idleListeners) listener();
  });

  const caughtUp = () => {
    for (const listener of idleListeners) listener();
    if (droppedSinceCaughtUp === 0 || broken) return;
    const count = droppedSinceCaughtUp;
    droppedSinceCaughtUp = 0;
    for (const listener of caughtUpListeners) listener(count);
  };
  const writeNext = () => {
    if (broken || queue.length === 0) {
      writing = false;
      if (!broken) caughtUp();
      return;
    }
    writing = true;
    let chunk = queue.shift()!;
    let chunkBytes = Buffer.byteLength(chunk);
    while (queue.length > 0 && chunkBytes + Buffer.byteLength(queue[0]!) <= ATOMIC_WRITE_BYTES) {
      const line = queue.shift()!;
      chunk += line;
      chunkBytes += Buffer.byteLength(line);
    }
    socket.write(chunk, () => {
      if (broken) return;
      queuedBytes -= chunk.length;
      writeNext();
    });
  };

  return {
    write(line: string) {
      if (broken || queuedBytes + line.length > maxBufferedBytes) {
        dropped += 1;
        if (!broken) droppedSinceCaughtUp += 1;
        return;
      }
      queue.push(line);
      queuedBytes += line.length;
      if (!writing) writeNext();
    },
    dropped: () => dropped,
    onCaughtUp: (listener) => void caughtUpListeners.push(listener),
    flush: (timeoutMs) =>
      new Promise<void>((resolve) => {
        if (broken || !writing) return resolve();
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          idleListeners.delete(done);
          resolve();
        }
        idleListeners.add(done);
      }),
  };
}

/**
 * A pipe's own open file description, non-blocking. Reopening through /proc keeps O_NONBLOCK off the description
 * the other processes of the group share (node sets an inherited stdout pipe back to blocking when it opens
 * process.stdout). Null when that fails (the reader is already gone, or no /proc): then the shared one is used.
 */
function reopenPipe(fd: number): number | null {
  try {
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
}

/** A destination that accepts lines and writes none: stdout was closed or its reader is gone. */
function discardingDestination(): LogDestination {
  let dropped = 0;
  return {
    write: () => void (dropped += 1),
    dropped: () => dropped,
    onCaughtUp: () => undefined,
    flush: async () => undefined,
  };
}

/**
 * A regular file or a terminal: written by pino's own destination. A file takes what is written; a terminal is
 * assumed to be read by the person at it.
 */
function fileDestination(fd: number): LogDestination {
  const stream = sonicBoom({ dest: fd, sync: false, maxLength: LOG_BUFFER_BYTES });
  let dropped = 0;
  stream.on('drop', () => void (dropped += 1));
  return {
    write: (line: string) => void stream.write(line),
    dropped: () => dropped,
    onCaughtUp: () => undefined,
    flush: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        stream.flush(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/** The destination for a descriptor (1 for stdout): non-blocking for pipes and sockets, what suits it otherwise. */
function destinationForFd(fd: number): LogDestination {
  let kind: 'pipe' | 'socket' | 'other';
  try {
    const stat = fstatSync(fd);
    kind = stat.isFIFO() ? 'pipe' : stat.isSocket() ? 'socket' : 'other';
  } catch {
    return discardingDestination();
  }
  if (kind === 'other') return fileDestination(fd);
  const own = (kind === 'pipe' ? reopenPipe(fd) : null) ?? fd;
  return nonBlockingDestination(new Socket({ fd: own, readable: false, writable: true }));
}

let stdout: LogDestination | undefined;

/** This process's stdout as a log destination, made once. */
export function stdoutDestination(): LogDestination {
  stdout ??= destinationForFd(1);
  return stdout;
}

/** How long a process about to exit gives its last log lines to leave. */
const EXIT_LOG_FLUSH_MS = 250;

/** Gives stdout's buffered log lines up to `timeoutMs` to leave; for a process about to exit. */
export function flushLogs(timeoutMs = EXIT_LOG_FLUSH_MS): Promise<void> {
  return stdout?.flush(timeoutMs) ?? Promise.resolve();
}
