-- The router: host → routes → what nginx does with the request. It runs in the server's rewrite phase from
-- set_by_lua (synchronous, no coroutine, before nginx picks a location) and returns where the request goes:
--   ""                   proxy from `location /` (the default directive profile) — the common case;
--   "@portico_<profile>" proxy from that profile's named location (nginx-only directives such as a body size);
--   "@portico_404" / "@portico_503" / "@portico_413" / "@portico_https" (308 to HTTPS).
-- For proxied requests it sets $portico_backend (read by the balancer and the access log) and, when the route has
-- its own, $portico_timeouts. nginx.conf jumps to named locations with `error_page 418 = $portico_jump`.
--
-- Matching is nginx's location algorithm on the normalized URI ($uri): an exact path wins; otherwise regexes are
-- tried in order (case-insensitive, as ingress-nginx's `location ~*`) and the first match wins; otherwise the
-- longest matching prefix (element-wise: "/foo" matches "/foo" and "/foo/...", never "/foobar"). There is no
-- auto-redirect: an Exact "/foo/" does not answer "/foo". Hosts: exact name, then the "*.parent" wildcard of
-- exactly one label, then "_" (rules without host); a host that has routes never falls through to another.
-- Lookups are hash lookups in the number of hosts. A worker compiles a host's routes when a request first needs
-- them and drops that compiled form when they change, so its memory follows the hosts it serves.
local store = require("portico.store")

local ngx_var = ngx.var
local re_find = ngx.re.find
local sub, byte, find = string.sub, string.byte, string.find
local tonumber = tonumber
local sync = store.sync

local _M = {}

local hosts = {}          -- host -> compiled routes (hosts requested since their last change)
local known = {}          -- host -> true: routes exist in shared memory
local profiles = {}       -- profile names rendered in the running nginx.conf (from init.lua)

function _M.configure(opts)
  profiles = {}
  for _, name in ipairs(opts.profiles or {}) do profiles[name] = true end
end

local logged_at = {}
local function warn_once(key, ...)
  local now = ngx.now()
  if (logged_at[key] or 0) + 10 <= now then
    logged_at[key] = now
    ngx.log(ngx.WARN, ...)
  end
end

-- Per-route answer, computed once per data change: { jump = string, backend = id|nil, tk = "c s r"|nil,
-- max_body = bytes|nil, https = bool }.
local function prepare(host, r)
  local p = { https = r.sslRedirect == true, backend = r.backendId }
  if r.action == "not_found" then
    p.jump = "@portico_404"
  elseif r.action == "unavailable" or type(r.backendId) ~= "string" then
    p.jump = "@portico_503"
  elseif r.profile then
    if profiles[r.profile] then
      p.jump = "@portico_" .. r.profile
      if type(r.maxBodyBytes) == "number" and r.maxBodyBytes > 0 then p.max_body = r.maxBodyBytes end
    else
      -- Only possible if routes arrive before the reload that adds their profile: serve with the defaults.
      ngx.log(ngx.WARN, "portico: host ", host, ": directive profile ", tostring(r.profile), " is not in the running configuration; using the default one")
      p.jump = ""
    end
  else
    p.jump = ""
  end
  local t = r.timeouts
  if type(t) == "table" then p.tk = tostring(t.connect) .. " " .. tostring(t.send) .. " " .. tostring(t.read) end
  return p
end

local function compile(host, h)
  local c = { tls = h.tls == true, exact = {}, prefix = {}, regex = {} }
  for _, rule in ipairs(h.rules or {}) do
    local p = prepare(host, rule.route or {})
    if rule.match == "exact" then
      if c.exact[rule.path] == nil then c.exact[rule.path] = p end
    elseif rule.match == "regex" then
      c.regex[#c.regex + 1] = { re = rule.path, r = p }
    else
      local path = rule.path
      c.prefix[#c.prefix + 1] = { path = path, len = path == "/" and 0 or #path, r = p }
    end
  end
  -- Longest first (the controller sends them so; a stable re-sort keeps the router right whatever arrives).
  table.sort(c.prefix, function(a, b) if a.len ~= b.len then return a.len > b.len end return a.path < b.path end)
  return c
end

store.on_routes(function(host, present)
  known[host] = present or nil
  hosts[host] = nil
end)

local read_routes = store.read_routes
local function get_host(name)
  local h = hosts[name]
  if h or not known[name] then return h end
  local raw = read_routes(name)
  if not raw then return nil end
  h = compile(name, raw)
  hosts[name] = h
  return h
end

local function find_host(host)
  local h = host and get_host(host)
  if h then return h end
  if host then
    local dot = find(host, ".", 1, true)
    if dot then
      h = get_host("*" .. sub(host, dot))
      if h then return h end
    end
  end
  return get_host("_")
end

local function match(h, uri)
  local r = h.exact[uri]
  if r then return r end
  local rx = h.regex
  for i = 1, #rx do
    local x = rx[i]
    if re_find(uri, x.re, "joi") then return x.r end
  end
  local px = h.prefix
  local n = #uri
  for i = 1, #px do
    local x = px[i]
    local len = x.len
    if len == 0 then return x.r end
    if n >= len and (n == len or byte(uri, len + 1) == 47) and sub(uri, 1, len) == x.path then return x.r end
  end
  return nil
end

-- Called by set_by_lua for every request; returns the jump target ("" = proxy from location /).
function _M.route()
  sync()
  local h = find_host(ngx_var.host)
  if not h then return "@portico_404" end
  local r = match(h, ngx_var.uri)
  if not r then return "@portico_404" end
  if r.https and ngx_var.scheme == "http" then return "@portico_https" end
  if h.tls then ngx_var.portico_tls_host = "1" end
  local jump = r.jump
  if r.backend and jump ~= "@portico_503" then
    ngx_var.portico_backend = r.backend
    if r.tk then ngx_var.portico_timeouts = r.tk end
    local max = r.max_body
    if max then
      local cl = tonumber(ngx_var.content_length)
      if cl and cl > max then
        warn_once("413", "portico: request body of ", cl, " bytes exceeds the route's limit of ", max)
        return "@portico_413"
      end
    end
  end
  return jump
end

-- For tests.
function _M._hosts() return hosts end

return _M
