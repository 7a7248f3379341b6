-- Shapes of what the configuration API accepts. The controller sends only validated data; this is the boundary
-- check on the nginx side: anything malformed is refused as a whole (400) before a byte is stored. Fields the
-- Lua side does not use are ignored. Each function returns nil when the value is fine, else a message.
local cjson = require("cjson.safe")
local C = require("portico.check")
local peers = require("portico.peers")
local crypto = require("portico.plugins.crypto")
local registry = require("portico.plugins.registry")

local _M = {}

local is_array, is_int, str, array_of, compiles, timeout = C.is_array, C.is_int, C.str, C.array_of, C.compiles, C.timeout
local header_name, namespace = C.header_name, C.namespace
local TOKEN, PLUGIN_ID = C.TOKEN, C.PLUGIN_ID
local ALGORITHMS = { round_robin = true, ewma = true, chash = true, cookie = true }

_M.backend_id = C.backend_id

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
  if b.hashBy ~= nil and not (str(b.hashBy, 256, "^%$[%w_.:/%-%$]*$") and not b.hashBy:find("%$%$") and not b.hashBy:find("%$[^%a_]") and b.hashBy:sub(-1) ~= "$") then
    return "backend " .. id .. ": hashBy must be nginx variables and literal text (letters, digits . _ : / -) starting with a variable"
  end
  if b.hashSubsetSize ~= nil and (not is_int(b.hashSubsetSize, 1, 1000) or b.balance ~= "chash") then
    return "backend " .. id .. ": hashSubsetSize must be 1-1000, with balance chash"
  end
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
    -- Attributes written into the Set-Cookie header: nothing that ends an attribute or the header can pass.
    if c.path ~= nil and not (str(c.path, 256, "^/[!-~]*$") and not c.path:find("[;,\"'\\]")) then return "backend " .. id .. ": invalid cookie path" end
    if c.domain ~= nil and not str(c.domain, 254, "^%.?[%w][%w%.%-]*$") then return "backend " .. id .. ": invalid cookie domain" end
    if c.sameSite ~= nil and c.sameSite ~= "Strict" and c.sameSite ~= "Lax" and c.sameSite ~= "None" then return "backend " .. id .. ": invalid cookie sameSite" end
    if c.expiresSeconds ~= nil and not is_int(c.expiresSeconds, 0, 1e10) then return "backend " .. id .. ": invalid cookie expiresSeconds" end
    for _, k in ipairs({ "conditionalSameSiteNone", "secure", "changeOnFailure", "partitioned" }) do
      if c[k] ~= nil and type(c[k]) ~= "boolean" then return "backend " .. id .. ": cookie " .. k .. " must be a boolean" end
    end
  end
  if b.unavailableReason ~= nil and not str(b.unavailableReason, 2048) then return "backend " .. id .. ": invalid unavailableReason" end
  if b.passiveHealth ~= nil then
    local h = b.passiveHealth
    if type(h) ~= "table" or #h > 0 then return "backend " .. id .. ": passiveHealth must be an object" end
    if not is_int(h.failures, 1, 100) then return "backend " .. id .. ": passiveHealth.failures must be 1-100" end
    if type(h.ejectSeconds) ~= "number" or h.ejectSeconds < 0.001 or h.ejectSeconds > 1e8 then
      return "backend " .. id .. ": passiveHealth.ejectSeconds must be a number of seconds > 0"
    end
    if h.statuses ~= nil then
      if not is_array(h.statuses) or #h.statuses > 100 then return "backend " .. id .. ": passiveHealth.statuses must be an array (at most 100)" end
      for _, st in ipairs(h.statuses) do
        if not is_int(st, 100, 599) then return "backend " .. id .. ": passiveHealth.statuses: invalid status " .. tostring(st) end
      end
    end
  end
end

local CERT_ID = "^%x+$"
local HOST = "^[%*]?[a-z0-9.-]+$"
local MATCH = { exact = true, prefix = true, regex = true }
local ACTIONS = { not_found = true, unavailable = true, error = true }
local PROFILE = "^p_[a-z0-9]+$"
local K8S_NAME = "^[a-z0-9][a-z0-9.-]*$"

local function cert_id(id)
  if not str(id, 64, CERT_ID) or #id < 16 then return "invalid certificate id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

