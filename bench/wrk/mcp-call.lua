-- One MCP tool call per request: POST /mcp, tools/call list_contacts for 10 contacts at a random offset of a network
-- of NETWORK contacts, on the protocol revision REVISION: 2025-11-25 (stateless, no initialize) or 2026-07-28 (the
-- request's _meta envelope and the standard headers Mcp-Method and Mcp-Name).
local network = tonumber(os.getenv("NETWORK") or "100000")
local revision = os.getenv("REVISION") or "2025-11-25"
local headers = {
  ["Authorization"] = "Bearer " .. os.getenv("KEY"),
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["MCP-Protocol-Version"] = revision,
}
local meta = ""
if revision == "2026-07-28" then
  headers["Mcp-Method"] = "tools/call"
  headers["Mcp-Name"] = "list_contacts"
  meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
end
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local offset = math.random(0, network - 10)
  local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_contacts","arguments":{"limit":10,"offset":'
    .. offset .. '}' .. meta .. '}}'
  return wrk.format("POST", "/mcp", headers, body)
end
