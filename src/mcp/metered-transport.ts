import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { INTERNAL_ERROR_MESSAGE } from '../domain/errors.js';
import { METERED_METHODS } from './inflight-bytes.js';
import { RATE_LIMIT_EXCEEDED_MESSAGE } from '../domain/rate-limit.js';

export const RESPONSE_TOO_LARGE_MESSAGE = 'Response size limit reached';
/** JSON-RPC's range for server-defined errors; only requests other than tools/call get refusals in this form. */
const REFUSED_CODE = -32000;

/** Whether a tool call may run now; a refusal says when the key's window ends. */
export type ToolCallAdmission = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface MeteringOptions {
  /** Most bytes the HTTP response may hold: a single response, or a batch's array of them. */
  maxResponseBytes: number;
  /** Asked before each request of METERED_METHODS runs, so every call of a batch spends the key's rate limit. */
  admitToolCall: () => Promise<ToolCallAdmission>;
}

type Dispatch = NonNullable<Transport['onmessage']>;

/**
 * Wraps the transport of one hosted /mcp request so that a batch costs what its calls cost. Its JSON-RPC
 * requests run one at a time, in order, so memory holds at most one result being built besides the answers
 * kept; each call (METERED_METHODS) is admitted by the rate limit before it runs; and the answers together stay within
 * maxResponseBytes: the first result that would not fit, and every request after it, get a short refusal
 * instead (room for those refusals is kept back, so the cap holds however the batch ends). Only 2025-era requests
 * come through it: batches exist only there; a 2026-07-28 request holds one message, paid by the request's own unit.
 */
export class MeteredTransport implements Transport {
  private queue: Promise<void> = Promise.resolve();
  /** Bytes of the response so far, counted as a batch's array: `[`, then each answer and its `,` or `]`. */
  private spent = 1;
  /** Bytes the refusals of the requests still queued would take. */
  private reserved = 0;
  private full = false;
  private closed = false;
  private running: { request: JSONRPCRequest; answered: () => void } | undefined;
  /** Kept unwrapped, so a handler that chains to the previous one (as Protocol.connect does) is queued once, not twice. */
  private dispatch: Dispatch | undefined;

  constructor(
    private readonly inner: Transport,
    private readonly options: MeteringOptions,
  ) {}

  set onmessage(dispatch: Dispatch | undefined) {
    this.dispatch = dispatch;
    this.inner.onmessage = dispatch && ((message, extra) => this.receive(message, extra, dispatch));
  }
  get onmessage(): Dispatch | undefined {
    return this.dispatch;
  }
  set onclose(handler: (() => void) | undefined) {
    this.inner.onclose = handler;
  }
  get onclose(): (() => void) | undefined {
    return this.inner.onclose;
  }
  set onerror(handler: ((error: Error) => void) | undefined) {
    this.inner.onerror = handler;
  }
  get onerror(): ((error: Error) => void) | undefined {
    return this.inner.onerror;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  /** The legacy transport checks the MCP-Protocol-Version header against the server's versions, passed on here. */
  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.running?.answered();
    await this.inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const running = this.running;
    if (!isResponse(message) || running === undefined || running.request.id !== message.id) return this.inner.send(message, options);
    const { request, answered } = running;
    const bytes = byteLength(message) + 1;
    let answer: JSONRPCMessage = message;
    if (this.spent + bytes + this.reserved <= this.options.maxResponseBytes) {
      this.spent += bytes;
    } else {
      this.full = true;
      answer = this.refusal(request, tooLargeText(this.options.maxResponseBytes));
    }
    answered();
    return this.inner.send(answer, options);
  }

  private receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined, dispatch: Dispatch): void {
    if (!isJSONRPCRequest(message)) return dispatch(message, extra);
    const reserve = this.largestRefusalBytes(message);
    this.reserved += reserve;
    this.queue = this.queue
      .then(async () => {
        this.reserved -= reserve;
        await this.run(message, extra, dispatch);
      })
      // Whatever failed, the requests queued behind this one still get their turn.
      .catch((error: unknown) => this.report(error));
  }

  private async run(request: JSONRPCRequest, extra: MessageExtraInfo | undefined, dispatch: Dispatch): Promise<void> {
    try {
      // A call's reads may be synchronous (SQLite): chained as promises, a batch's calls would run back to back and hold
      // every other request of the process, health probes included, until the whole batch is done.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.closed) return;
      if (this.full) return await this.refuse(request, tooLargeText(this.options.maxResponseBytes));
      if (METERED_METHODS.has(request.method)) {
        const admission = await this.options.admitToolCall();
        if (!admission.allowed) return await this.refuse(request, rateLimitedText(admission.retryAfterSeconds));
      }
      await new Promise<void>((answered) => {
        this.running = { request, answered };
        dispatch(request, extra);
      });
    } catch (error) {
      this.report(error);
      if (!this.closed) await this.refuse(request, INTERNAL_ERROR_MESSAGE);
    } finally {
      this.running = undefined;
    }
  }

  private report(error: unknown): void {
    this.inner.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  /** Answers without running; the room for it was kept back, so it never pushes the response past the cap. */
  private async refuse(request: JSONRPCRequest, text: string): Promise<void> {
    const answer = this.refusal(request, text);
    this.spent += byteLength(answer) + 1;
    await this.inner.send(answer, { relatedRequestId: request.id });
  }

  private refusal(request: JSONRPCRequest, text: string): JSONRPCMessage {
    return refusalOf(request, text);
  }

  private largestRefusalBytes(request: JSONRPCRequest): number {
    const texts = [tooLargeText(this.options.maxResponseBytes), rateLimitedText(999), INTERNAL_ERROR_MESSAGE];
    return Math.max(...texts.map((text) => byteLength(this.refusal(request, text)) + 1));
  }
}

/** A tool call is refused with a tool error, which the model reads and can act on; other requests with a JSON-RPC error. */
function refusalOf(request: Pick<JSONRPCRequest, 'id' | 'method'>, text: string): JSONRPCMessage {
  if (request.method === 'tools/call') {
    return { jsonrpc: '2.0', id: request.id, result: { isError: true, content: [{ type: 'text', text }] } };
  }
  return { jsonrpc: '2.0', id: request.id, error: { code: REFUSED_CODE, message: text } };
}

/** The answer a request gets in place of one past `maxResponseBytes` (the 2026-07-28 path, whose request is one message). */
export function tooLargeRefusal(request: Pick<JSONRPCRequest, 'id' | 'method'>, maxResponseBytes: number): JSONRPCMessage {
  return refusalOf(request, tooLargeText(maxResponseBytes));
}

function tooLargeText(maxResponseBytes: number): string {
  return (
    `${RESPONSE_TOO_LARGE_MESSAGE}: one /mcp response holds at most ${maxResponseBytes} bytes and this call's result ` +
    'did not fit; send the call in a request of its own, or ask for fewer contacts (a smaller limit)'
  );
}

function rateLimitedText(retryAfterSeconds: number): string {
  return `${RATE_LIMIT_EXCEEDED_MESSAGE}: retry after ${retryAfterSeconds} seconds`;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCResultResponse | JSONRPCErrorResponse {
  return isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
}

function byteLength(message: JSONRPCMessage): number {
  return Buffer.byteLength(JSON.stringify(message));
}
