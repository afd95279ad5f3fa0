import { describe, expect, it } from 'vitest';
import { batchRefusal, MAX_BATCH_MESSAGES } from '../../src/mcp/batches.js';

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
const initialize = (protocolVersion: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion } });

describe('batchRefusal', () => {
  it('never refuses a single message, whatever the version', () => {
    expect(batchRefusal(ping(1), '2025-11-25')).toBeNull();
    expect(batchRefusal({ not: 'json-rpc' }, undefined)).toBeNull();
  });

  it('allows batches on the versions before 2025-06-18 the SDK speaks, and when no version is named (2025-03-26 assumed)', () => {
    for (const version of ['2025-03-26', '2024-11-05', '2024-10-07', undefined]) {
      expect(batchRefusal([ping(1), ping(2)], version), String(version)).toBeNull();
    }
  });

  it('refuses batches on 2025-06-18, later versions and versions it does not know', () => {
    for (const version of ['2025-06-18', '2025-11-25', '2099-01-01', '2025-03-25', 'banana']) {
      expect(batchRefusal([ping(1)], version), version).toMatch(new RegExp(`^Invalid Request: protocol version ${version} does not allow`));
    }
  });

  it("takes an initialize request's protocolVersion over the header, and the header when the param is not a string", () => {
    expect(batchRefusal([initialize('2025-06-18')], '2025-03-26')).toMatch(/protocol version 2025-06-18/);
    expect(batchRefusal([initialize('2025-03-26')], '2025-11-25')).toBeNull();
    expect(batchRefusal([initialize(20250326)], '2025-11-25')).toMatch(/protocol version 2025-11-25/);
  });

  it(`bounds an allowed batch to ${MAX_BATCH_MESSAGES} messages`, () => {
    const batch = (count: number) => Array.from({ length: count }, (_, i) => ping(i));
    expect(batchRefusal(batch(MAX_BATCH_MESSAGES), '2025-03-26')).toBeNull();
    expect(batchRefusal(batch(MAX_BATCH_MESSAGES + 1), '2025-03-26')).toBe(
      `Invalid Request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages; this one holds ${MAX_BATCH_MESSAGES + 1}`,
    );
    expect(batchRefusal([null, 7, 'x'], undefined)).toBeNull();
  });
});
