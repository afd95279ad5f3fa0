/** The path agents connect to; its URL under the issuer is the protected resource OAuth tokens are bound to. */
export const MCP_PATH = '/mcp';
