-- Random pages across a network of NETWORK contacts, 50 per page; with ORDER=sequential, every page in order, round
-- after round (the bench's warm-up: connections spread the pages over the service's workers).
local network = tonumber(os.getenv("NETWORK") or "100000")
local key = os.getenv("KEY")
local pages = math.floor(network / 50)
local sequential = os.getenv("ORDER") == "sequential"
-- ACCEPT_ENCODING (e.g. "gzip, br") asks for the pages compressed.
local accept = os.getenv("ACCEPT_ENCODING")
local headers = { ["Authorization"] = "Bearer " .. key }
if accept and accept ~= "" then headers["Accept-Encoding"] = accept end
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local sent = 0
request = function()
  local page = sequential and sent % pages or math.random(0, pages - 1)
  sent = sent + 1
  return wrk.format("GET", "/api/v1/contacts?limit=50&offset=" .. page * 50, headers)
end
