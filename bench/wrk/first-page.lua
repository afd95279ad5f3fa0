-- The hot first page of one network.
local key = os.getenv("KEY")
wrk.headers["Authorization"] = "Bearer " .. key
wrk.path = "/api/v1/contacts?limit=50&offset=0"
