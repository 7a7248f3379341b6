-- The router: host → routes → what nginx does with the request. It runs in the server's rewrite phase from
-- set_by_lua (synchronous, no coroutine, before nginx picks a location) and returns where the request goes:
--   ""                   proxy from `location /` (the default directive profile) — the common case;
--   "@portico_<profile>" proxy from that profile's named location (nginx-only directives such as a body size);
--   "@portico_unmatched" (404: no host or path matched), "@portico_404" (a route's own 404) / "@portico_503" /
--   "@portico_413" / "@portico_https" (308 to HTTPS);
--   "@portico_deny"      an answer of its own: a redirect, or 421 for a TLS-passthrough host over HTTPS;
--   "@portico_close"     no answer, the connection closed: a Gateway port that requires a client certificate, on a
--                        connection whose certificate did not verify against the port's CA (now).
-- For proxied requests it sets $portico_backend (read by the balancer and the access log), $portico_upstream_name
-- (its ingress-nginx name, the access log's $proxy_upstream_name) and, when the route has
-- its own, $portico_timeouts, $portico_fallback (default-backend), $portico_error_route (custom-http-errors) and
-- $portico_mirror_* (mirror-target, RequestMirror). nginx.conf jumps to named locations with `error_page 418 = $portico_jump`.
--
-- Matching is nginx's location algorithm on the normalized URI ($uri): an exact path wins; otherwise regexes are
-- tried in order (case-insensitive, as ingress-nginx's `location ~*`) and the first match wins; otherwise the
-- longest matching prefix (element-wise: "/foo" matches "/foo" and "/foo/...", never "/foobar"). The URI matched is
-- nginx's normalized $uri, as ingress-nginx's locations see it: percent-decoded, "//" merged, "/./" and "/../"
-- resolved ("/a/../admin" and "/%61dmin" are "/admin"). Regex rules of Ingresses arrive anchored ("^<path>", as
-- ingress-nginx's `location ~* "^<path>"`). nginx's one auto-redirect is kept: a prefix rule the Ingress wrote with
-- a trailing slash (`location /foo/` in ingress-nginx) answers "/foo" itself with 301 to "/foo/" (query kept), after
-- exact paths and before regexes, as nginx's static location lookup does; an Exact "/foo/" does not answer "/foo".
-- Redirects to HTTPS drop a final "/" of the request URI unless the route preserves it (ingress-nginx's
-- preserve-trailing-slash). Hosts: exact name, then the "*.parent" wildcard of
-- exactly one label, then "_" (rules without host); a host that has routes never falls through to another.
-- Lookups are hash lookups in the number of hosts. A worker compiles a host's routes when a request first needs
-- them and drops that compiled form when they change, so its memory follows the hosts it serves.
local store = require("portico.store")
local certs = require("portico.certs")
local tlsctx = require("portico.tlsctx")
local plugins = require("portico.plugins")
local tracing = require("portico.tracing")
local balancer = require("portico.balancer")

local ngx_var = ngx.var
-- What every routed request writes, by index when nginx's request is at hand (varset.lua).
local varset = require("portico.varset")
local set_mk, set_backend = varset.setter("portico_mk"), varset.setter("portico_backend")
local set_upstream_name = varset.setter("portico_upstream_name")
local re_find = ngx.re.find
local sub, byte, find = string.sub, string.byte, string.find
local tonumber = tonumber
local sync = store.sync

local _M = {}

local hosts = {}          -- host -> compiled routes (hosts requested since their last change)
local known = {}          -- host -> true: routes exist in shared memory
local profiles = {}       -- profile names rendered in the running nginx.conf (from init.lua)

local https_code = 308
-- Pod ports of Gateway listeners ("20123" → "20123/", the prefix of their hosts' keys); nil without Gateways, so
-- Ingress traffic never reads $server_port.
local spaces = nil
-- TLS Gateway ports → their listeners' hostnames ("" none, ".example.com" for "*.example.com").
local tls_listeners = {}
-- Per Gateway port: its listeners' hostnames ("" none, ".example.com" for "*.example.com"), which bound the
-- fall-through across a host's routes to the listener that owns the request's name (listener isolation).
local port_listeners = {}
-- Per Gateway port with listener filters: listener hostname (as above) → its chain, "=id,id" (run in that order,
-- before route matching, on every request the listener accepts); nil for ports without any.
local port_filters = {}
function _M.configure(opts)
  profiles = {}
  for _, name in ipairs(opts.profiles or {}) do profiles[name] = true end
  spaces = nil
  for _, port in ipairs(opts.gatewayPorts or {}) do
    spaces = spaces or {}
    spaces[tostring(port)] = tostring(port) .. "/"
  end
  tls_listeners = {}
  for port, names in pairs(opts.gatewayTls or {}) do tls_listeners[tostring(port)] = names end
  port_listeners = {}
  for port, names in pairs(opts.gatewayListeners or {}) do port_listeners[tostring(port)] = names end
  port_filters = {}
  for port, by_name in pairs(opts.gatewayFilters or {}) do
    local t = {}
    for name, ids in pairs(by_name) do
      if type(ids) == "table" and #ids > 0 then t[name] = "=" .. table.concat(ids, ",") end
    end
    port_filters[tostring(port)] = t
  end
  -- http-redirect-code: the status of the redirect to HTTPS (301, 302, 307 or 308; 308 by default).
  local code = tonumber(opts.httpsRedirectCode)
  https_code = (code == 301 or code == 302 or code == 307) and code or 308
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
-- max_body = bytes|nil, https = bool, plugins = "id,id"|nil, split = {ids, cumulative weights, total}|nil,
-- no_upgrade = bool, trace = tracing.route(...)|nil }.
local function prepare(host, r, path)
  -- backendId is JSON null (cjson.null, a userdata) for a rule without a backend (a redirect): no backend here.
  local p = { https = r.sslRedirect == true, keep_slash = r.preserveTrailingSlash == true, backend = type(r.backendId) == "string" and r.backendId or nil, no_upgrade = r.websocket == false, mk = r.metrics }
  -- OpenTelemetry (tracing.lua): nil unless the route traces, so a route that does not costs one field test.
  p.trace = tracing.route(r.tracing, path, r.source)
  local lua = (type(r.plugins) == "table" and #r.plugins > 0) or r.observe == true
  if type(r.plugins) == "table" and #r.plugins > 0 then p.plugins = table.concat(r.plugins, ",") end
  if r.action == "not_found" then
    p.jump = "@portico_404"
  elseif r.action == "error" then
    -- A Gateway API rule with no backend it may use, and no filter that answers: 500, as the API asks.
    p.jump = "@portico_500"
    p.plain_jump = "@portico_500"
  elseif r.action == "unavailable" or (type(r.backendId) ~= "string" and not p.plugins) then
    -- (A rule without backends but with plugins runs them: a redirect plugin answers; otherwise the balancer
    -- finds no backend and the answer is 503.)
    p.jump = "@portico_503"
  elseif r.profile then
    if profiles[r.profile] then
      p.jump = "@portico_" .. r.profile
      p.plain_jump = p.jump
      if type(r.maxBodyBytes) == "number" and r.maxBodyBytes > 0 then p.max_body = r.maxBodyBytes end
    else
      -- Only possible if routes arrive before the reload that adds their profile: serve with the defaults.
      ngx.log(ngx.WARN, "portico: host ", host, ": directive profile ", tostring(r.profile), " is not in the running configuration; using the default one")
      p.jump = lua and "@portico_lua" or ""
    end
  else
    p.jump = lua and "@portico_lua" or ""
  end
  -- Where the request goes once its plugins ran in the router: its profile's location, the plugin location when
  -- responses must be observed (passive health) or have headers changed (decided per request), else location /.
  if p.plain_jump == nil then p.plain_jump = r.observe == true and "@portico_lua" or "" end
  local t = r.timeouts
  if type(t) == "table" then p.tk = tostring(t.connect) .. " " .. tostring(t.send) .. " " .. tostring(t.read) end
  -- Gateway API retry attempts: handed to the balancer with the timeouts ("c s r n"; "- - - n" without timeouts),
  -- so it arranges them even when the backend has one endpoint (retry() may pick the same one again).
  local ra = r.retryAttempts
  if type(ra) == "number" and ra >= 1 then p.tk = (p.tk or "- - -") .. " " .. tostring(ra) end
  -- The native path's copy (milliseconds) of the timeouts the balancer would set from p.tk (its own parse): only
  -- without retry attempts (the balancer arranges those), each a whole millisecond or more (set_timeouts truncates to
  -- milliseconds, and 0 sets none).
  local bt = p.tk and balancer.route_timeouts(p.tk)
  if bt and bt[1] and not bt.tries then
    local c, s, rd = math.floor(bt[1] * 1000), math.floor(bt[2] * 1000), math.floor(bt[3] * 1000)
    if c >= 1 and s >= 1 and rd >= 1 and c < 2147483648 and s < 2147483648 and rd < 2147483648 then p.tms = { c, s, rd } end
  end
  -- default-backend (the balancer's fallback when the backend has no endpoint), custom-http-errors (what
  -- errors.lua tells the default backend: "<default backend id>\t<namespace>\t<ingress>\t<service>\t<port>"; the
  -- route's default-backend, else errorPage.backendId, --default-backend-service's) and mirror-target (the copies'
  -- target): route data, set per request only for routes that have them.
  if type(r.defaultBackendId) == "string" then p.fallback = r.defaultBackendId end
  local e = r.errorPage
  if type(e) == "table" then
    local to = p.fallback or (type(e.backendId) == "string" and e.backendId) or ""
    p.errors = table.concat({ to, tostring(e.namespace), tostring(e.ingress), tostring(e.service), tostring(e.port) }, "\t")
  end
  -- Mirrors: the route's targets by slot for $portico_mirror_backend (balancer.lua mirror_slot: "<id>[ <share>]" per
  -- slot, tab-separated; a single whole copy is its bare id), made once here; the Host, URI and scheme are the
  -- first's (validate.lua: the same for all of a route's copies).
  local ms = r.mirrors
  if type(ms) == "table" and type(ms[1]) == "table" then
    local list = {}
    for i, m in ipairs(ms) do
      local s = m.share
      list[i] = type(s) == "table" and (m.backendId .. " " .. tostring(s.numerator / s.denominator)) or m.backendId
    end
    local m = ms[1]
    p.mirror = { list = table.concat(list, "\t"), scheme = m.scheme, host = m.host, serverName = m.serverName, requestUri = m.requestUri, path = m.path }
  end
  if type(r.split) == "table" and #r.split > 1 then
    local ids, cum, total = {}, {}, 0
    -- Gateway API backendRef filters: each share's plugins ("id,id", false for none) replace the route's.
    local pl
    for i, b in ipairs(r.split) do
      total = total + (tonumber(b.weight) or 0)
      ids[i], cum[i] = b.backendId, total
      if type(b.plugins) == "table" then
        pl = pl or {}
        pl[i] = #b.plugins > 0 and table.concat(b.plugins, ",") or false
      end
    end
    if pl then for i = 1, #ids do if pl[i] == nil then pl[i] = false end end end
    if total > 0 then p.split = { ids = ids, cum = cum, total = total, plugins = pl } end
  end
  return p
end

-- Conditions of a rule (methods, headers, query parameters), compiled: nil when the rule has none.
local function conditions(c)
  if type(c) ~= "table" then return nil end
  local out = { n = 0 }
  if type(c.methods) == "table" and #c.methods > 0 then
    out.methods = {}
    for _, m in ipairs(c.methods) do out.methods[m] = true end
    out.n = out.n + 1
  end
  local function list(items, prefix)
    if type(items) ~= "table" or #items == 0 then return nil end
    local l = {}
    for i, h in ipairs(items) do
      l[i] = { var = prefix .. string.lower(h.name):gsub("-", "_"), regex = h.type == "regex", value = h.value }
    end
    out.n = out.n + #l
    return l
  end
  out.headers = list(c.headers, "http_")
  out.query = list(c.query, "arg_")
  if out.n == 0 then return nil end
  return out
end

local function values_match(l)
  if not l then return true end
  for i = 1, #l do
    local x = l[i]
    local v = ngx_var[x.var]
    if v == nil then return false end
    if x.regex then
      if not re_find(v, x.value, "jo") then return false end
    elseif v ~= x.value then
      return false
    end
  end
  return true
end

-- The first candidate of a path whose conditions hold (candidates are in the controller's order), or nil.
local function pick(cands)
  for i = 1, #cands do
    local c = cands[i]
    local cond = c.cond
    if not cond then return c.r end
    if (not cond.methods or cond.methods[ngx_var.request_method]) and values_match(cond.headers) and values_match(cond.query) then
      return c.r
    end
  end
  return nil
end

-- Rules sharing a path and match type become one entry with its candidates in order ({cond, r}); `r` is set
-- when the only candidate has no conditions (the common case: no per-request condition work).
local function compile(host, h)
  local c = { tls = h.tls == true, passthrough = h.passthrough == true, exact = {}, prefix = {}, regex = {}, slash = {}, mk = h.metrics,
    unmatched = type(h.unmatchedBackendId) == "string" and h.unmatchedBackendId or nil }
  local seen = {}
  for _, rule in ipairs(h.rules or {}) do
    local cand = { cond = conditions(rule.conditions), r = prepare(host, rule.route or {}, rule.path) }
    local key = tostring(rule.match) .. " " .. tostring(rule.path)
    local e = seen[key]
    if e then
      e.cands[#e.cands + 1] = cand
      e.r = nil
    else
      e = { cands = { cand }, r = not cand.cond and cand.r or nil }
      seen[key] = e
      if rule.match == "exact" then
        c.exact[rule.path] = e
      elseif rule.match == "regex" then
        e.re = rule.path
        c.regex[#c.regex + 1] = e
      else
        local path = rule.path
        e.path, e.len = path, path == "/" and 0 or #path
        -- A path ending in "/" ("/foo/", from an Ingress that wrote it so) needs no boundary check after it.
        e.dir = byte(path, #path) == 47
        c.prefix[#c.prefix + 1] = e
        if rule.slashRedirect == true and #path > 1 and e.dir then c.slash[sub(path, 1, -2)] = rule.portInRedirect == true and "port" or true end
      end
    end
    -- nginx redirects "/foo" to "/foo/" only when no location is named "/foo" itself.
    for _, e in ipairs(c.prefix) do
      if not e.dir then c.slash[e.path] = nil end
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

-- The listener of a TLS Gateway port a name belongs to: its exact hostname, else the longest wildcard covering it,
-- else the listener without a hostname (""); nil when none.
local function listener_of(names, name)
  if not name or name == "" then return nil end
  name = name:lower()
  local best, best_len = nil, -1
  for i = 1, #names do
    local n = names[i]
    if n == name then return n end
    if n == "" then
      if best_len < 0 then best, best_len = "", 0 end
    elseif byte(n, 1) == 46 and #name > #n and sub(name, -#n) == n and #n > best_len then
      best, best_len = n, #n
    end
  end
  return best
end
_M._listener_of = listener_of

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

local function chosen(e)
  return e.r or pick(e.cands)
end

-- Returned by match for nginx's auto-redirect of a `location /foo/` (see the top of this file); SLASH_PORT when
-- the Ingress sets use-port-in-redirects.
local SLASH = {}
local SLASH_PORT = {}

-- nginx's location order; an entry whose candidates all have unmet conditions is passed over.
local function match(h, uri)
  local e = h.exact[uri]
  local r = e and chosen(e)
  if r then return r end
  local sl = h.slash[uri]
  if sl then return sl == "port" and SLASH_PORT or SLASH end
  local rx = h.regex
  for i = 1, #rx do
    local x = rx[i]
    if re_find(uri, x.re, "joi") then
      r = chosen(x)
      if r then return r end
    end
  end
  local px = h.prefix
  local n = #uri
  for i = 1, #px do
    local x = px[i]
    local len = x.len
    if len == 0 or (n >= len and (n == len or x.dir or byte(uri, len + 1) == 47) and sub(uri, 1, len) == x.path) then
      r = chosen(x)
      if r then return r end
    end
  end
  return nil
end

-- A Gateway port's request: Gateway API's precedence across the routes of a listener host. A host's table holds the
-- routes that name it; "<host>#<wildcard>" the routes whose wildcard hostname covers it (a narrower listener
-- hostname), "<host>#" those without hostnames. The first table, in the order of how specifically the routes'
-- own hostnames match the request's name, with a rule matching the request serves it — so an exact route's rules
-- come before a wildcard route's even with a shorter path, and a name's routes fall back to those of the wildcards
-- covering it when none of theirs matches. The name itself, then its wildcards from the most specific, then "_".
-- Nothing matching: the first table found (its metric labels; 404).
local function match_listener(space, host, uri, owners)
  -- The listener the name belongs to (its exact hostname, else the longest wildcard covering it, else the one
  -- without a hostname): only its tables are tried, never those of a listener another name belongs to.
  local owner = owners and listener_of(owners, host)
  if owners and not owner then return nil, nil end -- a name no listener of the port takes
  -- The name and every wildcard covering it, most specific first; the tables' names ("bases") stop at the owner's
  -- hostname, while a route's wildcard hostname (a tier) may be broader than its listener's.
  local all = {}
  if host then
    all[1] = host
    local dot = find(host, ".", 1, true)
    while dot do
      all[#all + 1] = "*" .. sub(host, dot)
      dot = find(host, ".", dot + 1, true)
    end
  end
  local bases = #all
  if owner and owner ~= "" then
    local stop = byte(owner, 1) == 46 and "*" .. owner or owner
    for i = 1, #all do
      if all[i] == stop then bases = i; break end
    end
  end
  local first
  local function try(key)
    local h = get_host(space .. key)
    if not h then return nil end
    first = first or h
    return match(h, uri), h
  end
  local r, h
  for i = 1, bases do
    local n = all[i]
    r, h = try(n)
    if r then return h, r end
    for j = i + 1, #all do
      r, h = try(n .. "#" .. all[j])
      if r then return h, r end
    end
    r, h = try(n .. "#")
    if r then return h, r end
  end
  if not owner or owner == "" then
    r, h = try("_")
    if r then return h, r end
  end
  return first, nil
end
_M._match_listener = match_listener

-- A redirect answered by @portico_deny (plugins.answer): status, no body (nginx's own page), a Location header.
local function redirect(status, location)
  ngx_var.portico_deny = status .. "\n\nLocation\t" .. location:gsub("[%c]", "")
  return "@portico_deny"
end

-- Characters a path may not carry as they are in a Location header (the matched $uri is decoded).
local function escape_path(s)
  return (s:gsub("[^%w%-%._~!%$&'%(%)%*%+,;=:@/]", function(c) return string.format("%%%02X", c:byte()) end))
end

-- The native path (native.lua; nil without Portico's variables module, as in the unit tests unless they install one):
-- the hosts this worker routes, with the backends of their plain routes, registered for nginx to route without Lua.
local native = require("portico.native")
if type(native) ~= "table" then native = nil end
local native_gen = nil     -- the generation of the data the native table was last reset for
local native_epoch = 0     -- bumped at each reset: hosts registered before it are registered again
local native_backends = {} -- backend id -> registered (true) or not possible (false), this epoch
-- Names served through a wildcard or "_" (the client's Host), registered as names of their own, this epoch: at most
-- N_MAX_ALIASES per epoch, so Host names a client makes up cannot grow the table (the rest go to the router).
local native_aliases, native_nalias = {}, 0
local N_MAX_ALIASES = 256
-- Flags of native.lua's host() and path().
local N_TLS, N_REGEX, N_HTTPS, N_NO_UPGRADE, N_DECLINE = 1, 2, 1, 2, 4
local N_MAX_PATHS = 64

local random = math.random
local run_sync = plugins.run_sync
local store_get = store.get
local upstream_name = store.upstream_name

-- Whether a backend's responses must be observed in the log phase (ewma latencies, passive health), decided per
-- request from the backend data — so switching a backend to ewma or adding health checking is data, never a
-- reload, and plugin-free routes to other backends keep the location without Lua phases. Cached on the decoded
-- backend (dropped when it changes); a canary backend is checked each time (it changes on its own).
local function observed(id)
  local b = store_get(id)
  if not b then return false end
  local o = b._portico_observe
  if o == nil then
    o = b.balance == "ewma" or type(b.passiveHealth) == "table"
    b._portico_observe = o
  end
  if o then return true end
  local c = b.canary
  if type(c) == "table" then
    local cb = store_get(c.backendId)
    return cb ~= nil and (cb.balance == "ewma" or type(cb.passiveHealth) == "table")
  end
  return false
end
-- A route nginx can serve from the native table: proxied from `location /` to one backend that round-robin balances,
-- with nothing else for the router to do than write $portico_backend, $portico_upstream_name and $portico_mk (the
-- redirect to HTTPS and a refused Upgrade are tested natively and left to the router when they apply); its own
-- timeouts, if any, nginx applies to the request (r.tms).
local function plain(r)
  return r.jump == "" and r.plain_jump == "" and r.backend ~= nil and r.backend ~= "" and not (r.plugins or r.split
    or (r.tk and not r.tms) or r.fallback or r.errors or r.mirror or r.max_body or r.trace) and not observed(r.backend)
end

local function native_backend(id)
  local ok = native_backends[id]
  if ok == nil then
    local peers, more = balancer.fast_peers(id)
    ok = peers ~= nil and #peers > 0 and native.backend(id, peers, more) or false
    native_backends[id] = ok
  end
  return ok
end

local function native_path(path, e, host_mk)
  local r = e.r
  -- (A route's own empty labels replace the host's in the router; nginx's table falls back to the host's: left out.)
  if r and r ~= SLASH and r ~= SLASH_PORT and plain(r) and not (r.mk == "" and host_mk)
    and native_backend(r.backend) then
    local flags = (r.https and N_HTTPS or 0) + (r.no_upgrade and N_NO_UPGRADE or 0)
    return native.path(path, r.backend, upstream_name(r.backend), r.mk or "", flags, r.tms)
  end
  return native.path(path, "", "", "", N_DECLINE)
end

-- Registers host h under `name` (its own, or a name it serves through a wildcard or "_") with its paths in nginx's
-- order (exact, slash redirects, prefixes longest first). A host the native path cannot serve at all (too many
-- paths, TLS passed through) is not registered.
local function native_register(name, h)
  if h.passthrough then return end
  local exact, slash = {}, {}
  for path, e in pairs(h.exact) do exact[#exact + 1] = path end
  for path in pairs(h.slash) do slash[#slash + 1] = path end
  local px = h.prefix
  if #exact + #slash + #px > N_MAX_PATHS then return end
  local flags = (h.tls and N_TLS or 0) + (#h.regex > 0 and N_REGEX or 0)
  if not native.host(name, h.mk or "", flags, #exact, #slash, #px) then return end
  for i = 1, #exact do
    if not native_path(exact[i], h.exact[exact[i]], h.mk) then return end
  end
  for i = 1, #slash do
    if not native.path(slash[i], "", "", "", N_DECLINE) then return end
  end
  for i = 1, #px do
    if not native_path(px[i].path, px[i], h.mk) then return end
  end
end
_M._native_register = native_register

-- The share of a split a request goes to: its index, drawn in proportion to the weights.
local function split_pick(s)
  local x = random() * s.total
  local cum = s.cum
  for i = 1, #cum do
    if x < cum[i] then return i end
  end
  return #cum
end

-- The request was sampled by tracing.start (tracing.lua): route_traced sends it to a location with a log handler.
local sampled = false

-- Called by set_by_lua for every request; returns the jump target ("" = proxy from location /).
-- host, uri: $host and $uri, passed by set_by_lua (http.hbs); read from ngx.var when absent.
-- listened: the request's listener filters already ran (listener_access): route it, nothing before.
-- req: nginx's request, when route_set hands the balancer what this routing writes into $portico_backend and
-- $portico_timeouts (balancer.lua handoff; nil: no hand-off). Every routing drops an earlier hand-off first.
local balancer_handoff = balancer.handoff
local peer_handoff = balancer.peer_handoff
local is_internal = function() return true end -- set below, where nginx's request is at hand
local function route(host, uri, listened, req)
  balancer_handoff(nil)
  -- external-auth subrequests run the server phases again: they are not routed (their location is internal).
  if ngx.is_subrequest then return "" end
  -- Only on a request's first routing: after an internal redirect (a backend's X-Accel-Redirect) $portico_timeouts
  -- may still hold what an earlier routing wrote, which this one might not rewrite.
  if req ~= nil and is_internal(req) then req = nil end
  if host == nil then host, uri = ngx_var.host, ngx_var.uri end
  sync()
  if native then
    local g = store.generation()
    if g ~= native_gen then
      native_gen, native_epoch, native_backends = g, native_epoch + 1, {}
      native_aliases, native_nalias = {}, 0
      local ports = {}
      if spaces then for p in pairs(spaces) do ports[#ports + 1] = tonumber(p) end end
      native.reset(g, ports)
    end
  end
  local h, r
  local lfilters
  local port = spaces and ngx_var.server_port
  local space = port and spaces[port]
  if space then
    local names = not listened and tls_listeners[port]
    if names then
      -- Gateway API spec.tls.frontend, AllowValidOnly: the handshake refused clients without a certificate
      -- (certs.lua); one whose certificate did not verify (nginx lets the handshake finish), or was verified against
      -- another CA than the port's current one (a connection older than a CA change), gets no answer at all.
      local id, ca = certs.client_auth(nil, tonumber(port))
      if id and (not ca or ca.strict) and (ngx_var.ssl_client_verify ~= "SUCCESS" or tlsctx.get() ~= id) then
        return "@portico_close"
      end
      -- Gateway API: the TLS server name and the Host header must pick the same listener of the port, else the
      -- client reused a connection for a host another listener (and maybe another certificate) serves: 421.
      local sni = ngx_var.ssl_server_name
      if sni and sni ~= "" and listener_of(names, sni) ~= listener_of(names, host) then
        ngx_var.portico_deny = "421\nMisdirected Request"
        return "@portico_deny"
      end
    end
    -- Gateway API listener filters: the chain of the listener the name belongs to runs before route matching, on
    -- every request it accepts (matched or not: a refusal never tells whether a path exists). A chain that must
    -- yield (external auth) runs in @portico_listener's access phase, which then routes the request (listener_access).
    local lf = port_filters[port]
    if lf and not listened then
      local chain = lf[listener_of(port_listeners[port], host) or false]
      if chain then
        local answer, filters = run_sync(chain)
        if answer == "async" then
          ngx_var.portico_plugins = chain
          return "@portico_listener"
        elseif answer then
          return answer
        end
        lfilters = filters
      end
    end
    h, r = match_listener(space, host, uri, port_listeners[port])
  else
    h = find_host(host)
    -- Registered for the native path once per epoch: a host by its exact name; a name reached through a wildcard or
    -- "_" as a name of its own (the same routes: nothing here depends on the name), within the epoch's bound.
    if native and h then
      if hosts[host] == h then
        if h.native ~= native_epoch then
          h.native = native_epoch
          native_register(host, h)
        end
      elseif host and not native_aliases[host] and native_nalias < N_MAX_ALIASES then
        native_aliases[host] = true
        native_nalias = native_nalias + 1
        native_register(host, h)
      end
    end
  end
  if not h then return "@portico_unmatched" end
  if h.passthrough and ngx_var.scheme == "https" then
    -- TLS for this host is passed through to its backend (ssl-passthrough): a request for it on a connection Portico
    -- terminated (another server name in the handshake, or a connection a client reuses for several hosts) is not
    -- served here. 421 tells the client to open a connection of its own for the host, which is then passed through.
    ngx_var.portico_deny = "421\nMisdirected Request"
    return "@portico_deny"
  end
  if not space then r = match(h, uri) end
  -- Metric labels (read by the metrics module, nginx-assets/modules/portico_metrics): the route's, else the host's for what no path matches (only with --enable-metrics).
  local mk = r and r.mk or h.mk
  if mk then set_mk(req, mk) end
  if not r then
    -- --default-backend-service (ingress-nginx's catch-all): what no path matches is proxied there, as sent.
    if h.unmatched then
      set_backend(req, h.unmatched)
      if req then balancer_handoff(req, h.unmatched, nil) end
      set_upstream_name(req, upstream_name(h.unmatched))
      return ""
    end
    return "@portico_unmatched"
  end
  local tr = r.trace
  if tr and tracing.start(tr) then sampled = true end
  if r == SLASH or r == SLASH_PORT then
    -- nginx: Location is the location's name (escaped) and the query, made absolute by nginx's header filter
    -- without a port (port_in_redirect off, ingress-nginx's default); with use-port-in-redirects, absolute here with
    -- the port clients connect to (the published one) unless it is the scheme's default.
    local args = ngx_var.args
    local loc = escape_path(uri) .. "/" .. ((args and args ~= "") and ("?" .. args) or "")
    if r == SLASH_PORT then
      local scheme, port = ngx_var.scheme, ngx_var.portico_forwarded_port_published
      local default = (scheme == "https" and "443") or "80"
      loc = scheme .. "://" .. host .. ((port and port ~= default) and (":" .. port) or "") .. loc
    end
    return redirect(301, loc)
  end
  -- The scheme the client used: $portico_forwarded_proto is a trusted load balancer's (use-forwarded-headers:
  -- X-Forwarded-Proto; use-proxy-protocol: destination port 443), else nginx's own, as ingress-nginx's
  -- $pass_access_scheme; so a request the load balancer received over HTTPS is never redirected again (no loop).
  if r.https and (ngx_var.portico_forwarded_proto or ngx_var.scheme) == "http" then
    -- ingress-nginx's redirect to HTTPS drops a final "/" of $request_uri unless preserve-trailing-slash is set
    -- ("/docs/" → "https://host/docs", "/" → "https://host"). The host is the forwarded one without its port.
    if not r.keep_slash then
      local ru = ngx_var.request_uri or ""
      if byte(ru, #ru) == 47 then return redirect(https_code, "https://" .. (ngx_var.portico_redirect_host or host) .. sub(ru, 1, -2)) end
    end
    return "@portico_https"
  end
  if h.tls then ngx_var.portico_tls_host = "1" end
  if r.no_upgrade and ngx_var.http_upgrade then return "@portico_400" end
  local jump = r.jump
  local plain_jump = r.plain_jump
  local plugins = r.plugins
  local fast_id = nil -- the backend, when the balancer's first pick may be made here (below)
  if r.backend and jump ~= "@portico_503" then
    local id = r.backend
    local s = r.split
    if s then
      local i = split_pick(s)
      id = s.ids[i]
      local sp = s.plugins
      if sp then plugins = sp[i] or nil end
    end
    if id == "" then return "@portico_500" end
    set_backend(req, id)
    -- The access log's $proxy_upstream_name, named here once instead of derived per request by maps and a regex.
    set_upstream_name(req, upstream_name(id))
    if jump == "" and observed(id) then
      jump = "@portico_lua"
      if plain_jump == "" then plain_jump = "@portico_lua" end
    end
    if r.tk then ngx_var.portico_timeouts = r.tk end
    if req then
      balancer_handoff(req, id, r.tk)
      if not r.tk then fast_id = id end
    end
    if r.fallback then ngx_var.portico_fallback = r.fallback end
    if r.errors then ngx_var.portico_error_route = r.errors end
    local m = r.mirror
    if m then
      ngx_var.portico_mirror_backend = m.list
      ngx_var.portico_mirror_scheme = m.scheme
      ngx_var.portico_mirror_host = m.host ~= "" and m.host or ngx_var.http_host or host
      ngx_var.portico_mirror_sni = m.serverName
      if m.requestUri then
        ngx_var.portico_mirror_uri = ngx_var.request_uri
      else
        local args = ngx_var.args
        ngx_var.portico_mirror_uri = (args and args ~= "") and (m.path .. "?" .. args) or m.path
      end
    end
    local max = r.max_body
    if max then
      local cl = tonumber(ngx_var.content_length)
      if cl and cl > max then
        warn_once("413", "portico: request body of ", cl, " bytes exceeds the route's limit of ", max)
        return "@portico_413"
      end
    end
  end
  if plugins and jump ~= "@portico_503" then
    local answer, filters = run_sync(plugins)
    if answer == "async" then
      ngx_var.portico_plugins = plugins -- the plugin location's access phase runs them
      -- (A share's own plugins on a route without any: the plugin location, not location /.)
      if jump == "" then jump = "@portico_lua" end
    elseif answer then
      return answer
    elseif filters then
      ngx_var.portico_filters = filters
      jump = plain_jump == "" and "@portico_lua" or plain_jump
    else
      jump = plain_jump
    end
  end
  -- The listener's response-header handlers (plugins.header_filter runs them after the route's).
  if lfilters then
    ngx_var.portico_lfilters = lfilters
    if jump == "" then jump = "@portico_lua" end
  end
  -- Proxied from `location /`, where nothing runs between here and the balancer: the first attempt's endpoint is
  -- picked now and handed to nginx (balancer.peer_handoff; any other location is reached by a jump that clears it,
  -- and its balancer picks as before). Not for a route with timeouts of its own: the balancer applies them.
  if fast_id and jump == "" then peer_handoff(req, fast_id) end
  return jump
end
_M.route = route

local plugins_access = plugins.access
-- Access phase of @portico_listener: the listener's chain ($portico_plugins, set by the router), then the request
-- is routed as it now is (an auth service's headers are on it) and goes where its route sends it. The route's own
-- plugins run there (ngx.exec starts afresh: what the listener's chain kept in ngx.ctx is gone, so its
-- response-header handlers are handed over in $portico_lfilters).
function _M.listener_access()
  if plugins_access() then return end
  local f = ngx.ctx.portico_filters
  if f and #f > 0 then
    local ids = {}
    for i = 1, #f do ids[i] = f[i].id end
    ngx_var.portico_lfilters = table.concat(ids, ",")
  end
  ngx_var.portico_plugins = ""
  local jump = route(nil, nil, true)
  -- location / is not named: the plugin location proxies the same (with no plugins left to run).
  if jump == "" then jump = "@portico_lua" end
  return ngx.exec(jump)
end

-- set_by_lua's entry point when tracing is configured (http.hbs). `location /`, the common case, has no log handler
-- (a Lua log handler costs every request that reaches it), so a sampled request bound there goes to
-- @portico_traced, the same with a log handler that records the span. Every other location a request can end in
-- has a log handler then.
local route_main = _M.route
function _M.route_traced(host, uri, req)
  sampled = false
  local jump = route_main(host, uri, nil, req)
  if sampled and jump == "" then return "@portico_traced" end
  return jump
end

-- set_by_lua's entry points (http.hbs: `route_set()`): $host and $uri are read through Portico's variables module
-- (ngx_http_portico_vars_host_uri: where nginx keeps them, no variable evaluated). As set_by_lua's arguments each was
-- a complex value evaluated per request before lua-nginx-module made it a Lua string (~600 instructions a request
-- more, e2e/bench/dataplane-cg.ts); ngx.var would look each name up in a hash. Arguments, when given (the unit
-- tests' mocked ngx, which has no request), are used as they are; an empty one is nil, as ngx.arg gives it.
-- r: nginx's request (nil in the unit tests: no hand-off to the balancer).
local get_request = function() return nil end
local host_uri = nil -- (r) -> host, uri
do
  local base = package.loaded["resty.core.base"]
  if type(base) == "table" and base.get_request then get_request = base.get_request end
  if package.loaded["resty.core.param"] then -- in nginx (lua-resty-core)
    local ffi = require("ffi")
    local C = ffi.C
    pcall(ffi.cdef, "int ngx_http_lua_ffi_req_is_internal(ngx_http_request_t *r);")
    local req_is_internal = C.ngx_http_lua_ffi_req_is_internal
    is_internal = function(r) return req_is_internal(r) ~= 0 end
    pcall(ffi.cdef, [[
      void ngx_http_portico_vars_host_uri(void *r, const unsigned char **host, size_t *host_len,
        const unsigned char **uri, size_t *uri_len);
    ]])
    if pcall(function() return C.ngx_http_portico_vars_host_uri end) then
      local read = C.ngx_http_portico_vars_host_uri
      local ffi_string = ffi.string
      local hp, up = ffi.new("const unsigned char *[1]"), ffi.new("const unsigned char *[1]")
      local hl, ul = ffi.new("size_t[1]"), ffi.new("size_t[1]")
      host_uri = function(r)
        read(r, hp, hl, up, ul)
        return ffi_string(hp[0], hl[0]), ffi_string(up[0], ul[0])
      end
    end
  end
end
local function arg(s) if s == "" then return nil end return s end
local function host_and_uri(host, uri, r)
  if host == nil and uri == nil and r ~= nil and host_uri then host, uri = host_uri(r) end
  return arg(host), arg(uri)
end
function _M.route_set(host, uri)
  local r = get_request()
  host, uri = host_and_uri(host, uri, r)
  return route(host, uri, nil, r)
end
local route_traced = _M.route_traced
function _M.route_traced_set(host, uri)
  local r = get_request()
  host, uri = host_and_uri(host, uri, r)
  return route_traced(host, uri, r)
end

-- The route a host serves a path with (external-auth's auth URL on the request's own host, plugins/external_auth.lua):
-- the same host and path lookup as a request's, without side effects. nil when nothing matches, or only nginx's
-- "/foo" → "/foo/" redirect; else the prepared route (backend, plugins "id,id", jump) and whether it is the host's
-- catch-all prefix "/".
function _M.lookup(host, uri)
  local h = find_host(host)
  local r = h and match(h, uri)
  if r == nil or r == SLASH or r == SLASH_PORT then return nil end
  local px = h.prefix
  local root = px[#px]
  if root and root.len == 0 then
    for _, c in ipairs(root.cands) do
      if c.r == r then return r, true end
    end
  end
  return r, false
end

-- For tests.
function _M._hosts() return hosts end

return _M
