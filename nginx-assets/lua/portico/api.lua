-- The configuration API on the loopback status port. Only loopback clients are accepted, whatever the listener.
local cjson = require("cjson.safe")
local store = require("portico.store")
local certs = require("portico.certs")
local init = require("portico.init")

local _M = {}

local function is_loopback(addr)
  return addr == "127.0.0.1" or addr == "::1" or (addr and addr:sub(1, 4) == "127.")
end
_M.is_loopback = is_loopback

local function reply(status, body)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  ngx.say(cjson.encode(body))
  return ngx.exit(status)
end

local function read_json()
  ngx.req.read_body()
  local data = ngx.req.get_body_data()
  if not data then
    local file = ngx.req.get_body_file()
    if file then
      local f = io.open(file, "rb")
      if f then data = f:read("*a"); f:close() end
    end
  end
  if not data then return nil, "empty body" end
  local body, err = cjson.decode(data)
  if type(body) ~= "table" then return nil, "invalid JSON: " .. tostring(err) end
  return body
end

function _M.handle()
  if not is_loopback(ngx.var.remote_addr) then return reply(403, { error = "loopback only" }) end
  local uri, method = ngx.var.uri, ngx.req.get_method()
  if uri == "/portico/config" and method == "GET" then
    return reply(200, { checksum = init.checksum, backendsVersion = store.version(), pid = ngx.worker.pid() })
  elseif uri == "/portico/backends" and method == "GET" then
    return reply(200, store.dump())
  elseif uri == "/portico/backends" and method == "POST" then
    local body, err = read_json()
    if not body then return reply(400, { error = err }) end
    local v, aerr = store.apply(body.upsert, body.remove)
    if not v then return reply(507, { error = aerr }) end
    return reply(200, { version = v })
  elseif uri == "/portico/certificates" and method == "GET" then
    return reply(200, certs.hosts())
  elseif uri == "/portico/certificates" and method == "POST" then
    local body, err = read_json()
    if not body then return reply(400, { error = err }) end
    local v, aerr = certs.apply(body.upsert, body.remove, body.default)
    if not v then return reply(507, { error = aerr }) end
    return reply(200, { version = v })
  end
  return reply(404, { error = "no such endpoint" })
end

return _M
