import { CONTACT_CARDS_PAGE_MAX_BYTES, CONTACT_CARDS_URI } from './contact-cards.js';
import { RESULT_BUDGET_BYTES } from './result-budget.js';

/**
 * What one tool call's answer takes while it is built and kept: its result carries RESULT_BUDGET_BYTES of JSON twice
 * (structured and as text) plus a summary, and is serialized again as a JSON-RPC message (a list_contacts page of
 * 100 answers about 90 KB).
 */
export const CALL_RESERVATION_BYTES = 4 * RESULT_BUDGET_BYTES;
/**
 * The requests that read contacts, each a call: they spend a unit of the key's rate limit (the request's own unit pays
 * for the first) and reserve CALL_RESERVATION_BYTES.
 */
export const METERED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'resources/read', 'resources/list']);
/** initialize, tools/list, ping: answers of a few KB. */
export const OTHER_RESERVATION_BYTES = 16 * 1024;
/** A read of the contact cards page: the page as text, escaped into the JSON-RPC answer, and that answer's bytes. */
export const CARDS_PAGE_RESERVATION_BYTES = 3 * CONTACT_CARDS_PAGE_MAX_BYTES;

/**
 * The bytes a /mcp body's answers may take in memory: one reservation per request message (notifications get no
 * answer), at most a full response plus the one answer being built, since a batch's answers past the response cap
 * are replaced by short refusals.
 */
export function reservationBytes(body: unknown, maxResponseBytes: number): number {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const answers = messages.map(answerReservationBytes);
  const requested = answers.reduce((sum, bytes) => sum + bytes, 0);
  return Math.min(requested, maxResponseBytes + Math.max(0, ...answers));
}

/** What a message's answer may take: nothing for a notification or a response (a message without a method and an id). */
function answerReservationBytes(message: unknown): number {
  const { method, id, params } = (message ?? {}) as { method?: unknown; id?: unknown; params?: { uri?: unknown } };
  if (typeof method !== 'string' || !(typeof id === 'string' || typeof id === 'number')) return 0;
  if (method === 'resources/read' && params?.uri === CONTACT_CARDS_URI) return CARDS_PAGE_RESERVATION_BYTES;
  return METERED_METHODS.has(method) ? CALL_RESERVATION_BYTES : OTHER_RESERVATION_BYTES;
}

/**
 * The MCP work one process holds in memory, in bytes reserved before a request runs and given back when its response
 * has gone: a request that would take the total past the capacity is refused instead of run.
 */
export class InflightBytes {
  private used = 0;

  constructor(readonly capacity: number) {}

  /** Reserves `bytes`, returning the function that gives them back (once), or null when they do not fit now. */
  reserve(bytes: number): (() => void) | null {
    if (this.used + bytes > this.capacity) return null;
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
    };
  }
}
