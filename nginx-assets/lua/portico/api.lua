-- The configuration API. nginx serves it only on a unix socket inside a directory of mode 0700 (only the
-- controller's user can connect; nginx itself makes the socket 0666, so the directory is the lock), and no TCP
-- listener has a location that reaches this module. As a second guard the handler refuses any connection that
-- did not arrive over a unix socket: a request a tenant gets proxied to a loopback port can never be one.
local cjson = require("cjson.safe")
local store = require("portico.store")
local certs = require("portico.certs")
local shm = require("portico.shm")
local validate = require("portico.validate")
local init = require("portico.init")

local _M = {}

local function over_unix_socket()
  return ngx.var.remote_addr == "unix:"
end
_M.over_unix_socket = over_unix_socket

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

local function post_backends()
  local body, err = read_json()
  if not body then return reply(400, { error = err }) end
  err = validate.backends_body(body)
  if err then return reply(400, { error = err }) end
  local v, aerr = store.apply(body.upsert, body.remove)
  if not v then return reply(507, { error = aerr }) end
  return reply(200, { version = v })
end

-- Backends, plugins, consumers and routes in one version: a route never becomes visible before the backend or
-- the plugins it names.
local function post_data()
  local body, err = read_json()
  if not body then return reply(400, { error = err }) end
  err = validate.data_body(body)
  if err then return reply(400, { error = err }) end
  local b, r, p, k = body.backends or {}, body.routes or {}, body.plugins or {}, body.consumers or {}
  local v, aerr = store.apply_all({
    b = { upsert = b.upsert, remove = b.remove },
    r = { upsert = r.upsert, remove = r.remove },
    p = { upsert = p.upsert, remove = p.remove },
    k = { upsert = k.upsert, remove = k.remove },
  })
  -- A full push (start, restart) decodes megabytes into tables that are garbage a moment later: collect them now
  -- rather than leave this worker's heap at its peak until the collector gets round to it.
  local big = (tonumber(ngx.var.content_length) or 0) > 1024 * 1024
  body, b, r, p, k = nil, nil, nil, nil, nil
  if big then collectgarbage() end
  if not v then return reply(507, { error = aerr }) end
  return reply(200, { version = v })
end

local function post_certificates()
  local body, err = read_json()
  if not body then return reply(400, { error = err }) end
  err = validate.certificates_body(body)
  if err then return reply(400, { error = err }) end
  local client
  if body.clientCas ~= nil or body.clientHosts ~= nil or body.clientRemove ~= nil then
    client = { cas = body.clientCas, hosts = body.clientHosts, remove = body.clientRemove }
  end
  local v, aerr, missed = certs.apply(body.certificates, body.hosts, body.remove, body.default, client)
  if not v then return reply(507, { error = aerr }) end
  -- A full zone refuses some certificates, never the others: applied and published, with what is missing (the
  -- controller sends those again, and pushes routes and backends meanwhile).
  if aerr then return reply(200, { version = v, error = aerr, notStored = missed }) end
  return reply(200, { version = v })
end

-- Consumers as GET /portico/consumers shows them: names, user names and counts — never a key or password hash.
-- (lua-cjson encodes an empty list as {}.)
local function consumers_summary()
  local out = {}
  for ns, set in pairs(store.dump("k")) do
    local list = {}
    for i, c in ipairs(type(set) == "table" and set.consumers or {}) do
      local users = {}
      for j, b in ipairs(c.basic or {}) do users[j] = b.username end
      list[i] = {
        name = c.name,
        username = c.username,
        keys = #(c.keys or {}),
        basic = users,
        plugins = c.plugins,
      }
    end
    out[ns] = { consumers = list }
  end
  return out
end

local routes = {
  ["/portico/config"] = {
    GET = function()
      return reply(200, {
        checksum = init.checksum,
        backendsVersion = store.version(),
        pid = ngx.worker.pid(),
        epochs = shm.epochs(),
        dictFailures = shm.failures(),
        rejectedEndpoints = shm.get_count("rejected_endpoints"),
        tracingDropped = shm.get_count("drop:tracing"),
        -- Requests whose rate-limit (policy redis) could not ask Redis: let through / answered 503.
        rateLimitStoreFailures = { open = shm.get_count("grl:open"), closed = shm.get_count("grl:closed") },
      })
    end,
  },
  ["/portico/backends"] = {
    GET = function() return reply(200, store.dump("b")) end,
    POST = post_backends,
  },
  ["/portico/routes"] = {
    GET = function() return reply(200, store.dump("r")) end,
  },
  ["/portico/plugins"] = {
    GET = function() return reply(200, store.dump("p")) end,
  },
  ["/portico/consumers"] = {
    GET = function() return reply(200, consumers_summary()) end,
  },
  ["/portico/data"] = {
    POST = post_data,
  },
  ["/portico/certificates"] = {
    GET = function() return reply(200, certs.hosts()) end,
    POST = post_certificates,
  },
}

function _M.handle()
  if not over_unix_socket() then return reply(403, { error = "the configuration API is served on its unix socket only" }) end
  local route = routes[ngx.var.uri]
  if not route then return reply(404, { error = "no such endpoint" }) end
  local handler = route[ngx.req.get_method()]
  if not handler then return reply(405, { error = "method not allowed" }) end
  return handler()
end

return _M
