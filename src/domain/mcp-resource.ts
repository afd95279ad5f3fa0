/** The path agents connect to; its URL under the issuer is the protected resource OAuth tokens are bound to. */
export const MCP_PATH = '/mcp';

/** The MCP revision without sessions or initialize (2026-07-28), which /mcp serves beside the 2025 ones. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** The resource identifier of `/mcp` under `issuer`, the `aud` OAuth access tokens for it carry. */
export function mcpResourceOf(config: { readonly issuer: string }): string {
  return `${config.issuer}${MCP_PATH}`;
}
