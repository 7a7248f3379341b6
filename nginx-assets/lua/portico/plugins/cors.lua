-- cors: answers CORS preflights from Portico and adds CORS headers to the backend's responses.
-- Origins in allowOrigins:
--   "*"                         any origin;
--   "https://app.example.com"   exactly that origin (scheme, host and port; compared case-insensitively);
--   "https://*.example.com"     any origin of that scheme (and port, if one is written) whose host ends with
--                               ".example.com" after one or more labels: a.example.com, a.b.example.com — never
--                               example.com itself.
-- A request whose Origin matches:
--   - preflight (OPTIONS with Access-Control-Request-Method): 204 from Portico with Access-Control-Allow-Origin,
--     -Expose-Headers (when configured), -Allow-Methods (the configured ones; when none are configured, the requested method is echoed),
--     -Allow-Headers (the configured ones; when none are configured, the Access-Control-Request-Headers of the
--     preflight are echoed, i.e. any header is allowed), -Max-Age (when > 0), -Allow-Credentials (when on), and
--     Vary: Origin. The backend never sees the preflight.
--   - other requests: Access-Control-Allow-Origin, -Allow-Credentials and -Expose-Headers are set on the response.
-- Allow-Origin is "*" when "*" is configured and credentials are off; otherwise the request's origin (with
-- Vary: Origin). Note "*" with allowCredentials echoes every origin with credentials allowed.
-- A request without Origin, or with an origin that does not match, gets no CORS headers and goes on (the browser
-- enforces the policy).
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "cors"
_M.order = 2

-- "https://*.example.com:8443" -> { scheme, suffix = ".example.com", port = ":8443" | "" }
local function parse_wildcard(o)
  local scheme, rest = o:match("^(%a[%w+.-]*)://%*(%..+)$")
  if not scheme then return nil end
  local host, port = rest:match("^([^:]+)(:%d+)$")
  if not host then host, port = rest, "" end
  return { scheme = scheme:lower(), suffix = host:lower(), port = port }
end

