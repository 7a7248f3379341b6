-- Shapes of what the configuration API accepts. The controller sends only validated data; this is the boundary
-- check on the nginx side: anything malformed is refused as a whole (400) before a byte is stored. Fields the
-- Lua side does not use are ignored. Each function returns nil when the value is fine, else a message.
local cjson = require("cjson.safe")
local ip_restriction = require("portico.plugins.ip_restriction")
local crypto = require("portico.plugins.crypto")

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
local ACTIONS = { not_found = true, unavailable = true }
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

-- "_" (rules without host) or a host name.
local function route_host(h)
  if h == "_" then return nil end
  return host(h)
end

local function timeout(v) return type(v) == "number" and v > 0 and v <= 1e6 end

-- Plugin ids ("<namespace>_<name>" and the like) and header names (lower-case RFC 9110 tokens).
local PLUGIN_ID = "^[a-z0-9][a-z0-9_.-]*$"
local HEADER = "^[a-z0-9!#%$%%&'%*%+%.%^_`|~%-]+$"
-- Header values: printable ASCII (and tab), never CR/LF — they are sent literally. May be empty.
local VALUE = "^[\t\32-\126]*$"
local METHOD = "^[A-Z][A-Z0-9_-]*$"
local NAMESPACE = "^[a-z0-9][a-z0-9-]*$"
-- A URI path (as nginx has it in $uri or sends it): RFC 3986 path characters and percent.
local PATH = "^/[%w%-%._~!%$&'%(%)%*%+,;=:@/%%]*$"

function _M.plugin_id(id)
  if not str(id, 253, PLUGIN_ID) then return "invalid plugin id " .. cjson.encode(tostring(id):sub(1, 80)) end
end

local function namespace(ns)
  if not str(ns, 63, NAMESPACE) or ns:sub(-1) == "-" then return "invalid namespace " .. cjson.encode(tostring(ns):sub(1, 80)) end
end

-- Whether PCRE (ngx.re, as the router and plugins use it) compiles the pattern.
local function compiles(pattern)
  local ok, _, err = pcall(ngx.re.find, "", pattern, "j")
  return ok and err == nil
end

local function array_of(v, max, each)
  if not is_array(v) or #v > max then return false end
  for i = 1, #v do
    if not each(v[i]) then return false end
  end
  return true
end

local function header_name(v) return str(v, 256, HEADER) end
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
  if r.split ~= nil then
    if not is_array(r.split) or #r.split == 0 or #r.split > 64 then return "split must be a non-empty array" end
    for i, s in ipairs(r.split) do
      if type(s) ~= "table" then return "split " .. i .. " is not an object" end
      local err = _M.backend_id(s.backendId)
      if err then return "split " .. i .. ": " .. err end
      if not is_int(s.weight, 0, 10000) then return "split " .. i .. ": weight must be 0-10000" end
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
  end
  if r.mirror ~= nil then
    -- Values of the mirror subrequest's Host header, TLS server name and request URI.
    local m = r.mirror
    if type(m) ~= "table" then return "mirror must be an object" end
    local err = _M.backend_id(m.backendId)
    if err then return "mirror: " .. err end
    if m.scheme ~= "http" and m.scheme ~= "https" then return "mirror: scheme must be http or https" end
    if not str(m.host, 255, "^[%w%.%-%[%]:]+$") then return "mirror: invalid host" end
    if not str(m.serverName, 253, "^[%w%.%-:]+$") then return "mirror: invalid serverName" end
    if m.requestUri ~= nil and m.requestUri ~= true then return "mirror: requestUri must be true when present" end
    if (m.requestUri == true) == (m.path ~= nil) then return "mirror: exactly one of requestUri and path" end
    if m.path ~= nil and not str(m.path, 2048, "^/[%w%-%._~!&%*%+,=:@/%%]*$") then return "mirror: invalid path" end
  end
end

-- { tls, passthrough?, rules = [ { path, match, route } ] }
function _M.host_routes(h, v)
  local err = route_host(h)
  if err then return err end
  if type(v) ~= "table" then return "routes of " .. h .. " are not an object" end
  if v.tls ~= nil and type(v.tls) ~= "boolean" then return "routes of " .. h .. ": tls must be a boolean" end
  if v.passthrough ~= nil and v.passthrough ~= true then return "routes of " .. h .. ": passthrough must be true when present" end
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

