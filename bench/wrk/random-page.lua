-- Random pages across a network of NETWORK contacts, 50 per page: no page cache can help.
local network = tonumber(os.getenv("NETWORK") or "100000")
local key = os.getenv("KEY")
local pages = math.floor(network / 50)
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local offset = math.random(0, pages - 1) * 50
  return wrk.format("GET", "/api/v1/contacts?limit=50&offset=" .. offset, { ["Authorization"] = "Bearer " .. key })
end
