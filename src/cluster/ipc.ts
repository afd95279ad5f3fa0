import cluster, { type Worker } from 'node:cluster';

/**
 * What a worker asks the primary for: a rate-limit hit counted across all workers, a look at one count without counting,
 * or every worker's metrics.
 */
export type PrimaryRequest =
  { kind: 'rate-limit-hit'; key: string; limit?: number } | { kind: 'rate-limit-peek'; key: string } | { kind: 'metrics' };

interface RequestMessage {
  channel: 'contacts-api';
  id: number;
  request: PrimaryRequest;
}

interface ReplyMessage {
  channel: 'contacts-api';
  id: number;
  result?: unknown;
  error?: string;
}

const REPLY_TIMEOUT_MS = 2000;
const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
let nextId = 0;
let listening = false;

/** Sends a request to the primary and waits for its answer (a worker only). */
export function askPrimary<T>(request: PrimaryRequest): Promise<T> {
  if (!listening) {
    listening = true;
    process.on('message', (message: ReplyMessage) => {
      if (message?.channel !== 'contacts-api') return;
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      clearTimeout(waiting.timer);
      if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    });
  }
  const id = (nextId += 1);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`the primary did not answer ${request.kind} in time`));
    }, REPLY_TIMEOUT_MS).unref();
    pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
    process.send!({ channel: 'contacts-api', id, request } satisfies RequestMessage);
  });
}

/** Answers the workers' requests (the primary only). */
export function answerWorkers(handle: (request: PrimaryRequest) => Promise<unknown>): void {
  cluster.on('message', (worker: Worker, message: RequestMessage) => {
    if (message?.channel !== 'contacts-api') return;
    handle(message.request).then(
      (result) => worker.isConnected() && worker.send({ channel: 'contacts-api', id: message.id, result } satisfies ReplyMessage),
      (error: Error) =>
        worker.isConnected() && worker.send({ channel: 'contacts-api', id: message.id, error: error.message } satisfies ReplyMessage),
    );
  });
}
