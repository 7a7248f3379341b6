-- Unit tests for portico.api with a mocked ngx: only unix-socket connections are served, malformed input is
-- refused before anything is stored, and GET /portico/config reports the shared-memory counters.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local cjson = require("cjson.safe")
local R = mock.reporter()

local T = mock.fresh()
require("portico.init").init({ checksum = "abc", unavailable = "unix:/run/u.sock" })
local api = require("portico.api")
local store = require("portico.store")

local function call(method, uri, body, remote)
  T.said = {}
  T.exited = nil
  T.ngx.status = 0
  T.method = method
  T.body = body
  T.ngx.var.uri = uri
  T.ngx.var.remote_addr = remote or "unix:"
  api.handle()
  return T.ngx.status, cjson.decode(T.said[1] or "null")
end

local pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
local key = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"
local ID = string.rep("ab", 32)
local good = cjson.encode({ upsert = { ["ns_web_80"] = { balance = "round_robin", endpoints = { { address = "10.0.0.1", port = 8080, weight = 1 } } } } })

do
  for _, remote in ipairs({ "127.0.0.1", "::1", "10.0.0.5", "" }) do
    local st = call("POST", "/portico/backends", good, remote)
    R.check("a TCP client (" .. (remote == "" and "empty" or remote) .. ") is refused", st == 403, st)
  end
  R.check("…and nothing was stored", store.version() == 0 and T.ngx.shared.portico_data:get("b:ns_web_80") == nil)
  local st = call("GET", "/portico/config", nil, "127.0.0.1")
  R.check("even reading the configuration over TCP is refused", st == 403, st)
end

do
  local st, b = call("POST", "/portico/backends", good)
  R.check("a valid update over the unix socket is applied", st == 200 and b.version == 1, st)
  st, b = call("GET", "/portico/config")
  R.check("GET /portico/config reports checksum and version", st == 200 and b.checksum == "abc" and b.backendsVersion == 1)
  R.check("…the shared-memory failure counters", b.dictFailures and b.dictFailures.data == 0 and b.dictFailures.certs == 0, cjson.encode(b.dictFailures))
  R.check("…the refused-endpoint counter", b.rejectedEndpoints == 0)
  R.check("…and one epoch per zone", type(b.epochs) == "table" and #b.epochs.data == 16 and #b.epochs.certs == 16, cjson.encode(b.epochs))
  st = call("DELETE", "/portico/backends")
  R.check("unknown method → 405", st == 405, st)
  st = call("GET", "/portico/secrets")
  R.check("unknown path → 404", st == 404, st)
end

do
  local bad = {
    ["not JSON"] = "{",
    ["not an object"] = "[1,2]",
    ["upsert not an object"] = cjson.encode({ upsert = "x" }),
    ["id with a slash"] = cjson.encode({ upsert = { ["a/b"] = { endpoints = {} } } }),
    ["endpoints not an array"] = '{"upsert":{"x":{"endpoints":{"a":1}}}}',
    ["port 0"] = cjson.encode({ upsert = { x = { endpoints = { { address = "10.0.0.1", port = 0 } } } } }),
    ["port as string"] = cjson.encode({ upsert = { x = { endpoints = { { address = "10.0.0.1", port = "80" } } } } }),
    ["fractional port"] = cjson.encode({ upsert = { x = { endpoints = { { address = "10.0.0.1", port = 80.5 } } } } }),
    ["unknown algorithm"] = cjson.encode({ upsert = { x = { endpoints = {}, balance = "random" } } }),
    ["hashBy not a variable"] = cjson.encode({ upsert = { x = { endpoints = {}, hashBy = "request_uri; x" } } }),
    ["cookie name with a header break"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a\r\nSet-Cookie: evil=1" } } } }),
    ["cookie name with ;"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a;b" } } } }),
    ["cookie path with ;"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", path = "/a;Domain=x" } } } }),
    ["cookie path with a header break"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", path = "/a\r\nX: 1" } } } }),
    ["cookie path with a quote"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", path = "/a\"b" } } } }),
    ["cookie domain with ;"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", domain = "a.example;x" } } } }),
    ["cookie domain with NUL"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", domain = "a\0b" } } } }),
    ["cookie sameSite not Strict/Lax/None"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", sameSite = "Lax; Secure" } } } }),
    ["cookie expiresSeconds not a number"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", expiresSeconds = "1; x" } } } }),
    ["cookie secure not a boolean"] = cjson.encode({ upsert = { x = { endpoints = {}, cookie = { name = "a", secure = "true" } } } }),
    ["canary to a bad id"] = cjson.encode({ upsert = { x = { endpoints = {}, canary = { backendId = "../y", weight = 1 } } } }),
    ["remove not an array"] = cjson.encode({ remove = "x" }),
  }
  for name, body in pairs(bad) do
    local st, b = call("POST", "/portico/backends", body)
    R.check("backends: " .. name .. " → 400", st == 400 and b and b.error, st)
  end
  R.check("no refused request changed the data", store.version() == 1)
end

do
  local bad = {
    ["short certificate id"] = cjson.encode({ certificates = { abc = { cert = pem, key = key } } }),
    ["not PEM"] = cjson.encode({ certificates = { [ID] = { cert = "x", key = key } } }),
    -- What one Secret may take of the shared zone is bounded (the controller sends only re-encoded certificates).
    ["a certificate padded to 900 KB"] = cjson.encode({ certificates = { [ID] = { cert = pem .. string.rep("#", 900 * 1024), key = key } } }),
    ["a chain of 11 certificates"] = cjson.encode({ certificates = { [ID] = { cert = string.rep(pem, 11), key = key } } }),
    ["text between the certificates"] = cjson.encode({ certificates = { [ID] = { cert = pem .. "subject=CN = x\n" .. pem, key = key } } }),
    ["a block of another type in the chain"] = cjson.encode({ certificates = { [ID] = { cert = pem .. key, key = key } } }),
    ["a key of 21 KiB"] = cjson.encode({ certificates = { [ID] = { cert = pem, key = "-----BEGIN PRIVATE KEY-----\n" .. string.rep("A", 21 * 1024) .. "\n-----END PRIVATE KEY-----\n" } } }),
    ["a certificate as the key"] = cjson.encode({ certificates = { [ID] = { cert = pem, key = pem } } }),
    ["host with a space"] = cjson.encode({ hosts = { ["a b.example.com"] = ID } }),
    ["host with two wildcards"] = cjson.encode({ hosts = { ["*.*.example.com"] = ID } }),
    ["the default as a host"] = cjson.encode({ hosts = { ["__default__"] = ID } }),
    ["default not an id"] = cjson.encode({ default = "x" }),
  }
  for name, body in pairs(bad) do
    local st = call("POST", "/portico/certificates", body)
    R.check("certificates: " .. name .. " → 400", st == 400, st)
  end
  local st, b = call("POST", "/portico/certificates", cjson.encode({ certificates = { [ID] = { cert = string.rep(pem, 10), key = key, source = "ns/s" } }, hosts = { ["a.example.com"] = ID } }))
  R.check("a valid certificate update is applied", st == 200 and b.version == 1, st)
  st, b = call("GET", "/portico/certificates")
  R.check("…and listed by host", st == 200 and b["a.example.com"] == "ns/s")
end

R.done()
