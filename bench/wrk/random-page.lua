-- Random pages across a network of NETWORK contacts, 50 per page.
local network = tonumber(os.getenv("NETWORK") or "100000")
local key = os.getenv("KEY")
local pages = math.floor(network / 50)
-- ACCEPT_ENCODING (e.g. "gzip, br") asks for the pages compressed.
local accept = os.getenv("ACCEPT_ENCODING")
local headers = { ["Authorization"] = "Bearer " .. key }
if accept and accept ~= "" then headers["Accept-Encoding"] = accept end
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local offset = math.random(0, pages - 1) * 50
  return wrk.format("GET", "/api/v1/contacts?limit=50&offset=" .. offset, headers)
end