local function matches(self, origin)
  local o = origin:lower()
  if self.exact[o] then return true end
  local scheme, host, port = o:match("^(%a[%w+.-]*)://([^/:]+)(:?%d*)$")
  if not scheme then return false end
  for _, w in ipairs(self.wild) do
    local n = #w.suffix
    if w.scheme == scheme and w.port == port and #host > n and host:sub(-n) == w.suffix then
      local labels = host:sub(1, #host - n)
      if labels:match("^[%w.-]+$") and not ("." .. labels .. "."):find("..", 1, true) then return true end
    end
  end
  return false
end
_M.matches = matches

local function vary_origin()
  local v = ngx.header["Vary"]
  if v == nil then
    ngx.header["Vary"] = "Origin"
  else
    if type(v) ~= "table" then v = { v } end
    for _, x in ipairs(v) do
      if x:lower():find("origin", 1, true) then return end
    end
    v[#v + 1] = "Origin"
    ngx.header["Vary"] = v
  end
end

-- Echoed request headers: only header-name characters, commas and spaces survive.
local function clean_list(s)
  if not s then return nil end
  s = s:gsub("[^%w!#%$%%&'%*%+%.%^_`|~%-, ]", "")
  if s == "" then return nil end
  return s
end

local function access(self, ctx)
  local origin = ngx.var.http_origin
  if not origin or origin == "" then return false end
  if not (self.any or matches(self, origin)) then
    -- answerPreflights (Gateway API's CORS filter): a preflight from an origin not allowed is answered here too,
    -- without CORS headers (the browser then refuses), and never reaches the backend.
    if self.answer_preflights and ngx.req.get_method() == "OPTIONS" then
      local m = ngx.var.http_access_control_request_method
      if m and m ~= "" then return util.answer(204) end
    end
    return false
  end
  local allow = (self.any and not self.credentials) and "*" or origin
  ctx.portico_cors = allow
  local var = ngx.var
  local method = var.http_access_control_request_method
  if ngx.req.get_method() ~= "OPTIONS" or not method or method == "" then return false end
  -- Preflight: answered here. The header filter adds Allow-Origin/-Credentials/Vary; the rest is set now.
  ctx.portico_cors_preflight = true
  -- The preflight's answer carries every CORS header itself (no header filter runs for it in synchronous mode).
  local set = util.resp_header
  set("Access-Control-Allow-Origin", allow)
  if self.credentials then set("Access-Control-Allow-Credentials", "true") end
  if allow ~= "*" then set("Vary", "Origin") end
  set("Access-Control-Allow-Methods", self.methods or clean_list(method))
  local hdrs = self.headers or clean_list(var.http_access_control_request_headers)
  if hdrs then set("Access-Control-Allow-Headers", hdrs) end
  if self.max_age then set("Access-Control-Max-Age", self.max_age) end
  if self.expose then set("Access-Control-Expose-Headers", self.expose) end
  return util.answer(204)
end

-- The origin to allow for this request, or nil (also computed here when the access handler ran synchronously in
-- the router, whose per-request table does not reach the header filter).
local function allowed(self, ctx)
  local allow = ctx.portico_cors
  if allow ~= nil then return allow or nil end
  local origin = ngx.var.http_origin
  if origin and origin ~= "" and (self.any or matches(self, origin)) then
    allow = (self.any and not self.credentials) and "*" or origin
  end
  ctx.portico_cors = allow or false
  return allow
end

local function header_filter(self, ctx)
  if ctx.portico_cors_preflight then return end -- the preflight answer set its own headers
  local allow = allowed(self, ctx)
  if not allow then return end
  local h = ngx.header
  h["Access-Control-Allow-Origin"] = allow
  if self.credentials then h["Access-Control-Allow-Credentials"] = "true" end
  if not ctx.portico_cors_preflight and self.expose then h["Access-Control-Expose-Headers"] = self.expose end
  if allow ~= "*" then vary_origin() end
end

local function joined(list)
  if not list or #list == 0 then return nil end
  return table.concat(list, ", ")
end

function _M.new(conf)
  local self = { exact = {}, wild = {}, any = false, access = access, header_filter = header_filter }
  for _, o in ipairs(conf.allowOrigins or {}) do
    if o == "*" then
      self.any = true
    else
      local w = parse_wildcard(o)
      if w then self.wild[#self.wild + 1] = w else self.exact[o:lower()] = true end
    end
  end
  self.credentials = conf.allowCredentials == true
  self.answer_preflights = conf.answerPreflights == true
  self.methods = joined(conf.allowMethods)
  self.headers = joined(conf.allowHeaders)
  self.expose = joined(conf.exposeHeaders)
  local age = conf.maxAgeSeconds
  self.max_age = (type(age) == "number" and age > 0) and tostring(age) or nil
  return self
end

_M.parse_wildcard = parse_wildcard

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_int, array_of, header_name, bool_or_nil = C.str, C.is_int, C.array_of, C.header_name, C.bool_or_nil

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

-- The cors fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if not array_of(p.allowOrigins, 256, origin) or #p.allowOrigins == 0 then return "allowOrigins must be a non-empty array of origins" end
  if p.allowMethods ~= nil and not array_of(p.allowMethods, 32, function(m) return str(m, 32, C.TOKEN) end) then return "invalid allowMethods" end
  if p.allowHeaders ~= nil and not array_of(p.allowHeaders, 128, header_name) then return "invalid allowHeaders" end
  if p.exposeHeaders ~= nil and not array_of(p.exposeHeaders, 128, header_name) then return "invalid exposeHeaders" end
  if not bool_or_nil(p.allowCredentials) then return "allowCredentials must be a boolean" end
  if p.answerPreflights ~= nil and p.answerPreflights ~= true then return "answerPreflights must be true when present" end
  if p.maxAgeSeconds ~= nil and not is_int(p.maxAgeSeconds, 0, 31536000) then return "invalid maxAgeSeconds" end
end

return _M
