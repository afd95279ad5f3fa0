-- The hot first page of one network.
local key = os.getenv("KEY")
wrk.headers["Authorization"] = "Bearer " .. key
wrk.path = "/api/v1/contacts?limit=50&offset=0"
-- ACCEPT_ENCODING (e.g. "gzip, br") asks for the page compressed.
local accept = os.getenv("ACCEPT_ENCODING")
if accept and accept ~= "" then wrk.headers["Accept-Encoding"] = accept end
