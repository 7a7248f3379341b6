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
local util = require("portico.plugins.util")

local _M = {}

local function header_list(v)
  if type(v) == "table" then return v end
  return { v }
end

-- Changes the request headers the subrequest will copy; returns what to put back.
local function prepare(self)
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

local function access(self)
  local saved = prepare(self)
  local res = ngx.location.capture("/_portico_internal/auth", self.opts)
  restore(saved)
  local status = res and res.status or 0
  if status >= 200 and status < 300 then
    if #self.upstream > 0 then
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

function _M.new(conf)
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
      },
    },
    access = access,
  }
end

return _M
