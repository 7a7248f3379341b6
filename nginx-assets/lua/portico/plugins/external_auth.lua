-- external-auth: asks an auth service (a backend, reached through the balancer like any other) whether the request
-- may pass, with a subrequest to the internal location /_portico_internal/auth (see nginx.conf):
--   - it carries the client's request headers (all, or only `forwardHeaders`), without the body, plus
--     X-Forwarded-Method, X-Forwarded-Uri (as the client sent it), X-Forwarded-Host, X-Forwarded-Proto, and
--     X-Forwarded-For / X-Real-IP set to the client address (a client's own values never reach the auth service);
--   - 2xx → the request goes on, with the auth response's `upstreamHeaders` set on the proxied request;
--   - 401 / 403 → that status to the client, with the auth response's `clientHeaders` (e.g. WWW-Authenticate,
--     Location);
--   - anything else, a timeout or an error → 503 (fails closed), with the reason in the error log.
-- A subrequest shares the client request's headers, and ngx_lua 0.10.23 cannot give it others: the headers are
-- changed on the client request just before the subrequest starts (it copies them) and put back right after.
--
-- ingress-nginx mode (conf.ingressNginx: auth-url / global-auth-url annotations, see reconcilers/annotations/
-- auth-url.ts): nginx auth_request's semantics instead —
--   - every client header goes, plus X-Original-URL, X-Original-Method, X-Sent-From, X-Real-IP and X-Forwarded-For
--     (the client address), X-Auth-Request-Redirect (auth-request-redirect, default the request URI), with
--     auth-method also X-Original-URI and X-Scheme; X-Forwarded-Proto is removed, and a client's X-Forwarded-Host /
--     -Port are replaced by the trusted values (use-forwarded-headers); Host is the auth URL's host;
--   - 2xx → on, with auth-response-headers set (or removed) on the proxied request and the auth response's
--     Set-Cookie added to the answer (200, 201, 204, 206, 301-304, 307, 308, or any with alwaysSetCookie);
--   - 401 → 401 with the auth service's WWW-Authenticate, or with auth-signin a 302 to it (rd = the request's own
--     URL) carrying the Set-Cookie; 403 → 403; anything else, a timeout or an error → 500 (the reason logged);
--   - auth-snippet (ingressNginx.snippet, compiled by the controller): its set / if / request-header statements run
--     (snippet.lua's run_auth) on the headers the subrequest copies, after auth-proxy-set-headers, and are put back
--     with the others;
--   - auth-cache-key: answers kept in the shared dict portico_auth_cache per plugin, host and key, for the seconds
--     auth-cache-duration gives their status — except, as with nginx's proxy_cache, answers with Set-Cookie,
--     Cache-Control no-store / no-cache / private / max-age=0, or Vary: *.
-- Template values (sign-in URL, X-Auth-Request-Redirect, cache key, the auth URL's path and query) read only the
-- variables the controller allowlisted; what a variable brings in is percent-encoded where it could break a header
-- or the URI.
-- An auth URL on the request's own host (ownHost: "https://$host/oauth2/auth", the oauth2-proxy pattern) is not
-- resolved by name: the subrequest goes to the backend of the route this host serves the auth path with (the
-- router's own lookup), so it reaches what the host already routes to and nothing else. It fails closed (500, logged)
-- when the host has no such route (its catch-all "/" does not count: that is the application), when that route
-- requires authentication itself (a loop) or, unless the ConfigMap allows other namespaces, when the route's backend
-- is another namespace's. The hop is plain HTTP; the auth service sees X-Forwarded-Proto = the auth URL's scheme.
local util = require("portico.plugins.util")
local cjson = require("cjson.safe")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "external-auth"
_M.order = 6
-- Identifies the client (a consumer): a consumer's own plugins replace or join only those that run after the last
-- of these (plugins.lua).
_M.auth = true
-- May be flagged satisfyAny (ingress-nginx's `satisfy any`, plugins.lua).
_M.satisfy_any = true
-- Must run in the access phase (a subrequest yields): a chain with it is not run synchronously in the router.
_M.async = true

local function header_list(v)
  if type(v) == "table" then return v end
  return { v }
end

-- A setter of request headers that remembers each header's first value (saved, by lower-case name), so the caller
-- can put the request back as it was after the subrequest; also returns the request headers as they were.
local function header_changer()
  local saved = {}
  local get = ngx.req.get_headers(0, true)
  local set, clear = ngx.req.set_header, ngx.req.clear_header
  local function change(name, value)
    local lname = name:lower()
    if saved[lname] == nil then
      local old
      for k, v in pairs(get) do
        if k:lower() == lname then old = v; break end
      end
      saved[lname] = { name = name, value = old }
    end
    if value == nil then clear(name) else set(name, value) end
  end
  return change, saved, get
end

-- Changes the request headers the subrequest will copy; returns what to put back.
local function prepare(self)
  local change, saved, get = header_changer()
  if self.forward then
    for k in pairs(get) do
      local l = k:lower()
      if not self.forward[l] and l ~= "host" then change(k, nil) end
    end
  end
  local var = ngx.var
  change("X-Forwarded-Method", ngx.req.get_method())
  change("X-Forwarded-Uri", var.request_uri)
  change("X-Forwarded-Host", var.portico_forwarded_host or var.host)
  change("X-Forwarded-Proto", var.portico_forwarded_proto or var.scheme)
  change("X-Forwarded-For", var.remote_addr)
  change("X-Real-IP", var.remote_addr)
  -- The subrequest has variables of its own: without this, a request that brought no X-Request-ID would get a
  -- second generated id there. The auth service sees the id the request is proxied with.
  change("X-Request-ID", var.req_id)
  return saved
end

local function restore(saved)
  local set, clear = ngx.req.set_header, ngx.req.clear_header
  for _, s in pairs(saved) do
    if s.value == nil then clear(s.name) else set(s.name, s.value) end
  end
end

-- Response headers of the subrequest, by lower-case name.
local function lower_headers(h)
  local out = {}
  for k, v in pairs(h or {}) do out[k:lower()] = v end
  return out
end

-- Gateway API mode (a listener's ExternalAuth filter): the auth request has the client's method, and its URI is the
-- instance's path (a prefix, "" for none) followed by the client's path and query.
local function gateway_opts(self)
  local m = ngx.req.get_method()
  local vars = {}
  for k, v in pairs(self.opts.vars) do vars[k] = v end
  vars.portico_auth_uri = self.prefix .. (ngx.var.request_uri or "/")
  vars.portico_auth_method = m
  return { method = ngx["HTTP_" .. m] or ngx.HTTP_GET, vars = vars }
end
-- Auth response headers never set on the request (allUpstreamHeaders): the Host/authority and the framing ones.
local NOT_UPSTREAM = { host = true, [":authority"] = true, ["content-length"] = true, ["transfer-encoding"] = true,
  connection = true, ["keep-alive"] = true, upgrade = true, te = true, trailer = true, ["proxy-connection"] = true }
local function access(self)
  local saved = prepare(self)
  local res = ngx.location.capture("/_portico_internal/auth", self.prefix and gateway_opts(self) or self.opts)
  restore(saved)
  local status = res and res.status or 0
  if status >= 200 and status < 300 then
    if self.all_upstream then
      for name, v in pairs(res.header or {}) do
        if not NOT_UPSTREAM[name:lower()] then ngx.req.set_header(name, v) end
      end
    elseif #self.upstream > 0 then
      local h = lower_headers(res.header)
      for _, name in ipairs(self.upstream) do
        local v = h[name]
        if v ~= nil then ngx.req.set_header(name, v) else ngx.req.clear_header(name) end
      end
    end
    return false
  end
  if status == 401 or status == 403 then
    local h = lower_headers(res.header)
    local copy = {}
    for _, name in ipairs(self.client) do
      if h[name] ~= nil then copy[name] = header_list(h[name]) end
    end
    return util.deny(status, copy)
  end
  local why = res and res.truncated and "the response was truncated" or ("it answered " .. status)
  if status == 0 then why = "no answer" elseif status == 504 then why = "timed out (504)" elseif status == 502 then why = "cannot be reached (502)" end
  util.log_every("external-auth:" .. self.backend .. ":" .. status, ngx.ERR, "portico: external-auth ", self.name,
    ": auth service ", self.backend, " ", why, "; answering 503")
  return util.deny(503)
end

-- ---- ingress-nginx mode -----------------------------------------------------------------------------------------
local COOKIE_STATUSES = { [200] = true, [201] = true, [204] = true, [206] = true, [301] = true, [302] = true,
  [303] = true, [304] = true, [307] = true, [308] = true }

-- Anything a header value may not hold literally (controls, space, non-ASCII), percent-encoded.
local function header_safe(v)
  return (tostring(v or ""):gsub("[^\33-\126]", function(c) return string.format("%%%02X", c:byte()) end))
end

-- The Host the client used when it names this host ($http_host, with its port), else $host.
local function own_host()
  local var = ngx.var
  local h = var.host or ""
  local hh = var.http_host
  if hh then
    hh = hh:lower()
    local name = hh:match("^([a-z0-9.-]+):%d+$") or hh:match("^([a-z0-9.-]+)$")
    if name and name:gsub("%.$", "") == h then return hh end
  end
  return h
end

local function scheme()
  local var = ngx.var
  return var.portico_forwarded_proto or var.scheme or "http"
end

local VARS = {
  scheme = scheme,
  host = function() return ngx.var.host or "" end,
  http_host = own_host,
  request_uri = function() return ngx.var.request_uri or "" end,
  escaped_request_uri = function() return ngx.escape_uri(ngx.var.request_uri or "") end,
  uri = function() return ngx.var.uri or "" end,
  -- the request's own URL: ingress-nginx's $pass_access_scheme://$http_host$escaped_request_uri
  rd = function() return scheme() .. "://" .. own_host() .. ngx.escape_uri(ngx.var.request_uri or "") end,
}

-- Evaluates a template (literal strings and { v = name }); `encode(value, name)`, when given, encodes what each
-- variable brings in.
local function eval(parts, encode)
  local out = {}
  for i, p in ipairs(parts) do
    if type(p) == "string" then
      out[i] = p
    else
      local f = VARS[p.v]
      local v
      if f then v = f() else v = ngx.var[p.v] end
      v = v or ""
      if encode then v = encode(tostring(v), p.v) end
      out[i] = v
    end
  end
  return table.concat(out)
end

-- For a URL (redirect, sign-in): everything but printable ASCII percent-encoded; the already escaped ones as they are.
local function url_safe(v, name)
  if name == "escaped_request_uri" or name == "rd" then return v end
  return header_safe(v)
end

-- For a header value of auth-proxy-set-headers: control characters percent-encoded (a value can never end the header
-- line); spaces stay, as nginx's proxy_set_header sends them.
local function control_safe(v)
  return (v:gsub("[%c\127-\255]", function(c) return string.format("%%%02X", c:byte()) end))
end

-- Characters a variable's value may bring into the auth URL as they are: in the path, and in the query.
local PATH_ENCODE = "[^%w%-%._~!%$&'%(%)%*%+,;=:@/%%]"
local QUERY_ENCODE = "[^%w%-%._~!%$&'%(%)%*%+,;=:@/%%?]"
local function pct(c) return string.format("%%%02X", c:byte()) end

-- The auth URL's path and query, its variables filled from the request (percent-encoded as above; "?" too in the
-- path, so a value can never start the query).
local function auth_uri(parts)
  local out, in_query = {}, false
  for i, p in ipairs(parts) do
    if type(p) == "string" then
      out[i] = p
      if p:find("?", 1, true) then in_query = true end
    else
      local f = VARS[p.v]
      local v
      if f then v = f() else v = ngx.var[p.v] end
      out[i] = (tostring(v or ""):gsub(in_query and QUERY_ENCODE or PATH_ENCODE, pct))
    end
  end
  return table.concat(out)
end

-- The backend of the route the request's own host serves `path` with, or nil and why not.
local function own_route(self, path)
  local host = ngx.var.host or ""
  local r, root = require("portico.router").lookup(host, path)
  if not r then return nil, "host " .. host .. " has no route for " .. path end
  -- Only the host's "/" would answer: that is the application, not an auth service (ingress-nginx users give the
  -- auth service a route of its own, an Ingress for /oauth2); a 200 from it must not let requests through.
  if root then return nil, "host " .. host .. " has no route for " .. path .. " but its catch-all \"/\"" end
  local id = r.backend
  if type(id) ~= "string" or r.jump == "@portico_503" or r.jump == "@portico_404" then
    return nil, "the route of host " .. host .. " for " .. path .. " has no backend"
  end
  if r.plugins then
    local get, by_name = require("portico.store").get_plugin, require("portico.plugins.registry").by_name
    for pid in r.plugins:gmatch("[^,]+") do
      local conf = get(pid)
      local mod = conf and by_name[conf.type]
      if not mod or mod.auth then
        return nil, "the route of host " .. host .. " for " .. path .. " requires authentication itself (it would loop)"
      end
    end
  end
  local ns = self.namespace
  if ns and id:sub(1, #ns + 1) ~= ns .. "_" then
    return nil, "the route of host " .. host .. " for " .. path .. " is another namespace's (allow-cross-namespace-auth is off)"
  end
  return id
end

-- The subrequest's options: the instance's, or — with variables in the auth URL or on the request's own host — a
-- copy for this request. nil and why when the request's own host has no usable route for the auth path.
local function capture_opts(self)
  local opts = self.opts
  if not self.uri and not self.own_host then return opts end
  local vars = {}
  for k, v in pairs(opts.vars) do vars[k] = v end
  if self.uri then vars.portico_auth_uri = auth_uri(self.uri) end
  if self.own_host then
    local id, why = own_route(self, vars.portico_auth_uri:match("^[^?]*"))
    if not id then return nil, why end
    vars.portico_auth_backend = id
  end
  return { method = opts.method, vars = vars }
end

local function prepare_nginx(self)
  local change, saved = header_changer()
  local var = ngx.var
  local method = ngx.req.get_method()
  change("X-Original-URL", var.scheme .. "://" .. (var.http_host or var.host or "") .. (var.request_uri or ""))
  change("X-Original-Method", method)
  change("X-Sent-From", "nginx-ingress-controller")
  change("X-Real-IP", var.remote_addr)
  change("X-Forwarded-For", var.remote_addr)
  -- On the request's own host the auth service sees what a request through the load balancer would bring: the
  -- auth URL's scheme and the host (the hop itself is plain HTTP inside Portico).
  change("X-Forwarded-Proto", self.own_host and self.scheme or nil)
  if self.own_host then change("X-Forwarded-Host", var.host) end
  if var.http_x_forwarded_host then change("X-Forwarded-Host", var.portico_forwarded_host or var.host) end
  if var.http_x_forwarded_port then change("X-Forwarded-Port", var.portico_forwarded_port) end
  change("X-Auth-Request-Redirect", self.redirect and eval(self.redirect, url_safe) or var.request_uri)
  if self.explicit_method then
    change("X-Original-URI", var.request_uri)
    change("X-Scheme", scheme())
  end
  -- The request's X-Request-ID (the subrequest's own variables would generate another one).
  change("X-Request-ID", var.req_id)
  -- auth-proxy-set-headers: the ConfigMap's headers, last (as ingress-nginx's proxy_set_header lines after its own).
  local set = self.set_headers
  if set then
    for i = 1, #set do change(set[i].name, eval(set[i].value, control_safe)) end
  end
  -- auth-snippet, compiled (set, if, proxy_set_header, more_set/clear_input_headers): after those, as ingress-nginx
  -- pastes it after them into the auth location.
  if self.snippet then require("portico.plugins.snippet").run_auth(self.snippet, change) end
  return saved
end

local function cache_key(self)
  local text = eval(self.cache_key)
  return self.cache_prefix .. (ngx.var.host or "") .. ":" .. ngx.encode_base64(ngx.sha1_bin(text))
end

-- As nginx's proxy_cache: an answer that sets a cookie, says not to be stored, or varies on everything is not kept.
local function cacheable(h)
  if h["set-cookie"] ~= nil then return false end
  local cc = h["cache-control"]
  if type(cc) == "table" then cc = table.concat(cc, ",") end
  if cc and (cc:lower():find("no%-store") or cc:lower():find("no%-cache") or cc:lower():find("private") or cc:lower():find("max%-age=0")) then return false end
  local vary = h["vary"]
  if type(vary) == "table" then vary = table.concat(vary, ",") end
  return not (vary and vary:find("*", 1, true))
end

local function ttl_of(self, status)
  local t = self.ttl[tostring(status)]
  if t then return t end
  if status >= 500 and status <= 504 then return nil end -- nginx's own answers (no auth service reached)
  return self.ttl.any
end

local function access_nginx(self, ctx)
  local status, h, key
  local dict = self.cache_key and ngx.shared.portico_auth_cache
  if dict then
    key = cache_key(self)
    local v = dict:get(key)
    local c = v and cjson.decode(v)
    if type(c) == "table" and type(c.s) == "number" and type(c.h) == "table" then status, h = c.s, c.h end
  end
  if not status then
    local opts, why = capture_opts(self)
    if not opts then
      util.log_every("external-auth:own:" .. self.name .. ":" .. (ngx.var.host or ""), ngx.ERR, "portico: external-auth ",
        self.name, ": auth URL on the request's own host: ", why, "; answering 500")
      return util.deny(500)
    end
    local saved = prepare_nginx(self)
    local res = ngx.location.capture("/_portico_internal/auth", opts)
    restore(saved)
    status = res and res.status or 0
    h = lower_headers(res and res.header)
    if key and status > 0 then
      local ttl = cacheable(h) and ttl_of(self, status)
      if ttl then
        local keep = { ["set-cookie"] = h["set-cookie"], ["www-authenticate"] = h["www-authenticate"] }
        for _, name in ipairs(self.upstream) do keep[name] = h[name] end
        local ok, err = dict:set(key, cjson.encode({ s = status, h = keep }), ttl)
        if not ok then util.log_every("auth-cache", ngx.WARN, "portico: auth cache: ", err) end
      end
    end
  end
  local cookie = h["set-cookie"]
  if status >= 200 and status < 300 then
    for _, name in ipairs(self.upstream) do
      local v = h[name]
      if v ~= nil then ngx.req.set_header(name, v) else ngx.req.clear_header(name) end
    end
    if cookie ~= nil then ctx.portico_auth_cookie = cookie end
    return false
  end
  if status == 401 then
    if self.signin then
      return util.deny(302, { ["Location"] = eval(self.signin, url_safe), ["Set-Cookie"] = cookie }, "Found")
    end
    return util.deny(401, { ["WWW-Authenticate"] = h["www-authenticate"], ["Set-Cookie"] = self.always and cookie or nil })
  end
  if status == 403 then return util.deny(403, { ["Set-Cookie"] = self.always and cookie or nil }) end
  local why = status == 0 and "no answer" or status == 504 and "timed out (504)" or status == 502 and "cannot be reached (502)"
    or ("it answered " .. status)
  util.log_every("external-auth:" .. self.backend .. ":" .. status, ngx.ERR, "portico: external-auth ", self.name,
    ": auth service ", self.backend, " ", why, "; answering 500")
  return util.deny(500)
end

-- The auth response's Set-Cookie, added to the answer (add_header Set-Cookie, as ingress-nginx).
local function header_filter_nginx(self, ctx)
  local c = ctx.portico_auth_cookie
  if c == nil or not (self.always or COOKIE_STATUSES[ngx.status]) then return end
  local cur = ngx.header["Set-Cookie"]
  local out = {}
  if type(cur) == "table" then for _, v in ipairs(cur) do out[#out + 1] = v end elseif cur ~= nil then out[1] = cur end
  if type(c) == "table" then for _, v in ipairs(c) do out[#out + 1] = v end else out[#out + 1] = c end
  ngx.header["Set-Cookie"] = out
end

local function new_nginx(conf, n)
  local t = n.timeouts or {}
  local tk = string.format("%.3f %.3f %.3f", t.connect or 5, t.send or 60, t.read or 60)
  local ttl
  if n.cache then
    ttl = {}
    for k, v in pairs(n.cache.ttl or {}) do ttl[k] = v end
  end
  return {
    name = conf.name or "",
    backend = conf.backendId,
    upstream = conf.upstreamHeaders or {},
    explicit_method = n.method ~= nil,
    redirect = n.requestRedirect,
    set_headers = n.setHeaders,
    snippet = n.snippet,
    signin = n.signin,
    always = n.alwaysSetCookie == true,
    cache_key = n.cache and n.cache.key,
    ttl = ttl,
    uri = n.uri,
    own_host = n.ownHost == true,
    scheme = n.scheme,
    namespace = n.namespace,
    opts = {
      method = ngx.HTTP_GET,
      vars = {
        portico_auth_backend = conf.backendId,
        portico_auth_timeouts = tk,
        portico_auth_uri = conf.path,
        portico_auth_method = n.method or "GET",
        portico_auth_scheme = n.ownHost == true and "http" or n.scheme,
        portico_auth_host = n.host or "",
      },
    },
    access = access_nginx,
    header_filter = header_filter_nginx,
  }
end

function _M.new(conf, id)
  if type(conf.ingressNginx) == "table" then
    local inst = new_nginx(conf, conf.ingressNginx)
    inst.cache_prefix = tostring(id or conf.name) .. ":"
    return inst
  end
  local t = string.format("%.3f", (conf.timeoutMs or 5000) / 1000)
  local forward
  if conf.forwardHeaders and #conf.forwardHeaders > 0 then
    forward = {}
    for _, n in ipairs(conf.forwardHeaders) do forward[n:lower()] = true end
  end
  local method = conf.method or "GET"
  return {
    name = conf.name or "",
    backend = conf.backendId,
    forward = forward,
    upstream = conf.upstreamHeaders or {},
    client = conf.clientHeaders or {},
    -- $portico_auth_* are copied into $portico_backend/$portico_timeouts by the internal location (the server's
    -- own `set`s run again for a subrequest and would clear values passed under those names).
    opts = {
      method = ngx["HTTP_" .. method],
      vars = {
        portico_auth_backend = conf.backendId,
        portico_auth_timeouts = t .. " " .. t .. " " .. t,
        portico_auth_uri = conf.path,
        portico_auth_method = method,
        portico_auth_scheme = "http",
      },
    },
    access = access,
    prefix = type(conf.gatewayApi) == "table" and conf.path or nil,
    all_upstream = type(conf.gatewayApi) == "table" and conf.gatewayApi.allUpstreamHeaders == true or nil,
  }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_int, is_array, array_of, header_name, timeout = C.str, C.is_int, C.is_array, C.array_of, C.header_name, C.timeout
local FRAMING, REQUEST_ONLY = C.FRAMING, C.REQUEST_ONLY

-- external-auth's ingress-nginx mode (auth-url): templates are literal text and variables of an allowlist.
local REDIRECT_VARS = { scheme = true, host = true, http_host = true, request_uri = true, escaped_request_uri = true,
  uri = true, rd = true }
local KEY_VARS = { remote_user = true, remote_addr = true, host = true, http_host = true, request_uri = true, uri = true,
  scheme = true, request_method = true }
-- Variables of the auth URL's path and query (auth-url.ts URL_VARS).
local URI_VARS = { scheme = true, host = true, http_host = true, request_uri = true, escaped_request_uri = true, uri = true,
  args = true, query_string = true, is_args = true, request_method = true, remote_addr = true }
local function uri_var(v)
  return (v:match("^arg_[%w_]+$") or v:match("^http_[a-z0-9_]+$") or v:match("^cookie_[%w_]+$")) ~= nil and #v <= 70
end
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
  if n.ownHost ~= nil and n.ownHost ~= true then return "ingressNginx.ownHost must be true" end
  if n.ownHost then
    if n.host ~= nil and n.host ~= "" then return "ingressNginx.host must be empty with ownHost" end
    if n.namespace ~= nil and C.namespace(n.namespace) then return "invalid ingressNginx.namespace" end
  elseif not str(n.host, 253, "^[%w.:-]+$") then
    return "invalid ingressNginx.host"
  elseif n.namespace ~= nil then
    return "ingressNginx.namespace needs ownHost"
  end
  if n.uri ~= nil and not template(n.uri, function(v) return URI_VARS[v] == true or uri_var(v) end) then return "invalid ingressNginx.uri" end
  if n.uri ~= nil and n.ownHost then
    -- On the request's own host the path picks the route: literal, variables only in the query.
    local in_query = false
    for _, p in ipairs(n.uri) do
      if type(p) == "string" then in_query = in_query or p:find("?", 1, true) ~= nil elseif not in_query then return "ingressNginx.uri: variables in the path with ownHost" end
    end
  end
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
  if n.snippet ~= nil then
    local err = require("portico.plugins.snippet").check_auth(n.snippet)
    if err then return "ingressNginx.snippet: " .. err end
  end
end

-- The external-auth fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  local err = C.backend_id(p.backendId)
  if err then return err end
  if p.gatewayApi ~= nil then
    if type(p.gatewayApi) ~= "table" or type(p.gatewayApi.allUpstreamHeaders) ~= "boolean" then return "invalid gatewayApi" end
    if p.ingressNginx ~= nil then return "gatewayApi and ingressNginx exclude each other" end
    -- The path is a prefix of the client's path here: "" (none), or a path without "?".
    if p.path ~= "" and not str(p.path, 1024, "^/[%w%-%._~!%$&'%(%)%*%+,;=:@/%%]*$") then return "invalid path" end
  elseif not str(p.path, 2048, "^/[%w%-%._~!%$&'%(%)%*%+,;=:@/%%?]*$") then
    return "invalid path"
  end
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
end

return _M
