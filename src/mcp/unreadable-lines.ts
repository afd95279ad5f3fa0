import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Answers a stdio line that is not a JSON-RPC message, as JSON-RPC 2.0 §5.1 asks: -32700 for a line that is not JSON,
 * -32600 for JSON that is not a message. The SDK's stdio transport reports such a line as an error and drops it, so
 * the client would wait for a reply that never comes.
 */
export function answerUnreadableLines(transport: Transport): void {
  transport.onerror = (error) => {
    const reply =
      error instanceof SyntaxError
        ? { code: -32700, message: 'Parse error: the line is not JSON' }
        : error.name === 'ZodError'
          ? { code: -32600, message: 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message' }
          : null;
    if (reply !== null) void transport.send({ jsonrpc: '2.0', id: null, error: reply } as unknown as JSONRPCMessage);
  };
}