local function host(h)
  if not str(h, 253, HOST) or h:find("*", 2, true) or (h:sub(1, 1) == "*" and h:sub(2, 2) ~= ".") then
    return "invalid host " .. cjson.encode(tostring(h):sub(1, 80))
  end
end

-- A Gateway port's key ("<pod port>/<host name>" or "<pod port>/_"): nil when h is none, else the error (nil = valid).
local function port_key(h)
  if type(h) ~= "string" then return nil end
  local port, rest = h:match("^(%d%d?%d?%d?%d?)/(.+)$")
  if not port then return nil end
  if rest == "_" then return false end
  return host(rest) or false
end

-- A host of the certificate table: a host name, or a Gateway port's key ("<pod port>/_": a listener without a
-- hostname, any name on that port).
local function cert_host(h)
  local err = port_key(h)
  if err == nil then return host(h) end
  return err or nil
end

-- "_" (rules without host) or a host name; a Gateway listener's hosts are "<pod port>/<host or _>", optionally with
-- the hostname tier of their routes: "#<wildcard>" (routes whose wildcard hostname covers the host) or "#" (routes
-- without hostnames) — router.lua match_listener.
local function route_host(h)
  if h == "_" then return nil end
  if type(h) == "string" then
    local base, tier = h:match("^(%d+/[^#]+)#([^#]*)$")
    if base then
      local err = port_key(base)
      if err then return err end
      if err == nil then return "invalid Gateway host key" end
      if tier ~= "" and (tier:sub(1, 2) ~= "*." or host(tier)) then return "invalid hostname tier " .. tier end
      return nil
    end
  end
  return cert_host(h)
end

local METHOD = "^[A-Z][A-Z0-9_-]*$"

function _M.plugin_id(id)
  if not str(id, 253, PLUGIN_ID) then return "invalid plugin id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

local function plugin_ref(v) return str(v, 253, PLUGIN_ID) end

-- RouteRule.conditions: { methods?: [METHOD], headers?: [{name, type, value}], query?: [{name, type, value}] }
local MATCH_TYPES = { exact = true, regex = true }
local function conditions(c)
  if type(c) ~= "table" or #c > 0 then return "conditions must be an object" end
  if c.methods ~= nil and not array_of(c.methods, 32, function(m) return str(m, 32, METHOD) end) then
    return "conditions: methods must be upper-case method names"
  end
  for _, what in ipairs({ "headers", "query" }) do
    local list = c[what]
    if list ~= nil then
      if not is_array(list) or #list > 32 then return "conditions: " .. what .. " must be an array" end
      for i, m in ipairs(list) do
        local at = "conditions: " .. what .. " " .. i .. ": "
        if type(m) ~= "table" then return at .. "not an object" end
        if what == "headers" then
          if not header_name(m.name) then return at .. "invalid header name" end
        elseif not str(m.name, 256, "^[%w%-%._~%[%]]+$") then
          return at .. "invalid parameter name"
        end
        if not MATCH_TYPES[m.type] then return at .. "type must be exact or regex" end
        if type(m.value) ~= "string" or #m.value > 4096 then return at .. "invalid value" end
        if m.type == "regex" and (m.value == "" or not compiles(m.value)) then return at .. "the regex does not compile" end
      end
    end
  end
end
_M.conditions = conditions

-- Metric labels of a route or host (the metrics module counts by them): five fields joined by U+001F, no other control character.
local function metrics_labels(m)
  if type(m) ~= "string" or #m > 8192 or m:find("[%z\1-\30\127]") then return false end
  local _, n = m:gsub("\31", "")
  return n == 4
end

-- One copy of a route's requests (route.mirrors).
local function mirror(m)
  if type(m) ~= "table" then return "not an object" end
  local err = _M.backend_id(m.backendId)
  if err then return err end
  if m.scheme ~= "http" and m.scheme ~= "https" then return "scheme must be http or https" end
  -- "" = the request's own Host (Gateway API's RequestMirror).
  if m.host ~= "" and not str(m.host, 255, "^[%w%.%-%[%]:]+$") then return "invalid host" end
  if not str(m.serverName, 253, "^[%w%.%-:]+$") then return "invalid serverName" end
  if m.requestUri ~= nil and m.requestUri ~= true then return "requestUri must be true when present" end
  if (m.requestUri == true) == (m.path ~= nil) then return "exactly one of requestUri and path" end
  if m.path ~= nil and not str(m.path, 2048, "^/[%w%-%._~!&%*%+,=:@/%%]*$") then return "invalid path" end
  if m.share ~= nil then
    -- A share of the requests: 0 < numerator < denominator (none and every request are no share).
    local s = m.share
    if type(s) ~= "table" or not is_int(s.denominator, 2, 2147483647) or not is_int(s.numerator, 1, s.denominator - 1) then
      return "share must be { numerator, denominator } with 0 < numerator < denominator"
    end
  end