-- Plugin instances (PluginInstance in reconcilers/config/types.ts), per type. Optional fields may be absent;
-- lists may be empty.
local REDIRECT_STATUS = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }
-- Headers whose values frame the message or the connection: a plugin must not change them.
-- external-auth's ingress-nginx mode (auth-url): templates are literal text and variables of an allowlist.
local REDIRECT_VARS = { scheme = true, host = true, http_host = true, request_uri = true, escaped_request_uri = true,
  uri = true, rd = true }
local KEY_VARS = { remote_user = true, remote_addr = true, host = true, http_host = true, request_uri = true, uri = true,
  scheme = true, request_method = true }
local function key_var(v)
  return KEY_VARS[v] or ((v:match("^http_[a-z0-9_]+$") or v:match("^cookie_[%w_]+$") or v:match("^arg_[%w_]+$")) ~= nil and #v <= 70)
end
local function template(parts, allowed)
  if not is_array(parts) or #parts == 0 or #parts > 64 then return false end
  for _, p in ipairs(parts) do
    if type(p) == "string" then
      if not str(p, 2048, "^[\33-\126]+$") then return false end
    elseif type(p) ~= "table" or type(p.v) ~= "string" or not allowed(p.v) then
      return false
    end
  end
  return true
end
-- auth-proxy-set-headers: header names it may not set, and values of printable text and nginx variable names.
local AUTH_HEADER_REFUSED = { host = true, ["content-length"] = true, ["transfer-encoding"] = true, connection = true,
  ["keep-alive"] = true, upgrade = true, te = true, trailer = true, ["proxy-connection"] = true, expect = true }
local function header_template(parts)
  if not is_array(parts) or #parts == 0 or #parts > 64 then return false end
  for _, p in ipairs(parts) do
    if type(p) == "string" then
      if p ~= "" and not str(p, 1024, "^[\32-\126]*$") then return false end
    elseif type(p) ~= "table" or not str(p.v, 64, "^[a-z_][a-z0-9_]*$") then
      return false
    end
  end
  return true
end
local function ingress_nginx_auth(n)
  if type(n) ~= "table" or #n > 0 then return "ingressNginx must be an object" end
  if n.scheme ~= "http" and n.scheme ~= "https" then return "ingressNginx.scheme must be http or https" end
  if not str(n.host, 253, "^[%w.:-]+$") then return "invalid ingressNginx.host" end
  if n.method ~= nil and not str(n.method, 16, "^[A-Z]+$") then return "invalid ingressNginx.method" end
  local redirect = function(v) return REDIRECT_VARS[v] == true end
  if n.requestRedirect ~= nil and not template(n.requestRedirect, redirect) then return "invalid ingressNginx.requestRedirect" end
  if n.signin ~= nil and not template(n.signin, redirect) then return "invalid ingressNginx.signin" end
  if n.cache ~= nil then
    if type(n.cache) ~= "table" or not template(n.cache.key, key_var) then return "invalid ingressNginx.cache.key" end
    if type(n.cache.ttl) ~= "table" or next(n.cache.ttl) == nil then return "invalid ingressNginx.cache.ttl" end
    for k, v in pairs(n.cache.ttl) do
      if type(k) ~= "string" or not (k == "any" or k:match("^[1-5]%d%d$")) or type(v) ~= "number" or v <= 0 or v > 31536000 then
        return "invalid ingressNginx.cache.ttl"
      end
    end
  end
  if type(n.alwaysSetCookie) ~= "boolean" then return "ingressNginx.alwaysSetCookie must be a boolean" end
  local t = n.timeouts
  if type(t) ~= "table" or not timeout(t.connect) or not timeout(t.send) or not timeout(t.read) then return "invalid ingressNginx.timeouts" end
  if n.setHeaders ~= nil then
    if not is_array(n.setHeaders) or #n.setHeaders > 64 then return "invalid ingressNginx.setHeaders" end
    for _, h in ipairs(n.setHeaders) do
      if type(h) ~= "table" or not str(h.name, 64, "^[a-z0-9-]+$") or AUTH_HEADER_REFUSED[h.name] then return "invalid ingressNginx.setHeaders name" end
      if not header_template(h.value) then return "invalid ingressNginx.setHeaders value" end
    end
  end
end

local FRAMING = { ["content-length"] = true, ["transfer-encoding"] = true, ["connection"] = true, ["keep-alive"] = true,
  ["upgrade"] = true, ["te"] = true, ["trailer"] = true, ["proxy-connection"] = true }
local REQUEST_ONLY = { ["host"] = true, ["expect"] = true }

local function bool_or_nil(v) return v == nil or type(v) == "boolean" end
local function refusal_status(v) return v == nil or is_int(v, 400, 599) end

local function origin(o)
  if o == "*" then return true end
  if not str(o, 512) then return false end
  local scheme, rest = o:match("^(%a[%w+.-]*)://(.+)$")
  if not scheme then return false end
  rest = rest:gsub("^%*%.", "", 1)
  local host, port = rest:match("^(.-)(:%d+)$")
  if not host then host = rest end
  if port and not is_int(tonumber(port:sub(2)), 1, 65535) then return false end
  return host:match("^[%w.-]+$") ~= nil or host:match("^%[[%x:.]+%]$") ~= nil
end

local function hostname(h) return str(h, 253, "^[%w.-]+$") or str(h, 64, "^%[[%x:.]+%]$") end

local function prefix_pair(p)
  return type(p) == "table" and str(p.from, 2048, PATH) and str(p.to, 2048, PATH)
end

-- A replacement template for ngx.re.sub: literal text with $0-$9, ${n} and $$ only.
local function replacement(r)
  if type(r) ~= "string" or #r > 2048 or not r:match("^[\32-\126]*$") then return false end
  local rest = r:gsub("%$%$", ""):gsub("%${%d+}", ""):gsub("%$%d", "")
  return not rest:find("$", 1, true)
end

local function name_values(list, forbidden)
  if not is_array(list) or #list > 64 then return false end
  for _, h in ipairs(list) do
    if type(h) ~= "table" or not header_name(h.name) or forbidden[h.name] or FRAMING[h.name] then return false end
    if type(h.value) ~= "string" or #h.value > 4096 or not h.value:match(VALUE) then return false end
  end
  return true
end

local HASHES = {
  function(h) -- sha256$<salt hex>$<64 hex>
    local salt, hex = h:match("^sha256%$(%x+)%$(%x+)$")
    return salt ~= nil and #salt <= 128 and #hex == 64
  end,
  function(h) return #h == 33 and h:match("^{SHA}[%w+/]+=*$") ~= nil end,
  -- bcrypt, and in htpasswd files (ingress-nginx auth-secret) crypt(3) md5/sha256/sha512 and traditional DES: only
  -- within the cost bounds (crypto.crypt_work), so a configuration that bypassed the controller cannot stall a worker.
  function(h) return #h == 60 and h:match("^%$2[aby]%$%d%d%$[./%w]+$") ~= nil and crypto.crypt_work(h) ~= nil end,
  function(h) return #h <= 64 and h:match("^%$apr1%$[./%w]+%$[./%w]+$") ~= nil end,
  function(h) return #h <= 256 and h:match("^%$[156]%$[^:%s]+$") ~= nil and crypto.crypt_work(h) ~= nil end,
  function(h) return #h == 13 and h:match("^[./%w]+$") ~= nil end,
}
local function password_hash(h)
  if type(h) ~= "string" then return false end
  for _, f in ipairs(HASHES) do
    if f(h) then return true end
  end
  return false
end

-- Client CIDRs exempt from a limit (rate-limit, conn-limit: ingress-nginx's limit-allowlist). nil when valid.
local function exempt_list(list)
  if not is_array(list) or #list > 4096 then return "exempt must be an array" end
  for _, c in ipairs(list) do
    local ok, why = ip_restriction.parse_cidr(c)
    if not ok then return "exempt: " .. cjson.encode(tostring(c):sub(1, 80)) .. " " .. why end
  end
end

-- client-cert (auth-tls-*): the redirect target of auth-tls-error-page is an absolute http(s) URL of RFC 3986
-- characters without user info, fragment, quotes, spaces or "$"; match-cn a regex of printable characters.
local VERIFY_CLIENT = { on = true, off = true, optional = true, optional_no_ca = true }
local ERROR_PAGE = "^[Hh][Tt][Tt][Pp][Ss]?://[%w%.%-]+[%w%.%-_~!&%*%+,=:@%%/%?]*$"

local checks = {
  ["client-cert"] = function(p)
    if not VERIFY_CLIENT[p.verify] then return "verify must be on, off, optional or optional_no_ca" end
    if p.verify ~= "off" or p.caId ~= nil then
      if not str(p.caId, 30, "^[0-9a-f]+$") or #p.caId ~= 30 then return "invalid caId" end
    end
    if p.errorPage ~= nil and (not str(p.errorPage, 2048, ERROR_PAGE) or p.errorPage:match("^[^:]+://([^/?]*)"):find("@", 1, true)) then
      return "errorPage must be an absolute http(s) URL (no user info, variables, quotes or spaces)"
    end
    if not bool_or_nil(p.passCertificate) then return "passCertificate must be a boolean" end
    -- (Whether PCRE compiles it is the plugin's business: one that does not fails its paths closed, not this push.)
    if p.matchCn ~= nil and (not str(p.matchCn, 256, "^[\32-\126]+$") or p.matchCn:find("[{};#\"'`]")) then
      return "matchCn: printable ASCII without braces, quotes, \";\" or \"#\""
    end
  end,
  ["ip-restriction"] = function(p)
    for _, what in ipairs({ "allow", "deny" }) do
      local list = p[what]
      if list ~= nil then
        if not is_array(list) or #list > 4096 then return what .. " must be an array" end
        for _, c in ipairs(list) do
          local ok, why = ip_restriction.parse_cidr(c)
          if not ok then return what .. ": " .. cjson.encode(tostring(c):sub(1, 80)) .. " " .. why end
        end
      end
    end
    if not refusal_status(p.status) then return "status must be 400-599" end
  end,
  ["cors"] = function(p)
    if not array_of(p.allowOrigins, 256, origin) or #p.allowOrigins == 0 then return "allowOrigins must be a non-empty array of origins" end
    if p.allowMethods ~= nil and not array_of(p.allowMethods, 32, function(m) return str(m, 32, TOKEN) end) then return "invalid allowMethods" end
    if p.allowHeaders ~= nil and not array_of(p.allowHeaders, 128, header_name) then return "invalid allowHeaders" end
    if p.exposeHeaders ~= nil and not array_of(p.exposeHeaders, 128, header_name) then return "invalid exposeHeaders" end
    if not bool_or_nil(p.allowCredentials) then return "allowCredentials must be a boolean" end
    if p.maxAgeSeconds ~= nil and not is_int(p.maxAgeSeconds, 0, 31536000) then return "invalid maxAgeSeconds" end
  end,
  ["key-auth"] = function(p)
    local err = namespace(p.namespace)
    if err then return err end
    if p.header ~= nil and not header_name(p.header) then return "invalid header" end
    if p.query ~= nil and not str(p.query, 256, "^[%w%-%._~]+$") then return "invalid query parameter name" end
    if not bool_or_nil(p.hideCredentials) then return "hideCredentials must be a boolean" end
  end,
  ["basic-auth"] = function(p)
    local err = namespace(p.namespace)
    if err then return err end
    if p.realm ~= nil and (not str(p.realm, 256, "^[\32-\126]+$") or p.realm:find('["\\]')) then return "invalid realm" end
    if not bool_or_nil(p.hideCredentials) then return "hideCredentials must be a boolean" end
    if p.users ~= nil then
      if not is_array(p.users) or #p.users == 0 or #p.users > 10000 then return "users must be a non-empty array" end
      for _, u in ipairs(p.users) do
        if type(u) ~= "table" or not str(u.username, 128, "^[\33-\57\59-\126]+$") then return "invalid user name" end
        if not password_hash(u.hash) then return "unsupported password hash (or cost over the bound) for " .. u.username end
      end
    end
  end,
  ["external-auth"] = function(p)
    local err = _M.backend_id(p.backendId)
    if err then return err end
    if not str(p.path, 2048, "^/[%w%-%._~!%$&'%(%)%*%+,;=:@/%%?]*$") then return "invalid path" end
    if p.method ~= nil and p.method ~= "GET" and p.method ~= "POST" and p.method ~= "HEAD" then return "method must be GET, POST or HEAD" end
    for _, what in ipairs({ "forwardHeaders", "upstreamHeaders", "clientHeaders" }) do
      if p[what] ~= nil and not array_of(p[what], 128, header_name) then return "invalid " .. what end
    end
    for _, h in ipairs(p.upstreamHeaders or {}) do
      if FRAMING[h] or REQUEST_ONLY[h] then return "upstreamHeaders: " .. h .. " cannot be set" end
    end
    for _, h in ipairs(p.clientHeaders or {}) do
      if FRAMING[h] then return "clientHeaders: " .. h .. " cannot be set" end
    end
    if p.timeoutMs ~= nil and not is_int(p.timeoutMs, 1, 600000) then return "timeoutMs must be 1-600000" end
    if p.ingressNginx ~= nil then return ingress_nginx_auth(p.ingressNginx) end
  end,
  ["rate-limit"] = function(p)
    if not is_int(p.rate, 1, 1000000) then return "rate must be 1-1000000" end
    if p.periodSeconds ~= 1 and p.periodSeconds ~= 60 then return "periodSeconds must be 1 or 60" end
    if p.burst ~= nil and not is_int(p.burst, 0, 1000000) then return "burst must be 0-1000000" end
    if p.by ~= nil and p.by ~= "ip" and p.by ~= "consumer" and p.by ~= "header" then return "by must be ip, consumer or header" end
    if p.by == "header" and not header_name(p.header) then return "by=header needs a header name" end
    if p.header ~= nil and not header_name(p.header) then return "invalid header" end
    if not refusal_status(p.status) then return "status must be 400-599" end
    if not str(p.key, 253, PLUGIN_ID) then return "invalid key" end
    if p.exempt ~= nil then return exempt_list(p.exempt) end
  end,
  ["conn-limit"] = function(p)
    if not is_int(p.limit, 1, 1000000) then return "limit must be 1-1000000" end
    if not refusal_status(p.status) then return "status must be 400-599" end
    if not str(p.key, 253, PLUGIN_ID) then return "invalid key" end
    if p.exempt ~= nil then return exempt_list(p.exempt) end
  end,
  ["request-headers"] = function(p)
    for _, what in ipairs({ "set", "add" }) do
      if p[what] ~= nil and not name_values(p[what], REQUEST_ONLY) then return "invalid " .. what .. " (header names, printable values; framing headers and Host cannot be set)" end
    end
    if p.remove ~= nil and not array_of(p.remove, 64, function(h) return header_name(h) and not FRAMING[h] and not REQUEST_ONLY[h] end) then return "invalid remove" end
  end,
  ["response-headers"] = function(p)
    for _, what in ipairs({ "set", "add" }) do
      if p[what] ~= nil and not name_values(p[what], {}) then return "invalid " .. what .. " (header names, printable values; framing headers cannot be set)" end
    end
    if p.remove ~= nil and not array_of(p.remove, 64, function(h) return header_name(h) and not FRAMING[h] end) then return "invalid remove" end
  end,
  ["redirect"] = function(p)
    if not REDIRECT_STATUS[p.status] then return "status must be 301, 302, 303, 307 or 308" end
    if p.scheme ~= nil and p.scheme ~= "http" and p.scheme ~= "https" then return "scheme must be http or https" end
    if p.host ~= nil and not hostname(p.host) then return "invalid host" end
    if p.port ~= nil and not is_int(p.port, 1, 65535) then return "invalid port" end
    if p.path ~= nil and not str(p.path, 2048, PATH) then return "invalid path" end
    if p.prefix ~= nil and not prefix_pair(p.prefix) then return "invalid prefix" end
    if p.path ~= nil and p.prefix ~= nil then return "path and prefix exclude each other" end
    if not bool_or_nil(p.keepQuery) then return "keepQuery must be a boolean" end
    for _, k in ipairs({ "requestUri", "stripTrailingSlash", "hostFromRequest" }) do
      if p[k] ~= nil and p[k] ~= true then return k .. " must be true when present" end
    end
  end,
  ["rewrite"] = function(p)
    local n = (p.path ~= nil and 1 or 0) + (p.prefix ~= nil and 1 or 0) + (p.regex ~= nil and 1 or 0)
    if n > 1 then return "path, prefix and regex exclude each other" end
    if n == 0 and p.host == nil then return "nothing to rewrite" end
    if p.path ~= nil and not str(p.path, 2048, PATH) then return "invalid path" end
    if p.prefix ~= nil and not prefix_pair(p.prefix) then return "invalid prefix" end
    if p.regex ~= nil then
      local r = p.regex
      if type(r) ~= "table" or not str(r.pattern, 1024, "^[\32-\126]+$") or not compiles(r.pattern) then return "regex: the pattern does not compile" end
      if not replacement(r.replacement) then return "regex: invalid replacement ($0-$9, ${n} and $$ only)" end
      if r.nginx ~= nil and r.nginx ~= true then return "regex: nginx must be true when present" end
    end
    if p.host ~= nil and not str(p.host, 253, "^[%w.-]+$") and not str(p.host, 253, "^[%w.-]+:%d+$") then return "invalid host" end
  end,
}

-- ---- snippet: the compiled ingress-nginx snippets (SnippetStatement, reconcilers/config/types.ts) -------------------
-- The request variables a snippet may read (the same allowlist as reconcilers/annotations/snippets.ts).
local SNIPPET_VARS = { host = true, uri = true, document_uri = true, request_uri = true, args = true, query_string = true,
  is_args = true, scheme = true, https = true, remote_addr = true, request_method = true, server_name = true,
  server_protocol = true, content_type = true, content_length = true }
local SNIPPET_NAME = "^[a-z_][a-z0-9_]*$"
local SNIPPET_HEADER = "^[!#%$%%&'%*%+%.%^_`|~%w%-]+$"
local SNIPPET_TYPE = "^[%w!#%$&%^_%.%+%-]+/[%w!#%$&%^_%.%+%*%-]+$"

local function snippet_var(name)
  if type(name) ~= "string" or #name > 140 then return false end
  if SNIPPET_VARS[name] then return true end
  local rest = name:match("^http_(.+)$") or name:match("^arg_(.+)$") or name:match("^cookie_(.+)$")
  return rest ~= nil and #rest <= 128 and rest:match("^[a-z0-9_]+$") ~= nil
end

-- A value: parts that are literal text (printable ASCII and tab; `text` also allows newlines), or { v = variable },
-- { c = 1..9 }, { s = snippet variable }.
local function snippet_value(v, text)
  if not is_array(v) or #v > 256 then return false end
  for _, p in ipairs(v) do
    if type(p) == "string" then
      if #p > 4096 or not p:match(text and "^[\t\n\32-\126]*$" or VALUE) then return false end
    elseif type(p) == "table" then
      local n = 0
      for _ in pairs(p) do n = n + 1 end
      if n ~= 1 then return false end
      if p.v ~= nil then
        if not snippet_var(p.v) then return false end
      elseif p.c ~= nil then
        if not is_int(p.c, 1, 9) then return false end
      elseif p.s ~= nil then
        if not str(p.s, 64, SNIPPET_NAME) then return false end
      else
        return false
      end
    else
      return false
    end
  end
  return true
end

local function snippet_header(name, wildcard)
  if type(name) ~= "string" then return false end
  local base = name
  if wildcard and name:sub(-1) == "*" then base = name:sub(1, -2) end
  if not str(base, 128, SNIPPET_HEADER) or base:find("*", 1, true) then return false end
  local lower = base:lower()
  if base ~= name then
    for f in pairs(FRAMING) do
      if f:sub(1, #lower) == lower then return false end
    end
    return true
  end
  return not FRAMING[lower] and lower ~= "upgrade" and lower ~= "te" and lower ~= "trailer"
end

local function snippet_regex(r) return str(r, 1024, "^[\32-\126]+$") and compiles(r) end

local function snippet_block(list, depth, count)
  if not is_array(list) then return "a block must be an array" end
  for i, s in ipairs(list) do
    count[1] = count[1] + 1
    if count[1] > 256 then return "more than 256 statements" end
    local at = "statement " .. i .. ": "
    if type(s) ~= "table" then return at .. "not an object" end
    local op = s.op
    if op == "set" then
      if not str(s.name, 64, SNIPPET_NAME) or SNIPPET_VARS[s.name] or snippet_var(s.name) then return at .. "invalid variable name" end
      if not snippet_value(s.value) then return at .. "invalid value" end
    elseif op == "return" then
      if not is_int(s.status, 200, 599) or s.status == 444 then return at .. "status must be 200-599" end
      if s.location ~= nil and (not REDIRECT_STATUS[s.status] and s.status ~= 302 or not snippet_value(s.location)) then return at .. "invalid redirect" end
      if s.text ~= nil and (s.location ~= nil or not snippet_value(s.text, true)) then return at .. "invalid text" end
    elseif op == "rewrite" then
      if not snippet_regex(s.regex) then return at .. "the regex does not compile" end
      if not snippet_value(s.path) or (s.args ~= nil and not snippet_value(s.args)) then return at .. "invalid replacement" end
      if type(s.keepArgs) ~= "boolean" or type(s.stop) ~= "boolean" then return at .. "keepArgs and stop must be booleans" end
      if s.redirect ~= nil and s.redirect ~= 301 and s.redirect ~= 302 then return at .. "redirect must be 301 or 302" end
    elseif op == "break" then
      -- nothing else
    elseif op == "if" then
      if depth > 0 then return at .. "if blocks do not nest" end
      local c = s.cond
      if type(c) ~= "table" then return at .. "invalid condition" end
      if c.test == "nonempty" then
        if not snippet_value(c.value) then return at .. "invalid condition" end
      elseif c.test == "eq" or c.test == "ne" then
        if not snippet_value(c.left) or not snippet_value(c.right) then return at .. "invalid condition" end
      elseif c.test == "match" then
        if not snippet_value(c.left) or not snippet_regex(c.regex) then return at .. "the condition's regex does not compile" end
        if type(c.caseless) ~= "boolean" or type(c.negate) ~= "boolean" then return at .. "invalid condition" end
      else
        return at .. "unknown condition"
      end
      local err = snippet_block(s.body, depth + 1, count)
      if err then return at .. err end
    elseif op == "response" or op == "request" then
      local a = s.action
      if a ~= "set" and a ~= "clear" and not (op == "response" and a == "add") then return at .. "invalid action" end
      if not snippet_header(s.name, a == "clear") then return at .. "invalid or protected header name" end
      if op == "request" and (s.name:lower() == "expect" or (s.name:lower() == "host" and (a ~= "set" or s.name ~= "host"))) then return at .. "header " .. s.name .. " cannot be changed" end
      if a ~= "clear" and not snippet_value(s.value) then return at .. "invalid value" end
      if s.statuses ~= nil and not array_of(s.statuses, 64, function(x) return is_int(x, 100, 599) end) then return at .. "invalid statuses" end
      if s.types ~= nil and not array_of(s.types, 64, function(x) return str(x, 129, SNIPPET_TYPE) end) then return at .. "invalid types" end
      if not bool_or_nil(s.always) or not bool_or_nil(s.replaceOnly) then return at .. "always / replaceOnly must be booleans" end
    else
      return at .. "unknown op " .. cjson.encode(tostring(op):sub(1, 20))
    end
  end
end

checks["snippet"] = function(p)
  if p.server == nil and p.location == nil then return "nothing to run" end
  local count = { 0 }
  for _, what in ipairs({ "server", "location" }) do
    if p[what] ~= nil then
      local err = snippet_block(p[what], 0, count)
      if err then return what .. ": " .. err end
    end
  end
end

local SATISFY_ANY_TYPES = { ["ip-restriction"] = true, ["key-auth"] = true, ["basic-auth"] = true, ["external-auth"] = true }

function _M.plugin(id, p)
  local err = _M.plugin_id(id)
  if err then return err end
  if type(p) ~= "table" or #p > 0 then return "plugin " .. id .. " is not an object" end
  if not str(p.name, 512, "^[\32-\126]+$") then return "plugin " .. id .. ": invalid name" end
  local check = checks[p.type]
  if not check then return "plugin " .. id .. ": unknown type " .. cjson.encode(tostring(p.type):sub(1, 40)) end
  err = check(p)
  if err then return "plugin " .. id .. " (" .. p.type .. "): " .. err end
  -- ingress-nginx's satisfy: any, on the access plugins its annotations make (plugins.lua: satisfy_any).
  if p.satisfyAny ~= nil and not (p.satisfyAny == true and SATISFY_ANY_TYPES[p.type]) then
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
        if not password_hash(b.hash) then return where .. "unsupported password hash for " .. b.username .. " (sha256$<salt hex>$<hex>, {SHA}<base64>, bcrypt $2a$/$2b$/$2y$ of cost 4-" .. crypto.MAX_BCRYPT_COST .. ")" end
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

-- {clientCas?: {id: {ca, depth, source}}, clientHosts?: {host: id | "-"}, clientRemove?: [host]}
local function client_auth_body(body)
  if body.clientCas ~= nil then
    if type(body.clientCas) ~= "table" or #body.clientCas > 0 then return "clientCas must be an object" end
    for id, c in pairs(body.clientCas) do
      local err = client_ca_id(id)
      if err then return err end
      if type(c) ~= "table" or not ca_bundle(c.ca) then return "client CA " .. id .. ": ca must be PEM certificates" end
      if not is_int(c.depth, 1, 10) then return "client CA " .. id .. ": depth must be 1-10" end
      if c.source ~= nil and not str(c.source, 512) then return "client CA " .. id .. ": invalid source" end
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
