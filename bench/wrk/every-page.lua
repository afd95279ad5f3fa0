-- Warm-up: every page of a network of NETWORK contacts, 50 per page (the pages random-page.lua asks for), in order,
-- round after round. Connections spread the pages over the service's workers.
local network = tonumber(os.getenv("NETWORK") or "100000")
local key = os.getenv("KEY")
local pages = math.floor(network / 50)
local accept = os.getenv("ACCEPT_ENCODING")
local headers = { ["Authorization"] = "Bearer " .. key }
if accept and accept ~= "" then headers["Accept-Encoding"] = accept end
local sent = 0
request = function()
  local offset = (sent % pages) * 50
  sent = sent + 1
  return wrk.format("GET", "/api/v1/contacts?limit=50&offset=" .. offset, headers)
end