end

local function route(r)
  if type(r) ~= "table" then return "route is not an object" end
  if r.metrics ~= nil and not metrics_labels(r.metrics) then return "invalid metrics labels" end
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
  if r.retryAttempts ~= nil and not is_int(r.retryAttempts, 1, 10) then return "retryAttempts must be 1-10" end
  if r.split ~= nil then
    if not is_array(r.split) or #r.split == 0 or #r.split > 64 then return "split must be a non-empty array" end
    for i, s in ipairs(r.split) do
      if type(s) ~= "table" then return "split " .. i .. " is not an object" end
      -- "" is the share of a Gateway API backendRef Portico may not use: answered 500.
      local err = s.backendId ~= "" and _M.backend_id(s.backendId) or nil
      if err then return "split " .. i .. ": " .. err end
      if not is_int(s.weight, 0, 1000000) then return "split " .. i .. ": weight must be 0-1000000" end
      if s.plugins ~= nil then
        if not is_array(s.plugins) or #s.plugins > 64 then return "split " .. i .. ": plugins must be an array" end
        for _, id in ipairs(s.plugins) do
          local perr = _M.plugin_id(id)
          if perr then return "split " .. i .. ": plugins: " .. perr end
        end
      end
    end
  end
  if r.plugins ~= nil then
    if not is_array(r.plugins) or #r.plugins > 64 then return "plugins must be an array" end
    for _, id in ipairs(r.plugins) do
      local err = _M.plugin_id(id)
      if err then return "plugins: " .. err end
    end
  end
  if r.observe ~= nil and r.observe ~= true then return "observe must be true when present" end
  if r.websocket ~= nil and r.websocket ~= false then return "websocket must be false when present" end
  if r.preserveTrailingSlash ~= nil and r.preserveTrailingSlash ~= true then return "preserveTrailingSlash must be true when present" end
  if r.defaultBackendId ~= nil then
    local err = _M.backend_id(r.defaultBackendId)
    if err then return "defaultBackendId: " .. err end
  end
  if r.errorPage ~= nil then
    -- Sent as X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port: Kubernetes names and a port only.
    local e = r.errorPage
    if type(e) ~= "table" or not str(e.namespace, 63, K8S_NAME) or not str(e.ingress, 253, K8S_NAME) or not str(e.service, 63, K8S_NAME)
      or not str(e.port, 15, "^[a-z0-9-]+$") then
      return "invalid errorPage"
    end
    if e.backendId ~= nil then
      local err = _M.backend_id(e.backendId)
      if err then return "errorPage.backendId: " .. err end
    end
  end
  if r.mirrors ~= nil then
    -- One entry per copy (the profile's mirror slots, at most 16): its target, and the values of the copy's Host
    -- header, TLS server name and request URI.
    local ms = r.mirrors
    if not is_array(ms) or #ms == 0 or #ms > 16 then return "mirrors must be an array of 1-16 entries" end
    for i, m in ipairs(ms) do
      local err = mirror(m)
      if err then return "mirrors " .. i .. ": " .. err end
    end
    if #ms > 1 then
      -- The copies share the request's variables: the scheme, Host and URI are the first's, and plain HTTP only
      -- (one TLS server name for all).
      local f = ms[1]
      for i, m in ipairs(ms) do
        if m.scheme ~= "http" then return "mirrors " .. i .. ": several copies must be plain http" end
        if m.host ~= f.host or m.requestUri ~= f.requestUri or m.path ~= f.path then return "mirrors " .. i .. ": several copies must have the same host and URI" end
      end
    end
  end
end

-- { tls, passthrough?, rules = [ { path, match, route } ] }
function _M.host_routes(h, v)
  local err = route_host(h)
  if err then return err end
  if type(v) ~= "table" then return "routes of " .. h .. " are not an object" end
  if v.tls ~= nil and type(v.tls) ~= "boolean" then return "routes of " .. h .. ": tls must be a boolean" end
  if v.passthrough ~= nil and v.passthrough ~= true then return "routes of " .. h .. ": passthrough must be true when present" end
  if v.metrics ~= nil and not metrics_labels(v.metrics) then return "routes of " .. h .. ": invalid metrics labels" end
  if v.unmatchedBackendId ~= nil then
    local e = _M.backend_id(v.unmatchedBackendId)
    if e then return "routes of " .. h .. ": unmatchedBackendId: " .. e end
  end
  if not is_array(v.rules) then return "routes of " .. h .. ": rules must be an array" end
  for i, rule in ipairs(v.rules) do
    if type(rule) ~= "table" or not MATCH[rule.match] then return "routes of " .. h .. ": rule " .. i .. ": invalid match" end
    if not str(rule.path, 4096) or (rule.match ~= "regex" and rule.path:sub(1, 1) ~= "/") then
      return "routes of " .. h .. ": rule " .. i .. ": invalid path"
    end
    if rule.slashRedirect ~= nil and (rule.slashRedirect ~= true or rule.match ~= "prefix") then
      return "routes of " .. h .. ": rule " .. i .. ": slashRedirect must be true, on a prefix rule"
    end
    if rule.portInRedirect ~= nil and (rule.portInRedirect ~= true or rule.slashRedirect ~= true) then
      return "routes of " .. h .. ": rule " .. i .. ": portInRedirect must be true, with slashRedirect"
    end
    if rule.conditions ~= nil then
      err = conditions(rule.conditions)
      if err then return "routes of " .. h .. ": rule " .. i .. ": " .. err end
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

-- Plugin instances (PluginInstance in reconcilers/config/types.ts): the envelope here, the fields by the plugin
-- module of the type (its check; portico/plugins/registry.lua). Optional fields may be absent; lists may be empty.
function _M.plugin(id, p)
  local err = _M.plugin_id(id)
  if err then return err end
  if type(p) ~= "table" or #p > 0 then return "plugin " .. id .. " is not an object" end
  if not str(p.name, 512, "^[\32-\126]+$") then return "plugin " .. id .. ": invalid name" end
  local mod = registry.by_name[p.type]
  if not mod then return "plugin " .. id .. ": unknown type " .. cjson.encode(tostring(p.type):sub(1, 40)) end
  err = mod.check(p)
  if err then return "plugin " .. id .. " (" .. p.type .. "): " .. err end
  -- ingress-nginx's satisfy: any, on the access plugins its annotations make (plugins.lua: satisfy_any).
  if p.satisfyAny ~= nil and not (p.satisfyAny == true and mod.satisfy_any) then
    return "plugin " .. id .. " (" .. p.type .. "): satisfyAny must be true, on an access plugin"
  end
end

-- ConsumerSet: { consumers: [{ name, username, keys: [sha256 hex], basic: [{username, hash}], plugins: [id] }] }
function _M.consumer_set(ns, set)
  local err = namespace(ns)
  if err then return "consumers: " .. err end
  local at = "consumers of " .. ns .. ": "
  if type(set) ~= "table" or not is_array(set.consumers) then return at .. "consumers must be an array" end
  for i, c in ipairs(set.consumers) do
    local where = at .. "consumer " .. i .. ": "
    if type(c) ~= "table" then return where .. "not an object" end
    if not str(c.name, 253, "^[a-z0-9][a-z0-9.-]*$") then return where .. "invalid name" end
    if not str(c.username, 256, "^[\32-\126]+$") then return where .. "invalid username" end
    if c.keys ~= nil and not array_of(c.keys, 1024, function(k) return str(k, 64, "^[0-9a-f]+$") and #k == 64 end) then
      return where .. "keys must be lower-case hex SHA-256 digests"
    end
    if c.basic ~= nil then
      if not is_array(c.basic) or #c.basic > 64 then return where .. "basic must be an array" end
      for _, b in ipairs(c.basic) do
        if type(b) ~= "table" or not str(b.username, 256, "^[\32-\126]+$") or b.username:find(":", 1, true) then
          return where .. "invalid basic-auth user name"
        end
        if not crypto.known_hash(b.hash) then return where .. "unsupported password hash for " .. b.username .. " (sha256$<salt hex>$<hex>, {SHA}<base64>, bcrypt $2a$/$2b$/$2y$ of cost 4-" .. crypto.MAX_BCRYPT_COST .. ")" end
      end
    end
    if c.plugins ~= nil and not array_of(c.plugins, 64, plugin_ref) then return where .. "invalid plugins" end
  end
end

-- { backends?, routes?, plugins?, consumers? }, each {upsert?, remove?}
function _M.data_body(body)
  if #body > 0 then return "the body must be a JSON object" end
  return upsert_remove(body.backends, "backends", _M.backend, _M.backend_id)
    or upsert_remove(body.plugins, "plugins", _M.plugin, _M.plugin_id)
    or upsert_remove(body.consumers, "consumers", _M.consumer_set, namespace)
    or upsert_remove(body.routes, "routes", _M.host_routes, route_host)
end

-- A server certificate as the controller sends it (reconcilers/model/normalize.ts TLS_SECRET_LIMITS): only PEM
-- certificate blocks, at most 10, and at most 80 KiB (64 KiB of tls.crt re-encoded with line breaks); its key one
-- PEM private-key block of at most 20 KiB. So one Secret can take at most about 100 KiB of portico_certs, even from
-- a configuration that bypassed the controller.
local MAX_CHAIN, MAX_CHAIN_BYTES, MAX_KEY_BYTES = 10, 80 * 1024, 20 * 1024
local function cert_chain(v)
  if not str(v, MAX_CHAIN_BYTES) then return false end
  local n = 0
  local rest = v:gsub("%-%-%-%-%-BEGIN CERTIFICATE%-%-%-%-%-\r?\n[%w+/=\r\n]+%-%-%-%-%-END CERTIFICATE%-%-%-%-%-", function()
    n = n + 1
    return ""
  end)
  return n > 0 and n <= MAX_CHAIN and rest:match("^%s*$") ~= nil
end

local function private_key(v)
  if not str(v, MAX_KEY_BYTES) then return false end
  local label, body, label2 = v:match("^%s*%-%-%-%-%-BEGIN ([A-Z ]*PRIVATE KEY)%-%-%-%-%-\r?\n([%w+/=\r\n]+)%-%-%-%-%-END ([A-Z ]*PRIVATE KEY)%-%-%-%-%-%s*$")
  return label ~= nil and label == label2 and body ~= nil
end

local CLIENT_CA_ID = "^[0-9a-f]+$"
local function client_ca_id(id)
  if not str(id, 30, CLIENT_CA_ID) or #id ~= 30 then return "invalid client CA id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

-- Only PEM certificates (a CA bundle, as the controller checked it): BEGIN/END CERTIFICATE blocks of base64.
local function ca_bundle(v)
  if not str(v, 256 * 1024) then return false end
  local n = 0
  local rest = v:gsub("%-%-%-%-%-BEGIN CERTIFICATE%-%-%-%-%-\r?\n[%w+/=\r\n]+%-%-%-%-%-END CERTIFICATE%-%-%-%-%-", function()
    n = n + 1
    return ""
  end)
  return n > 0 and rest:match("^%s*$") ~= nil
end

-- {clientCas?: {id: {ca, depth, source, strict?}}, clientHosts?: {host: id | "-"}, clientRemove?: [host]}
local function client_auth_body(body)
  if body.clientCas ~= nil then
    if type(body.clientCas) ~= "table" or #body.clientCas > 0 then return "clientCas must be an object" end
    for id, c in pairs(body.clientCas) do
      local err = client_ca_id(id)
      if err then return err end
      if type(c) ~= "table" or not ca_bundle(c.ca) then return "client CA " .. id .. ": ca must be PEM certificates" end
      if not is_int(c.depth, 1, 10) then return "client CA " .. id .. ": depth must be 1-10" end
      if c.source ~= nil and not str(c.source, 512) then return "client CA " .. id .. ": invalid source" end
      if c.strict ~= nil and c.strict ~= true then return "client CA " .. id .. ": strict must be true or absent" end
    end
  end
  if body.clientHosts ~= nil then
    if type(body.clientHosts) ~= "table" or #body.clientHosts > 0 then return "clientHosts must be an object" end
    for h, id in pairs(body.clientHosts) do
      local err = route_host(h) or (id ~= "-" and client_ca_id(id)) or nil
      if err then return "clientHosts: " .. err end
    end
  end
  if body.clientRemove ~= nil then
    if not is_array(body.clientRemove) then return "clientRemove must be an array" end
    for _, h in ipairs(body.clientRemove) do
      local err = route_host(h)
      if err then return "clientRemove: " .. err end
    end
  end
end

-- {certificates?: {id: {cert, key, source}}, hosts?: {host: id}, remove?: [host], default?: id | null} and the
-- client-certificate CAs (client_auth_body)
-- enable-ocsp: the responder the controller vetted (ocsp-responders.ts): an IP literal peers.lua accepts, a port,
-- the Host header (a name or literal), and a path of printable characters.
local function ocsp_responder(r)
  if type(r) ~= "table" then return "must be an object" end
  if type(r.address) ~= "string" or not peers.check(r.address) then return "address must be an IP literal Portico may connect to" end
  if not peers.valid_port(r.port) then return "port must be 1-65535" end
  if type(r.host) ~= "string" or not r.host:match("^[A-Za-z0-9.:-]+$") or #r.host > 253 then return "host must be a host name or IP literal" end
  if type(r.path) ~= "string" or not r.path:match("^/[\33-\126]*$") or #r.path > 1024 then return "path must start with / and be printable, at most 1024 characters" end
end

-- ssl-ciphers: an OpenSSL cipher list of ":"-separated entries ([!+-]name(+name)*, @STRENGTH, @SECLEVEL=0-5),
-- at most 1024 characters and 64 entries (the controller's cipherListSchema, values/safe.ts).
local CIPHER_NAME = "^[%w][%w%._%-]*$"
local function cipher_entry(t)
  if t == "@STRENGTH" or t:match("^@SECLEVEL=[0-5]$") then return true end
  local body = t:match("^[!+%-](.*)$") or t
  if #body == 0 or #body > 64 * 8 + 7 then return false end
  for name in (body .. "+"):gmatch("([^+]*)%+") do
    if #name == 0 or #name > 64 or not name:match(CIPHER_NAME) then return false end
  end
  return true
end
function _M.cipher_list(v)
  if type(v) ~= "string" or #v == 0 or #v > 1024 then return false end
  local n = 0
  for t in (v .. ":"):gmatch("([^:]*):") do
    n = n + 1
    if n > 64 or not cipher_entry(t) then return false end
  end
  return true
end

function _M.certificates_body(body)
  if #body > 0 then return "the body must be a JSON object" end
  local cerr = client_auth_body(body)
  if cerr then return cerr end
  if body.certificates ~= nil then
    if type(body.certificates) ~= "table" then return "certificates must be an object" end
    for id, c in pairs(body.certificates) do
      local err = cert_id(id)
      if err then return err end
      if type(c) ~= "table" or not cert_chain(c.cert) then
        return "certificate " .. id .. ": cert must be 1-" .. MAX_CHAIN .. " PEM certificates and nothing else, at most " .. MAX_CHAIN_BYTES .. " bytes"
      end
      if not private_key(c.key) then return "certificate " .. id .. ": key must be one PEM private key, at most " .. MAX_KEY_BYTES .. " bytes" end
      if c.source ~= nil and not str(c.source, 512) then return "certificate " .. id .. ": invalid source" end
      if c.ocsp ~= nil then
        local err = ocsp_responder(c.ocsp)
        if err then return "certificate " .. id .. ": ocsp: " .. err end
      end
      if c.ciphers ~= nil and not _M.cipher_list(c.ciphers) then
        return "certificate " .. id .. ": ciphers must be an OpenSSL cipher list (entries joined with \":\"), at most 1024 characters and 64 entries"
      end
    end
  end
  if body.hosts ~= nil then
    if type(body.hosts) ~= "table" then return "hosts must be an object" end
    for h, id in pairs(body.hosts) do
      local err = cert_host(h) or cert_id(id)
      if err then return err end
    end
  end
  if body.remove ~= nil then
    if not is_array(body.remove) then return "remove must be an array" end
    for _, h in ipairs(body.remove) do
      local err = cert_host(h)
      if err then return err end
    end
  end
  if body.default ~= nil and body.default ~= cjson.null then
    local err = cert_id(body.default)
    if err then return "default: " .. err end
  end
end

return _M
