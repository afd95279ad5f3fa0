/** What `contacts-read-api mcp` (stdio) runs, in one module the command loads when it runs: the MCP SDK is large. */
export { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
export { createMcpServer } from './server.js';
export { answerUnreadableLines } from './unreadable-lines.js';
