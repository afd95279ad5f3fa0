-- The change feed, 100 changes per request, from positions spread over the whole log (one token per line in TOKENS_FILE).
local key = os.getenv("KEY")
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do
  tokens[#tokens + 1] = line
end
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local since = tokens[math.random(1, #tokens)]
  return wrk.format("GET", "/api/v1/contacts/changes?limit=100&since=" .. since, { ["Authorization"] = "Bearer " .. key })
end
