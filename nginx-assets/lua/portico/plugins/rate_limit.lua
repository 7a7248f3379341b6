-- rate-limit: GCRA (a leaky bucket kept as one "theoretical arrival time" per key) in the shared dict
-- portico_limits, so every worker of this nginx counts together. Semantics are nginx limit_req's with nodelay:
-- a new client may send 1 + `burst` requests at once, then one every periodSeconds / rate seconds (`rate` per
-- period sustained); a request over the limit gets `status` (429) and Retry-After: the whole seconds (at least 1)
-- until one more request would be allowed. Limits are per node, not per cluster.
--
-- Key: "<plugin key>:i:<client address>", ":c:<namespace>/<consumer user name>" (by=consumer, once an auth plugin
-- identified one; else by address), or ":h:<header value>" (by=header; long values hashed; a request without the
-- header is counted by address). Entries expire once the bucket has drained; when the zone is full, `set` evicts
-- the least recently used counters (forgetting an idle client is the right loss here).
--
-- Race: the read and the write of a key are two operations, so requests arriving in different workers at the
-- same instant can read the same value and both pass: at most one extra request per other worker at any moment,
-- never a lasting overshoot (the next request sees the later value).
--
-- policy "redis" (ingress-nginx's global-rate-limit; a Plugin's `policy: redis`): counters shared by every nginx of
-- every Portico replica, in Redis, with ingress-nginx's algorithm (lua-resty-global-throttle's approximate sliding
-- window): per key, one counter per window of `windowSeconds` (Redis key "portico:rl:<plugin key>:<sample>:<window
-- number>", expiring after two windows); a request is let through while
--   previous window's count × (time left in this window / window) + this window's count before it  <  limit,
-- and a refused request is not counted. One round trip per request: GET (previous) + INCR + EXPIRE (current),
-- pipelined on a pooled connection (portico/redis.lua); a refusal costs a second one (DECR) and is remembered in
-- portico_limits until the estimate could fall below the limit, so a client over its limit costs Redis nothing
-- meanwhile (ingress-nginx's decision cache). The answer: `status` (the ConfigMap's global-rate-limit-status-code,
-- 429) with Retry-After. Redis unreachable, slow (timeoutMs) or answering an error: the request is let through
-- (failOpen, the default, as ingress-nginx) or answered 503; either way counted (portico_stats "grl:open" /
-- "grl:closed": the portico_global_rate_limit_store_failures metric) and logged at most every 10 s per plugin.
-- The sample: the client address, consumer or header as above, or (by=key, ingress-nginx's global-rate-limit-key)
-- text and allowlisted nginx variables, "" → the client address; a sample of more than 64 bytes is hashed.
-- Such a plugin needs cosockets: `async`, it runs in the plugin location's access phase (plugins.lua).
local crypto = require("portico.plugins.crypto")
local ip_restriction = require("portico.plugins.ip_restriction")
local util = require("portico.plugins.util")
local redis = require("portico.redis")
local shm = require("portico.shm")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "rate-limit"
_M.order = 8

local ceil, floor = math.ceil, math.floor
local concat = table.concat

-- by=key: the template's text and variables (an absent variable is ""), as ingress-nginx's global-rate-limit-key.
local function template_value(parts)
  local out = {}
  local var = ngx.var
  for i = 1, #parts do
    local p = parts[i]
    if type(p) == "string" then out[i] = p else out[i] = var[p.v] or "" end
  end
  return concat(out)
end

local function ident(self, ctx)
  local by = self.by
  if by == "key" then
    local v = template_value(self.template)
    if v ~= "" then return "k:" .. v end
  elseif by == "consumer" then
    local c = ctx.portico_consumer
    if c then
      -- Built once per consumer record (dropped with it when consumers change).
      local k = c.rate_key
      if not k then
        k = "c:" .. c.ns .. "/" .. c.username
        c.rate_key = k
      end
      return k
    end
  elseif by == "header" then
    local v = ngx.var[self.header_var]
    if v and v ~= "" then
      if #v > 64 then return "h#" .. crypto.sha256_hex(v) end
      return "h:" .. v
    end
  end
  return "i:" .. (ngx.var.remote_addr or "")
end

-- Takes one request from the bucket of `key`; returns nil when allowed, else the seconds to wait.
function _M.take(self, key)
  local dict = ngx.shared.portico_limits
  local now = ngx.now()
  local tat = dict:get(key)
  if not tat or tat < now then tat = now end
  local ahead = tat - now
  if ahead > self.tau + 1e-9 then
    local wait = ceil(ahead - self.tau - 1e-9)
    return wait < 1 and 1 or wait
  end
  local new = tat + self.interval
  local ok, err = dict:set(key, new, ceil(new - now) + 1)
  if not ok then
    util.log_every("rate-limit:set", ngx.ERR, "portico: rate-limit ", self.name, ": cannot store a counter: ", tostring(err))
  end
  return nil
end

local function access(self, ctx)
  if self.exempt and ip_restriction.allowed(self.exempt, ngx.var.remote_addr) then return false end
  local wait = _M.take(self, self.prefix .. ident(self, ctx))
  if not wait then return false end
  return util.deny(self.status, { ["Retry-After"] = tostring(wait) })
end

-- ---- policy "redis" ----

-- The approximate sliding window: prev = the previous window's count, count = this window's count including this
-- request, `elapsed` seconds into a window of `window` seconds. nil when the request may pass, else the seconds
-- until the estimate could be below the limit again (at most the rest of this window).
function _M.sliding(prev, count, limit, window, elapsed)
  local rem = window - elapsed
  local before = count - 1
  if prev * rem / window + before < limit then return nil end
  local delay = rem
  if before < limit and prev > 0 then delay = rem - (limit - before) * window / prev end
  if delay > rem then delay = rem end
  if delay < 0.001 then delay = 0.001 end
  return delay
end

-- Redis could not be asked: counted, logged (at most every 10 s per plugin), and the request let through or not.
local function store_failed(self, why)
  shm.count(self.fail_open and "grl:open" or "grl:closed")
  util.log_every("rate-limit:redis:" .. self.rkey, ngx.ERR, "portico: rate-limit ", self.name, ": Redis unavailable (",
    why, "); ", self.fail_open and "letting requests through (fail open)" or "answering 503 (fail closed)")
  return false, true
end

local function int_of(v)
  if type(v) == "number" then return v end
  if type(v) == "string" then return tonumber(v) end
  return nil
end

-- Counts one request of `sample` in Redis. Returns nil when it may pass, the seconds to wait when refused, or
-- false, true when Redis could not be asked.
function _M.take_redis(self, sample)
  local dict = ngx.shared.portico_limits
  local now = ngx.now()
  local ckey = self.prefix .. "g:" .. sample
  local until_t = dict:get(ckey)
  if until_t and until_t > now then return until_t - now end
  local conf = self.redis
  if not conf then return store_failed(self, "no Redis is configured: the ConfigMap's global-rate-limit-redis-host") end
  local w = self.window
  local n = floor(now / w)
  local base = self.rkey .. sample .. ":"
  local cur = base .. n
  local replies, err = redis.pipeline(conf, { { "GET", base .. (n - 1) }, { "INCR", cur }, { "EXPIRE", cur, w * 2 } })
  if not replies then return store_failed(self, err) end
  local count = int_of(replies[2])
  if not count then
    local r = replies[2]
    return store_failed(self, "INCR answered " .. tostring(type(r) == "table" and r.err or r))
  end
  local prev = replies[1]
  prev = prev == redis.null and 0 or int_of(prev) or 0
  local delay = _M.sliding(prev, count, self.limit, w, now - n * w)
  if not delay then return nil end
  -- Refused: not counted (as ingress-nginx, which increments only what it lets through).
  local ok, e = redis.pipeline(conf, { { "DECR", cur } })
  if not ok then ngx.log(ngx.INFO, "portico: rate-limit ", self.name, ": DECR after a refusal failed: ", tostring(e)) end
  if delay > 0.001 then dict:set(ckey, now + delay, delay) end
  return delay
end

local function access_redis(self, ctx)
  if self.exempt and ip_restriction.allowed(self.exempt, ngx.var.remote_addr) then return false end
  local sample = ident(self, ctx)
  if #sample > 64 then sample = "#" .. crypto.sha256_hex(sample) end
  local wait, failed = _M.take_redis(self, sample)
  if failed then
    if self.fail_open then return false end
    return util.deny(503)
  end
  if not wait then return false end
  return util.deny(self.status, { ["Retry-After"] = tostring(ceil(wait)) })
end

function _M.new(conf, id)
  local exempt = (type(conf.exempt) == "table" and #conf.exempt > 0) and ip_restriction.new({ allow = conf.exempt }) or nil
  if conf.policy == "redis" then
    local key = conf.key or id
    return {
      name = conf.name or "",
      prefix = key .. ":",
      rkey = "portico:rl:" .. key .. ":",
      async = true, -- cosockets: the access phase, never the router's set_by_lua
      limit = conf.limit,
      window = conf.windowSeconds,
      by = conf.by or "ip",
      header_var = conf.header and util.header_var(conf.header) or nil,
      template = conf.keyTemplate or {},
      status = conf.status or 429,
      exempt = exempt,
      redis = conf.redis,
      fail_open = conf.failOpen ~= false,
      access = access_redis,
    }
  end
  local interval = conf.periodSeconds / conf.rate
  return {
    name = conf.name or "",
    prefix = (conf.key or id) .. ":",
    interval = interval,
    tau = (conf.burst or 0) * interval,
    by = conf.by or "ip",
    header_var = conf.header and util.header_var(conf.header) or nil,
    status = conf.status or 429,
    -- Clients never limited (ingress-nginx's limit-whitelist): an allow-list matcher over these CIDRs.
    exempt = exempt,
    access = access,
  }
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_int, header_name, refusal_status = C.str, C.is_int, C.header_name, C.refusal_status

-- Variables a key template may read (reconcilers/config/plugins/rate-limit.ts KEY_VARIABLES): request data only,
-- nothing that reads the body, calls out or changes per request by itself.
local KEY_VARS = { remote_addr = true, binary_remote_addr = true, realip_remote_addr = true, remote_user = true,
  host = true, server_name = true, server_port = true, scheme = true, request_method = true, uri = true,
  request_uri = true, args = true, ssl_client_s_dn = true, ssl_client_fingerprint = true }
function _M.key_variable(name)
  if type(name) ~= "string" or #name > 64 then return false end
  return KEY_VARS[name] == true or name:match("^http_[a-z0-9_]+$") ~= nil or name:match("^cookie_[%w_]+$") ~= nil
    or name:match("^arg_[%w_]+$") ~= nil
end
local LITERAL = "^[%w%-%._:/@,;=+]+$"

local function check_redis(p)
  if not is_int(p.limit, 1, 1000000000) then return "limit must be 1-1000000000" end
  if not is_int(p.windowSeconds, 1, 604800) then return "windowSeconds must be 1-604800" end
  if p.by ~= "ip" and p.by ~= "consumer" and p.by ~= "header" and p.by ~= "key" then return "by must be ip, consumer, header or key" end
  if p.by == "header" and not header_name(p.header) then return "by=header needs a header name" end
  if p.by == "key" then
    if not C.array_of(p.keyTemplate, 16, function(x)
      if type(x) == "string" then return str(x, 64, LITERAL) end
      return type(x) == "table" and _M.key_variable(x.v)
    end) or #p.keyTemplate == 0 then return "by=key needs keyTemplate: at most 16 parts, text or allowed variables" end
  elseif p.keyTemplate ~= nil then return "keyTemplate only with by=key" end
  if type(p.failOpen) ~= "boolean" then return "failOpen must be a boolean" end
  local r = p.redis
  if r ~= nil then
    if type(r) ~= "table" then return "invalid redis" end
    if not str(r.host, 45, "^[%x.:]+$") then return "redis.host must be an IP address" end
    if not is_int(r.port, 1, 65535) then return "redis.port must be 1-65535" end
    if not is_int(r.timeoutMs, 1, 60000) then return "redis.timeoutMs must be 1-60000" end
    if not is_int(r.poolSize, 1, 10000) then return "redis.poolSize must be 1-10000" end
    if not is_int(r.idleMs, 1, 3600000) then return "redis.idleMs must be 1-3600000" end
  end
  if not refusal_status(p.status) then return "status must be 400-599" end
  if not str(p.key, 253, C.PLUGIN_ID) then return "invalid key" end
  if p.exempt ~= nil then return ip_restriction.cidr_list(p.exempt, "exempt") end
end

-- The rate-limit fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if p.policy == "redis" then return check_redis(p) end
  if p.policy ~= nil then return "policy must be redis or absent" end
  if not is_int(p.rate, 1, 1000000) then return "rate must be 1-1000000" end
  if p.periodSeconds ~= 1 and p.periodSeconds ~= 60 then return "periodSeconds must be 1 or 60" end
  if p.burst ~= nil and not is_int(p.burst, 0, 1000000) then return "burst must be 0-1000000" end
  if p.by ~= nil and p.by ~= "ip" and p.by ~= "consumer" and p.by ~= "header" then return "by must be ip, consumer or header" end
  if p.by == "header" and not header_name(p.header) then return "by=header needs a header name" end
  if p.header ~= nil and not header_name(p.header) then return "invalid header" end
  if not refusal_status(p.status) then return "status must be 400-599" end
  if not str(p.key, 253, C.PLUGIN_ID) then return "invalid key" end
  if p.exempt ~= nil then return ip_restriction.cidr_list(p.exempt, "exempt") end
end

return _M
