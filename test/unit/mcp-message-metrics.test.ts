import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { mcpMessageCounter } from '../../src/mcp/message-metrics.js';

/** The counter's samples as `method tool` → count. */
async function samples(counter: Counter<'method' | 'tool'>): Promise<Record<string, number>> {
  const { values } = await counter.get();
  return Object.fromEntries(values.map(({ labels, value }) => [`${labels.method} ${labels.tool}`, value]));
}

describe('mcpMessageCounter', () => {
  const counterIn = () =>
    new Counter({ name: 'mcp_requests_total', help: 'test', labelNames: ['method', 'tool'] as const, registers: [new Registry()] });
  const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } });

  it('reads a 2026-07-28 request from its checked headers, a base64 Mcp-Name decoded', async () => {
    const counter = counterIn();
    const count = mcpMessageCounter(counter);
    const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
    count({ ...modern, 'mcp-name': 'search_contacts' }, call(1, 'search_contacts'));
    count({ ...modern, 'mcp-name': `=?base64?${Buffer.from('list_changes').toString('base64')}?=` }, call(2, 'list_changes'));
    expect(await samples(counter)).toEqual({ 'tools/call search_contacts': 1, 'tools/call list_changes': 1 });
  });

  it('reads any other request from its body: a 2025 batch is counted message by message, whatever its headers say', async () => {
    const counter = counterIn();
    const count = mcpMessageCounter(counter);
    const batch = [call(1, 'list_contacts'), call(2, 'list_contacts'), { jsonrpc: '2.0', method: 'notifications/initialized' }];
    count({ 'mcp-protocol-version': '2025-03-26', 'mcp-method': 'ping' }, batch);
    expect(await samples(counter)).toEqual({ 'tools/call list_contacts': 2 });
  });
});
