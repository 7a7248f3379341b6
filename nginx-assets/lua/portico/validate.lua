-- Shapes of what the configuration API accepts. The controller sends only validated data; this is the boundary
-- check on the nginx side: anything malformed is refused as a whole (400) before a byte is stored. Fields the
-- Lua side does not use are ignored. Each function returns nil when the value is fine, else a message.
local cjson = require("cjson.safe")

local _M = {}

local function is_array(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" then return false end
    n = n + 1
  end
  return n == #t
end

local function is_int(v, min, max)
  return type(v) == "number" and v % 1 == 0 and v >= min and v <= max
end

local function str(v, max, pattern)
  return type(v) == "string" and #v > 0 and #v <= max and (not pattern or v:match(pattern) ~= nil)
end

local ID = "^[a-z0-9][a-z0-9_.-]*$"
-- RFC 6265 cookie-name token: it is written into a Set-Cookie header, so nothing that could end the header.
local TOKEN = "^[%w!#%$%%&'%*%+%.%^_`|~%-]+$"
local ALGORITHMS = { round_robin = true, ewma = true, chash = true, cookie = true }

function _M.backend_id(id)
  if not str(id, 512, ID) then return "invalid backend id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

local function endpoint(e, i)
  if type(e) ~= "table" then return "endpoint " .. i .. " is not an object" end
  if not str(e.address, 64) then return "endpoint " .. i .. ": address must be a string" end
  if not is_int(e.port, 1, 65535) then return "endpoint " .. i .. ": port must be 1-65535" end
  if e.weight ~= nil and not is_int(e.weight, 0, 1000000) then return "endpoint " .. i .. ": invalid weight" end
end

local function canary(c)
  if type(c) ~= "table" then return "canary must be an object" end
  local err = _M.backend_id(c.backendId)
  if err then return "canary: " .. err end
  if not is_int(c.weight or 0, 0, 1000000) or not is_int(c.weightTotal or 100, 1, 1000000) then return "canary: invalid weight" end
  if c.header ~= nil and not str(c.header, 256, "^[%w%-_]+$") then return "canary: invalid header name" end
  if c.headerValue ~= nil and not str(c.headerValue, 1024) then return "canary: invalid header value" end
  if c.headerPattern ~= nil and not str(c.headerPattern, 1024) then return "canary: invalid header pattern" end
  if c.cookie ~= nil and not str(c.cookie, 256, TOKEN) then return "canary: invalid cookie name" end
end

function _M.backend(id, b)
  local err = _M.backend_id(id)
  if err then return err end
  if type(b) ~= "table" then return "backend " .. id .. " is not an object" end
  if not is_array(b.endpoints) then return "backend " .. id .. ": endpoints must be an array" end
  for i, e in ipairs(b.endpoints) do
    err = endpoint(e, i)
    if err then return "backend " .. id .. ": " .. err end
  end
  if b.balance ~= nil and not ALGORITHMS[b.balance] then return "backend " .. id .. ": unknown balance " .. tostring(b.balance) end
  if b.hashBy ~= nil and not str(b.hashBy, 128, "^%$[%a_][%w_]*$") then return "backend " .. id .. ": hashBy must be an nginx variable" end
  if b.canary ~= nil then
    err = canary(b.canary)
    if err then return "backend " .. id .. ": " .. err end
  end
  if b.cookie ~= nil then
    local c = b.cookie
    if type(c) ~= "table" then return "backend " .. id .. ": cookie must be an object" end
    if c.name ~= nil and not str(c.name, 256, TOKEN) then return "backend " .. id .. ": invalid cookie name" end
    if c.maxAgeSeconds ~= nil and not is_int(c.maxAgeSeconds, 0, 1e10) then return "backend " .. id .. ": invalid cookie maxAgeSeconds" end
    if c.mode ~= nil and c.mode ~= "balanced" and c.mode ~= "persistent" then return "backend " .. id .. ": invalid cookie mode" end
  end
  if b.unavailableReason ~= nil and not str(b.unavailableReason, 2048) then return "backend " .. id .. ": invalid unavailableReason" end
end

local CERT_ID = "^%x+$"
local HOST = "^[%*]?[a-z0-9.-]+$"
local MATCH = { exact = true, prefix = true, regex = true }
local ACTIONS = { not_found = true, unavailable = true }
local PROFILE = "^p_[a-z0-9]+$"

local function cert_id(id)
  if not str(id, 64, CERT_ID) or #id < 16 then return "invalid certificate id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

local function host(h)
  if not str(h, 253, HOST) or h:find("*", 2, true) or (h:sub(1, 1) == "*" and h:sub(2, 2) ~= ".") then
    return "invalid host " .. cjson.encode(tostring(h):sub(1, 80))
  end
end

-- "_" (rules without host) or a host name.
local function route_host(h)
  if h == "_" then return nil end
  return host(h)
end

local function timeout(v) return type(v) == "number" and v > 0 and v <= 1e6 end

local function route(r)
  if type(r) ~= "table" then return "route is not an object" end
  if r.backendId ~= nil and r.backendId ~= cjson.null then
    local err = _M.backend_id(r.backendId)
    if err then return err end
  end
  if r.action ~= nil and not ACTIONS[r.action] then return "unknown action " .. tostring(r.action) end
  if r.sslRedirect ~= nil and type(r.sslRedirect) ~= "boolean" then return "sslRedirect must be a boolean" end
  if r.profile ~= nil and not str(r.profile, 64, PROFILE) then return "invalid profile name" end
  if r.maxBodyBytes ~= nil and not is_int(r.maxBodyBytes, 0, 2 ^ 53) then return "invalid maxBodyBytes" end
  if r.timeouts ~= nil then
    local t = r.timeouts
    if type(t) ~= "table" or not timeout(t.connect) or not timeout(t.send) or not timeout(t.read) then return "invalid timeouts" end
  end
end

-- { tls, rules = [ { path, match, route } ] }
function _M.host_routes(h, v)
  local err = route_host(h)
  if err then return err end
  if type(v) ~= "table" then return "routes of " .. h .. " are not an object" end
  if v.tls ~= nil and type(v.tls) ~= "boolean" then return "routes of " .. h .. ": tls must be a boolean" end
  if not is_array(v.rules) then return "routes of " .. h .. ": rules must be an array" end
  for i, rule in ipairs(v.rules) do
    if type(rule) ~= "table" or not MATCH[rule.match] then return "routes of " .. h .. ": rule " .. i .. ": invalid match" end
    if not str(rule.path, 4096) or (rule.match ~= "regex" and rule.path:sub(1, 1) ~= "/") then
      return "routes of " .. h .. ": rule " .. i .. ": invalid path"
    end
    err = route(rule.route)
    if err then return "routes of " .. h .. ": rule " .. i .. ": " .. err end
  end
end

-- { upsert?: {id: value}, remove?: [id] }, each upserted value checked by each(id, v), each removed id by key(id).
-- what: where it sits in the body ("backends"), or nil for the body itself.
local function upsert_remove(x, what, each, key)
  if x == nil then return nil end
  local at = what and (what .. ".") or ""
  if type(x) ~= "table" or #x > 0 then return (what or "the body") .. " must be " .. (what and "an object" or "a JSON object") end
  if x.upsert ~= nil then
    if type(x.upsert) ~= "table" then return at .. "upsert must be an object" end
    for id, v in pairs(x.upsert) do
      local err = each(id, v)
      if err then return err end
    end
  end
  if x.remove ~= nil then
    if not is_array(x.remove) then return at .. "remove must be an array" end
    for _, id in ipairs(x.remove) do
      local err = key(id)
      if err then return err end
    end
  end
end

-- {upsert?: {id: backend}, remove?: [id]}
function _M.backends_body(body)
  return upsert_remove(body, nil, _M.backend, _M.backend_id)
end

-- { backends?: {upsert?, remove?}, routes?: {upsert?, remove?} }
function _M.data_body(body)
  if #body > 0 then return "the body must be a JSON object" end
  return upsert_remove(body.backends, "backends", _M.backend, _M.backend_id)
    or upsert_remove(body.routes, "routes", _M.host_routes, route_host)
end

local function pem(v)
  return str(v, 1024 * 1024) and v:find("-----BEGIN ", 1, true) ~= nil
end

-- {certificates?: {id: {cert, key, source}}, hosts?: {host: id}, remove?: [host], default?: id | null}
function _M.certificates_body(body)
  if #body > 0 then return "the body must be a JSON object" end
  if body.certificates ~= nil then
    if type(body.certificates) ~= "table" then return "certificates must be an object" end
    for id, c in pairs(body.certificates) do
      local err = cert_id(id)
      if err then return err end
      if type(c) ~= "table" or not pem(c.cert) or not pem(c.key) then return "certificate " .. id .. ": cert and key must be PEM" end
      if c.source ~= nil and not str(c.source, 512) then return "certificate " .. id .. ": invalid source" end
    end
  end
  if body.hosts ~= nil then
    if type(body.hosts) ~= "table" then return "hosts must be an object" end
    for h, id in pairs(body.hosts) do
      local err = host(h) or cert_id(id)
      if err then return err end
    end
  end
  if body.remove ~= nil then
    if not is_array(body.remove) then return "remove must be an array" end
    for _, h in ipairs(body.remove) do
      local err = host(h)
      if err then return err end
    end
  end
  if body.default ~= nil and body.default ~= cjson.null then
    local err = cert_id(body.default)
    if err then return "default: " .. err end
  end
end

return _M
