import { describe, expect, it } from 'vitest';
import { CONTACT_CARDS_PAGE_MAX_BYTES, CONTACT_CARDS_URI } from '../../src/mcp/contact-cards.js';
import {
  CALL_RESERVATION_BYTES,
  CARDS_PAGE_RESERVATION_BYTES,
  InflightBytes,
  OTHER_RESERVATION_BYTES,
  reservationBytes,
} from '../../src/mcp/inflight-bytes.js';

const MAX_RESPONSE = 1024 * 1024;
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_contacts', arguments: {} } });

describe('reservationBytes', () => {
  it('reserves a result per call (tools/call, resources/read, resources/list), a small answer per other request, nothing for a notification', () => {
    expect(reservationBytes(call(1), MAX_RESPONSE)).toBe(CALL_RESERVATION_BYTES);
    expect(reservationBytes({ jsonrpc: '2.0', id: 1, method: 'ping' }, MAX_RESPONSE)).toBe(OTHER_RESERVATION_BYTES);
    expect(
      reservationBytes({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'contacts://contact/x' } }, MAX_RESPONSE),
    ).toBe(CALL_RESERVATION_BYTES);
    expect(reservationBytes({ jsonrpc: '2.0', id: 1, method: 'resources/list' }, MAX_RESPONSE)).toBe(CALL_RESERVATION_BYTES);
    expect(reservationBytes({ jsonrpc: '2.0', method: 'notifications/initialized' }, MAX_RESPONSE)).toBe(0);
    expect(reservationBytes([call(1), { jsonrpc: '2.0', id: 2, method: 'tools/list' }], MAX_RESPONSE)).toBe(
      CALL_RESERVATION_BYTES + OTHER_RESERVATION_BYTES,
    );
  });

  it('reserves the contact cards page’s read as the page held three times (text, JSON-RPC answer, bytes)', () => {
    const read = { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: CONTACT_CARDS_URI } };
    expect(reservationBytes(read, MAX_RESPONSE)).toBe(CARDS_PAGE_RESERVATION_BYTES);
    expect(CARDS_PAGE_RESERVATION_BYTES).toBe(3 * CONTACT_CARDS_PAGE_MAX_BYTES);
  });

  it('reserves at most a whole response and the answer being built, however many calls a batch holds', () => {
    const batch = Array.from({ length: 20 }, (_, index) => call(index + 1));
    expect(reservationBytes(batch, MAX_RESPONSE)).toBe(MAX_RESPONSE + CALL_RESERVATION_BYTES);
  });
});

describe('InflightBytes', () => {
  it('refuses what would pass the capacity, and gives back each reservation once', () => {
    const inflight = new InflightBytes(100);
    const first = inflight.reserve(60)!;
    expect(inflight.reserve(41)).toBeNull();
    const second = inflight.reserve(40)!;
    first();
    first();
    expect(inflight.reserve(61)).toBeNull();
    expect(inflight.reserve(60)).not.toBeNull();
    second();
  });
});
